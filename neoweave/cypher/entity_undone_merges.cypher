// The merges a user undid (`neoweave entities unmerge`): resolution never proposes these pairs again.
MATCH (m:EntityMerge)
WHERE m.status = 'undone'
RETURN m.survivor_id AS survivor_id, m.absorbed_id AS absorbed_id
