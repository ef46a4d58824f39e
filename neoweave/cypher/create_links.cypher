// Authored hyperlinks between sections, with the link text and its surrounding context (LARAG).
// @param rows: LIST  [{source_id, target_id, order, url, anchor, text, context, start}]  start: the link text's
//   offset in its section's text (LARAG's paper profile finds a chunk's own links by it)
UNWIND $rows AS row
MATCH (source:Section {id: row.source_id})
MATCH (target:Section {id: row.target_id})
MERGE (source)-[l:LINKS_TO {order: row.order}]->(target)
SET l.url = row.url, l.anchor = row.anchor, l.text = row.text, l.context = row.context, l.start = row.start,
    l.method = 'authored'
