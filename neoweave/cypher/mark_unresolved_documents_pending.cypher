// After new documents arrive, documents with unresolved links try again (their targets may exist now).
MATCH (d:Document)
WHERE d.links_unresolved > 0 AND d.links_pending = false
SET d.links_pending = true
RETURN count(d) AS marked
