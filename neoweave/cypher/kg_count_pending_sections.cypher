// How many sections wait for their inferred links (the total of the progress bar).
MATCH (s:Section)
WHERE s.inferred_pending = true
RETURN count(s) AS pending
