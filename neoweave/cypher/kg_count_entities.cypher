// The number of entities (the kg step's report): a label count, which both backends answer without a scan.
MATCH (e:Entity)
RETURN count(e) AS count
