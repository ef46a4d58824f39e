// How many links links_missing_context_embedding_batch will return in all (the total of the progress bar).
MATCH (:Section)-[l:LINKS_TO]->(:Section)
WHERE l.context_embedding IS NULL
RETURN count(l) AS missing
