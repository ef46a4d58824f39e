"""An evaluation's records kept as they finish (RUN/progress.jsonl), so a run stopped part way (an endpoint's
error, Ctrl-C, the machine's end) loses nothing: the same run again over the same report directory takes the
finished records up and evaluates only the rest. Once the report is written the file goes.

"The same run" is the same graph (its write stamp), the same questions and the same configuration (strategies,
k, parameters, prompts, answers, the answering model); the code may have changed between the two (a fix for
what stopped the first is the usual reason to run again), and the report says how many records came from the
earlier run."""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from pathlib import Path
from typing import Any

from neoweave.errors import NeoweaveError

log = logging.getLogger(__name__)

PROGRESS_FILE = "progress.jsonl"
FORMAT = 1

RecordKey = tuple[str, int, str]
"""(strategy as configured, k, question id): one record of a run."""


class Checkpoint:
    """RUN/progress.jsonl: a header with the run's fingerprint, then one line per finished record."""

    def __init__(self, directory: str | Path, run: dict[str, Any], *, resume: bool = True) -> None:
        """`run` describes the run (`eval.pipeline.run_identity`): records are taken up only from a file written
        by a run described the same."""
        self.path = Path(directory) / PROGRESS_FILE
        self.fingerprint = hashlib.sha256(json.dumps(run, sort_keys=True, default=str).encode()).hexdigest()
        self._lock = threading.Lock()
        self.finished: dict[RecordKey, dict[str, Any]] = self._read() if resume else {}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            kept = [_line(key, record) for key, record in self.finished.items()]
            self.path.write_text("\n".join([json.dumps({"format": FORMAT, "fingerprint": self.fingerprint}), *kept])
                                 + "\n", encoding="utf-8")
        except OSError as exc:
            raise NeoweaveError(f"cannot write {self.path}: {exc.strerror}", hint="--out names a directory "
                                "the run can write") from exc
        if self.finished:
            log.info("resuming from %s: %d finished records of an earlier run of the same configuration",
                     self.path, len(self.finished))

    def _read(self) -> dict[RecordKey, dict[str, Any]]:
        """The finished records of an earlier run with this fingerprint (none of another run; a line cut short by
        the stop is skipped)."""
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise NeoweaveError(f"cannot read {self.path}: {exc.strerror}") from exc
        try:
            header = json.loads(lines[0]) if lines else {}
        except json.JSONDecodeError:
            header = {}
        if header.get("format") != FORMAT or header.get("fingerprint") != self.fingerprint:
            if lines:
                log.info("%s is another run's (other questions or configuration): starting over", self.path)
            return {}
        finished: dict[RecordKey, dict[str, Any]] = {}
        for line in lines[1:]:
            try:
                row = json.loads(line)
                strategy, k, question_id = row["key"]
                finished[(str(strategy), int(k), str(question_id))] = row["record"]
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                continue
        return finished

    def add(self, key: RecordKey, record: dict[str, Any]) -> None:
        """Keep one finished record (safe from several threads: `--concurrency`)."""
        line = _line(key, record)
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")

    def remove(self) -> None:
        """The report is written: the records live in RUN/records.json now."""
        self.path.unlink(missing_ok=True)


def _line(key: RecordKey, record: dict[str, Any]) -> str:
    """One finished record as the file keeps it (values JSON cannot hold as their text, as records.json does)."""
    return json.dumps({"key": list(key), "record": record}, default=str)
