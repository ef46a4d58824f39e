// explain: the nodes of a retrieval's trace with what a view shows of them (label, caption, text, place), looked
// up by id under each label the trace can hold; tags by name. Embeddings are never returned.
// @param ids: LIST  node ids from the trace (chunks, sections, documents, entities, communities)
// @param tags: LIST  tag names from the trace
UNWIND $ids AS node_id
MATCH (c:Chunk {id: node_id})
RETURN 'Chunk' AS label, c.id AS id, coalesce(c.main_idea, '') AS caption, c.text AS text, c.doc_id AS doc_id,
       c.section_id AS section_id, coalesce(c.paragraph_type, '') AS kind, c.order AS order
UNION ALL
UNWIND $ids AS node_id
MATCH (s:Section {id: node_id})
RETURN 'Section' AS label, s.id AS id, coalesce(s.title, '') AS caption, coalesce(s.url, '') AS text,
       s.doc_id AS doc_id, s.id AS section_id, '' AS kind, s.order AS order
UNION ALL
UNWIND $ids AS node_id
MATCH (d:Document {id: node_id})
RETURN 'Document' AS label, d.id AS id, coalesce(d.title, '') AS caption, coalesce(d.url, d.path, '') AS text,
       d.id AS doc_id, null AS section_id, coalesce(d.format, '') AS kind, null AS order
UNION ALL
UNWIND $ids AS node_id
MATCH (e:Entity {id: node_id})
RETURN 'Entity' AS label, e.id AS id, coalesce(e.name, e.id) AS caption, coalesce(e.description, '') AS text,
       null AS doc_id, null AS section_id, coalesce(e.type, '') AS kind, null AS order
UNION ALL
UNWIND $ids AS node_id
MATCH (m:Community {id: node_id})
RETURN 'Community' AS label, m.id AS id, coalesce(m.title, m.id) AS caption, coalesce(m.summary, '') AS text,
       null AS doc_id, null AS section_id, 'level ' + toString(m.level) AS kind, null AS order
UNION ALL
UNWIND $tags AS tag_name
MATCH (t:Tag {name: tag_name})
RETURN 'Tag' AS label, t.name AS id, t.name AS caption, '' AS text, null AS doc_id, null AS section_id,
       '' AS kind, null AS order
