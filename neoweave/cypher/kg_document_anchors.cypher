// Element ids of documentation pages (API anchors such as 'asyncio.create_task') and their sections.
MATCH (d:Document)
WHERE d.anchors_json IS NOT NULL
RETURN d.id AS doc_id, d.anchors_json AS anchors_json
