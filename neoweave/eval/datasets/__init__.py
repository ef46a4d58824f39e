"""Converters from the formats the seed papers evaluate on to neoweave's QA file (`qa.jsonl`: id, question,
answer, aliases, evidence, type, optional evidence_text) and corpus (records or a folder of files), so that
`neoweave eval --corpus ... --qa ...` runs each paper's benchmark as downloaded from its public repository:
MultiHop-RAG (the thesis, with its stratified sample), FinanceBench (Orion-RAG), UltraDomain (PankRAG, and the
corpora of KHL-RAG's domain sets), MuSiQue (the multi-hop benchmark of the graph-walk papers). No data ships
with neoweave: each converter reads the files a user downloaded."""
