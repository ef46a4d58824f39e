// Walk index build: one page of entities in key order with mention and relation counts, type, the fingerprint of
// their embedding (see walk_index_chunks; null without one) and the sections that describe them (DESCRIBED_BY).
// @param after: STRING  the last key of the previous page ('' for the first)
// @param limit: INTEGER  page size
// @param probe: VECTOR  the fixed unit vector fingerprints are taken against
MATCH (e:Entity)
WHERE {{key_after e.id $after}}
WITH e ORDER BY e.id LIMIT $limit
// the probe bound once, after the page is chosen (before the MATCH, the label was scanned per row)
WITH collect(e) AS page, {{vector $probe}} AS probe
UNWIND page AS e
OPTIONAL MATCH (e)-[:DESCRIBED_BY]->(h:Section)
WITH e, probe, collect(h.id) AS homes
RETURN e.id AS key, e.mention_count AS mentions, e.relation_count AS relations, e.type AS type,
       {{cosine e.embedding probe}} AS fingerprint, homes
ORDER BY key
