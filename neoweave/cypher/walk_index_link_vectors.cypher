// Walk index build: every link out of these sections with its context embedding and that embedding's
// fingerprint (see walk_index_chunks), for sections with a link the index does not hold yet.
// @param section_ids: LIST  source section ids
// @param probe: VECTOR  the fixed unit vector fingerprints are taken against
WITH {{vector $probe}} AS probe
UNWIND $section_ids AS section_id
MATCH (s:Section {id: section_id})-[l:LINKS_TO]->(t:Section)
RETURN s.id AS key, t.id AS target_id, l.method AS method, {{cosine l.context_embedding probe}} AS fingerprint,
       l.context_embedding AS embedding
