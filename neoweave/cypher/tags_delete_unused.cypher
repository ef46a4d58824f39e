// Tags that nothing carries any more: their last TAGGED edge went with a deleted chunk or document, or was
// replaced by re-tagging. Run after chunks or documents are deleted and after tagging; a tag is a name for
// what it is on, and a rebuild would not create it.
MATCH (t:Tag)
WHERE NOT (t)<-[:TAGGED]-()
DELETE t
