// Large documents a stopped run left partly written (ingest or sync of their file again completes them).
MATCH (d:Document)
WHERE d.incomplete_hash IS NOT NULL
RETURN d.id AS id, d.source AS source, d.path AS path, d.sections_written AS sections_written,
       d.sections_total AS sections_total
ORDER BY id
