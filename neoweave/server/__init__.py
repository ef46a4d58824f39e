"""The HTTP API and web page (`neoweave serve`); needs the `serve` extra (FastAPI, uvicorn)."""
