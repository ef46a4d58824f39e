// Communities stored now: what a run compares its new partition with (same id = same level and members), how many
// leaf members each holds now (an entity deleted and written again has lost its IN_COMMUNITY edge while the
// entity graph, and so the partition, may be the same), and whether its report cites a chunk that no longer
// exists (retrieval withdraws such a report; the run rewrites it).
MATCH (c:Community)
OPTIONAL MATCH (c)<-[:IN_COMMUNITY]-(e:Entity)
WITH c, count(e) AS leaf_members
UNWIND CASE WHEN size(coalesce(c.chunk_ids, [])) = 0 THEN [null] ELSE c.chunk_ids END AS cited_id
OPTIONAL MATCH (cited:Chunk {id: cited_id})
WITH c, leaf_members, count(cited_id) AS cites, count(cited) AS found
RETURN c.id AS id, c.level AS level, c.size AS size, c.report_fingerprint AS report_fingerprint,
       leaf_members, found < cites AS cites_deleted
