// ppr with engine 'gds': drop the walk's projection (no error if it is already gone).
// @param graph_name: STRING  the projection of `ppr_gds_project`
CALL gds.graph.drop($graph_name, false) YIELD graphName
RETURN graphName AS graph_name
