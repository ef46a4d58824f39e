// Broken links: documents whose hyperlinks lead to pages or anchors that are not in the graph, most first (the
// unresolved targets are kept on each section, in unresolved_links_json).
MATCH (d:Document)
WHERE d.links_unresolved > 0
RETURN d.id AS document, d.title AS title, d.links_unresolved AS unresolved, d.links_resolved AS resolved
ORDER BY unresolved DESC, document
LIMIT 50
