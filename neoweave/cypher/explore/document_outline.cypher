// A document's outline: its sections in reading order and the links each section makes (anchor text on the
// edge), drawn as a graph in Neo4j Browser.
// @param doc_id: STRING  a document id (list some: MATCH (d:Document) RETURN d.id, d.title LIMIT 20)
MATCH (d:Document {id: $doc_id})-[has:HAS_SECTION]->(s:Section)
OPTIONAL MATCH (s)-[link:LINKS_TO]->(target:Section)
RETURN d, has, s, link, target, s.title AS section, link.text AS link_text, target.title AS links_to
ORDER BY s.order, link.order
LIMIT 300
