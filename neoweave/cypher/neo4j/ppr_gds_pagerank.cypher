// ppr with engine 'gds': personalized PageRank over the projected subgraph, the seeds as weighted source nodes
// ([node, bias] pairs), edges weighted like the Python walk's. `node` is the index given at projection.
// @param graph_name: STRING  the projection of `ppr_gds_project`
// @param source_nodes: LIST  [[node index, restart weight]]
// @param damping: FLOAT  probability of following an edge
// @param tolerance: FLOAT  convergence threshold
// @param max_iterations: INTEGER  iteration cap
CALL gds.pageRank.stream($graph_name, {sourceNodes: $source_nodes, dampingFactor: $damping,
                                       relationshipWeightProperty: 'weight', tolerance: $tolerance,
                                       maxIterations: $max_iterations})
YIELD nodeId, score
RETURN nodeId AS node, score
