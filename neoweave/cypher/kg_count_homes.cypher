// The number of DESCRIBED_BY edges (the kg step's report): a type count, which both backends answer without a
// scan.
MATCH ()-[r:DESCRIBED_BY]->()
RETURN count(r) AS count
