// The number of RELATED edges (the kg step's report): a type count, which both backends answer without a scan.
MATCH ()-[r:RELATED]->()
RETURN count(r) AS count
