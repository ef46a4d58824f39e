// How many chunks kg_title_scan_chunks will page through in one title-scan state (the total of the progress bar).
// @param scanned: BOOLEAN  false: chunks never scanned for titles; true: chunks scanned before (for new titles)
// @param prefix: STRING  the kg step's signature prefix ('kg@')
// @param anchors: LIST  null, or words one of which a chunk's text must contain
MATCH (c:Chunk)
WHERE coalesce(c.titles_scanned, false) = $scanned
  AND any(signature IN coalesce(c.enriched, []) WHERE signature STARTS WITH $prefix)
  AND ($anchors IS NULL OR any(anchor IN $anchors WHERE c.text CONTAINS anchor))
RETURN count(c) AS chunks
