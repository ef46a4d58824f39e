"""SQLite file in the data directory: the response cache and the log of calls (`neoweave llm usage`)."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    stage TEXT, model TEXT, query TEXT,
    prompt_tokens INTEGER, completion_tokens INTEGER, latency_ms REAL,
    cached INTEGER, retries INTEGER, retry_causes TEXT, tokens_estimated INTEGER, error TEXT, cost_usd REAL
);
"""


class LLMDatabase:
    """Thread-safe access to the cache/call log (one connection, serialised; writes are tiny)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._connection = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        self._connection.execute("PRAGMA journal_mode=WAL")
        self._connection.executescript(_SCHEMA)

    def get_response(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._connection.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put_response(self, key: str, model: str, response: dict[str, Any]) -> None:
        with self._lock, self._connection:
            self._connection.execute(
                "INSERT OR REPLACE INTO responses (key, model, response, created_at) VALUES (?, ?, ?, ?)",
                (key, model, json.dumps(response), time.time()))

    def clear_responses(self) -> int:
        """Forget every cached response (the call log stays); returns how many there were."""
        with self._lock, self._connection:
            return self._connection.execute("DELETE FROM responses").rowcount

    def record_call(self, call: dict[str, Any]) -> None:
        with self._lock, self._connection:
            self._connection.execute(
                "INSERT INTO calls (at, stage, model, query, prompt_tokens, completion_tokens, latency_ms, cached, "
                "retries, retry_causes, tokens_estimated, error, cost_usd) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (time.time(), call["stage"], call["model"], call["query"], call["prompt_tokens"],
                 call["completion_tokens"], call["latency_ms"], int(call["cached"]), call["retries"],
                 json.dumps(call["retry_causes"]), int(call["tokens_estimated"]), call["error"], call["cost_usd"]))

    def usage(self) -> list[dict[str, Any]]:
        """Totals per model and stage over every recorded call."""
        with self._lock:
            cursor = self._connection.execute(
                "SELECT model, stage, count(*), sum(cached), sum(error IS NOT NULL), sum(retries), "
                "sum(prompt_tokens), sum(completion_tokens), sum(latency_ms), sum(cost_usd) "
                "FROM calls GROUP BY model, stage ORDER BY model, stage")
            rows = cursor.fetchall()
        keys = ("model", "stage", "calls", "cached", "failed", "retries", "prompt_tokens", "completion_tokens",
                "latency_ms", "cost_usd")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    def close(self) -> None:
        with self._lock:
            self._connection.close()
