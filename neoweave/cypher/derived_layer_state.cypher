// Which derived layers were built, for `neoweave sync`'s next steps: every enrich signature recorded on
// chunks with how many chunks carry it, the number of chunks (those without a step's signature are pending
// for it), and the communities by method. One row per (kind, name).
MATCH (c:Chunk)
UNWIND coalesce(c.enriched, []) AS signature
RETURN 'signature' AS kind, signature AS name, count(*) AS count
UNION ALL
MATCH (c:Chunk)
RETURN 'chunks' AS kind, '' AS name, count(c) AS count
UNION ALL
MATCH (m:Community)
RETURN 'communities' AS kind, coalesce(m.method, '') AS name, count(m) AS count
