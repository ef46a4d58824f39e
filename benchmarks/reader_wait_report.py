"""The reader-wait benchmark's summaries (`benchmarks/reader_wait.py`): FalkorDB's slow log by statement name, the
polls' latencies and extra waits per phase and strategy, and the gate's holds per command."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 1.0
"""The issue's bound on a poll's extra wait while a command writes."""


def statement_name(text: str) -> str:
    """The named statements (neoweave/cypher/**.cypher) whose last lines a query sent ends with, else its last
    characters."""
    tail = text.strip()[-120:]
    names = sorted({path.stem for path in (ROOT / "neoweave" / "cypher").rglob("*.cypher")
                    if path.read_text().strip().endswith(tail)})
    return " | ".join(names) if names else "..." + text[-200:]


def slow_statements(data_dir: Path, reset: bool = True) -> list[dict[str, Any]]:
    """FalkorDB's slow log of the graph (its slowest statements since the last reset, what a write unit holding
    the gate long ran), then reset."""
    import redis

    from neoweave.store.falkordb_paths import server_paths

    client = redis.Redis(unix_socket_path=str(server_paths(data_dir).socket))
    graph = next((path.name[len("reads-"):-len(".lock")] for path in data_dir.glob("reads-*.lock")), "neoweave")
    try:
        entries = client.execute_command("GRAPH.SLOWLOG", graph)
        if reset:
            client.execute_command("GRAPH.SLOWLOG", graph, "RESET")
    except redis.exceptions.RedisError as exc:
        return [{"error": str(exc)}]
    finally:
        client.close()
    rows = [{"ms": float(entry[3]), "command": entry[1].decode(), "statement": statement_name(entry[2].decode()),
             "text_end": entry[2].decode()[-300:]}
            for entry in entries]
    return sorted(rows, key=lambda row: -row["ms"])


def quantiles(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p95": None, "max": None}
    ordered = sorted(values)
    return {"p50": round(statistics.median(ordered), 4),
            "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 4), "max": round(ordered[-1], 4)}


def refusal(body: str | None) -> str:
    """The `error` of a JSON error body, else the body."""
    try:
        return json.loads(body or "").get("error", body)
    except (ValueError, AttributeError):
        return body or ""


def idle_medians(polls: list[dict]) -> dict[tuple[str, int], float]:
    """The median latency of each (strategy, question) polled idle."""
    idle: dict[tuple[str, int], list[float]] = {}
    for poll in polls:
        if poll["phase"] == "idle" and poll["status"] == 200:
            idle.setdefault((poll["strategy"], poll["question"]), []).append(poll["latency_s"])
    return {key: statistics.median(values) for key, values in idle.items()}


def summarise(polls: list[dict], phases: list[str]) -> list[dict]:
    medians = idle_medians(polls)
    rows = []
    for phase in [*phases, "idle"]:
        for strategy in dict.fromkeys(poll["strategy"] for poll in polls):
            mine = [p for p in polls if p["strategy"] == strategy and p["phase"].split(">")[0] == phase]
            if not mine:
                continue
            ok = [p for p in mine if p["status"] == 200]
            extra = [p["latency_s"] - medians[(p["strategy"], p["question"])] for p in ok
                     if (p["strategy"], p["question"]) in medians]
            refusals: dict[str, int] = {}
            for p in mine:
                if p["status"] != 200:
                    what = f"{p['status']} {refusal(p['error'])}"[:160]
                    refusals[what] = refusals.get(what, 0) + 1
            rows.append({"phase": phase, "strategy": strategy, "polls": len(mine), "ok": len(ok),
                         "non_200": refusals, "latency_s": quantiles([p["latency_s"] for p in ok]),
                         "extra_wait_s": quantiles(extra),
                         "over_target": sum(value > TARGET_S for value in extra)})
    return rows


def gate_summary(intervals: list[dict], commands: list[dict], server_pid: int,
                 log: list[tuple[float, str]]) -> list[dict]:
    """Per command: the write units' exclusive holds of the read lock, and the server's waits on either file."""
    rows = []
    for command in commands:
        window = (command["start_s"], command["start_s"] + command["seconds"] + 1)
        inside = [i for i in intervals if window[0] <= i["start_s"] <= window[1]]
        holds = [i for i in inside if i["file"] == "reads" and i["mode"] == "WRITE" and not i["waiting"]
                 and i["pid"] != server_pid]
        waits = [i for i in inside if i["pid"] == server_pid and i["waiting"]]

        def context(interval: dict) -> str:
            before = [line for stamp, line in log if stamp <= interval["start_s"]]
            return before[-1] if before else ""

        rows.append({"command": command["command"], "unit_holds": len(holds),
                     "held_s_total": round(sum(i["seconds"] for i in holds), 3),
                     "held_s": quantiles([i["seconds"] for i in holds]),
                     "holds": [{"at_s": round(i["start_s"] - command["start_s"], 3), "seconds": i["seconds"],
                                "last_log_line": context(i)} for i in holds],
                     "server_waits": len(waits), "server_wait_s": quantiles([i["seconds"] for i in waits])})
    return rows
