// ppr with engine 'gds' (Neo4j with the Graph Data Science plugin): the fetched subgraph as an in-memory GDS
// graph, projected from parameters (node indexes into the walk's node list, undirected weighted edges), so no
// stored node is read again. Dropped by `ppr_gds_drop` after the walk.
// @param graph_name: STRING  a fresh name per walk
// @param edges: LIST  [[start index, end index, weight]]
UNWIND $edges AS edge
WITH gds.graph.project($graph_name, edge[0], edge[1], {relationshipProperties: {weight: edge[2]}},
                       {undirectedRelationshipTypes: ['*']}) AS graph
RETURN graph.nodeCount AS nodes, graph.relationshipCount AS relationships
