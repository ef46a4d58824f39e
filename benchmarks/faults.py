"""Faults as a user meets them, counted: the embedded store killed mid-command (once, or again after its
restart), the local model server killed mid-`enrich kg --method llm`, the data directory's disk filling
mid-ingest and a backup's disk filling mid-backup.

    .venv/bin/python benchmarks/faults.py --trials 10 --out docs/benchmarks/faults.json

Each trial applies the fault to a real `neoweave` command at a random moment (a random delay within its clean
run time, or a random disk size below what the command needs), then frees the fault (the killed server is left
for the next command to restart; the disk is grown) and runs the same command again. A trial is whole when the
faulted command either finished or failed with one clear line (no traceback, not the generic fallback), the
rerun finished, `neoweave check` passes and the graph equals a clean run's (`neoweave.audit.snapshot.diff`).
For backups: no directory left at the destination, the source's graph unchanged, and the rerun's backup
verified. The local model variant checks `neoweave check` and the cache instead of a clean run (one clean LLM
run costs minutes on two cores, and the rebuild check already compares LLM-free steps).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from neoweave.errors import NeoweaveError  # noqa: E402
from neoweave.kb import faults  # noqa: E402
from neoweave.kb.rebuild_check import make_pages  # noqa: E402

VARIANTS = ("store-ingest", "store-ingest-twice", "store-kg", "store-kg-twice", "disk-ingest", "disk-backup",
            "llm-kg")
SMALL_MODEL = "qwen2.5-coder-0.5b"


def write_corpus(source: Path, folder: Path, records: int) -> Path:
    """HTML pages (the rebuild check's, each linking the next) from the first `records` corpus records."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = source.read_text(encoding="utf-8").splitlines()[:records]
    for page in make_pages([json.loads(line) for line in lines]):
        (folder / page.name).write_text(page.versions[2], encoding="utf-8")
    return folder


def must(run: faults.Run, what: str) -> faults.Run:
    if run.returncode != 0:
        raise RuntimeError(f"{what} failed ({run.returncode}): {run.stderr[-2000:]}")
    return run


class Bench:
    def __init__(self, work: Path, source: Path, records: int, llm_records: int, rng: random.Random) -> None:
        self.work, self.source, self.llm_records, self.rng = work, source, llm_records, rng
        self.corpus = write_corpus(source, work / "corpus", records)
        self.ingested = work / "ingested"  # the clean ingest
        self.kg = work / "kg"  # the clean ingest + enrich kg
        self.times: dict[str, float] = {}

    def prepare(self) -> None:
        if not self.ingested.exists():
            self.times["ingest"] = must(faults.run(self.ingested, "ingest", str(self.corpus), "--no-progress"),
                                        "clean ingest").seconds
        if not self.kg.exists():
            faults.copy_data_dir(self.ingested, self.kg)
            self.times["kg"] = must(faults.run(self.kg, *KG), "clean enrich kg").seconds
        faults.stop_servers(self.ingested)
        faults.stop_servers(self.kg)

    def kill_store(self, trial_dir: Path, args: list[str], reference: Path, clean_seconds: float, kills: int
                   ) -> dict[str, Any]:
        delay = self.rng.uniform(0.2, max(0.5, clean_seconds * 0.9))
        faulted = faults.run_killing(trial_dir, args, faults.store_pid(trial_dir), delay=delay, kills=kills)
        return {"delay_s": round(delay, 1), **self.settle(trial_dir, args, faulted, reference)}

    def settle(self, trial_dir: Path, args: list[str], faulted: faults.Run, reference: Path) -> dict[str, Any]:
        """`neoweave check` on what the fault left, the command again when it failed, then check and compare."""
        first_check = faults.run(trial_dir, "check") if faulted.returncode != 0 else None
        rerun = faults.run(trial_dir, *args) if faulted.returncode != 0 else None
        check = faults.run(trial_dir, "check")
        differing = faults.differences(trial_dir, reference)
        faults.stop_servers(trial_dir)
        return {"check_before_rerun": None if first_check is None else first_check.returncode == 0,
                **outcome(faulted, rerun, check, differing)}

    def trial(self, variant: str) -> dict[str, Any]:
        target = self.work / "trial"
        if variant.startswith("store-ingest"):
            faults.stop_servers(target)
            shutil.rmtree(target, ignore_errors=True)
            return self.kill_store(target, ["ingest", str(self.corpus), "--no-progress"], self.ingested,
                                   self.times.get("ingest", 20.0), 2 if variant.endswith("twice") else 1)
        if variant.startswith("store-kg"):
            faults.copy_data_dir(self.ingested, target)
            return self.kill_store(target, list(KG), self.kg, self.times.get("kg", 20.0),
                                   2 if variant.endswith("twice") else 1)
        if variant == "disk-ingest":
            return self.disk_ingest()
        if variant == "disk-backup":
            return self.disk_backup()
        return self.llm_kg()

    def disk_ingest(self) -> dict[str, Any]:
        mount = self.work / "disk"
        needed = faults.disk_use_kb(self.ingested)
        size = self.rng.randint(48, max(64, int(needed * 0.9)))
        args = ["ingest", str(self.corpus), "--no-progress"]
        with faults.small_disk(mount, size):
            data = mount / "data"
            faulted = faults.run(data, *args)
            faults.resize_disk(mount, needed * 8 + 4096)
            result = self.settle(data, args, faulted, self.ingested)
        return {"disk_kb": size, "needed_kb": needed, **result}

    def disk_backup(self) -> dict[str, Any]:
        from neoweave.kb.backup import read_manifest, verify_files

        mount = self.work / "backups"
        needed = faults.disk_use_kb(self.ingested)
        size = self.rng.randint(16, max(32, needed // 2))
        with faults.small_disk(mount, size):
            dest = mount / "b"
            faulted = faults.run(self.ingested, "backup", str(dest))
            left = sorted(path.name for path in mount.iterdir())
            dump_left = (self.ingested / "dump.rdb").exists()
            faults.resize_disk(mount, needed * 4 + 4096)
            rerun = faults.run(self.ingested, "backup", str(dest)) if faulted.returncode != 0 else None
            verified = True
            try:
                verify_files(dest, read_manifest(dest))
            except NeoweaveError:
                verified = False
        differing = faults.differences(self.ingested, self.kg_free_reference())
        faults.stop_servers(self.ingested)
        return {"disk_kb": size, "left_at_destination": left, "dump_left_in_source": dump_left,
                "backup_verified": verified, **outcome(faulted, rerun, None, differing),
                "whole": (faulted.returncode == 0 or faulted.clear) and not left and not dump_left and verified
                and not differing and (rerun is None or rerun.returncode == 0)}

    def kg_free_reference(self) -> Path:
        """A second copy of the clean ingest, made once, to show a backup left the source's graph unchanged."""
        reference = self.work / "ingested-copy"
        if not reference.exists():
            faults.copy_data_dir(self.ingested, reference)
        return reference

    def llm_kg(self) -> dict[str, Any]:
        target = self.work / "trial-llm"  # a few pages of its own: the small model takes minutes per page here
        faults.stop_servers(target)
        shutil.rmtree(target, ignore_errors=True)
        folder = write_corpus(self.source, self.work / "corpus-llm", self.llm_records)
        must(faults.run(target, "ingest", str(folder), "--no-progress"), "ingest for the llm variant")
        env = {"NEOWEAVE_LLM_MODEL": SMALL_MODEL, "NEOWEAVE_LLM_MODEL_DIR": str(self.work / "models")}
        args = ["enrich", "kg", "--method", "llm", "--no-progress"]
        delay = self.rng.uniform(5.0, 60.0)
        faulted = faults.run_killing(target, args, faults.llm_pid(target, SMALL_MODEL), delay=delay, env=env)
        cached = cached_answers(target)
        rerun = faults.run(target, *args, env=env) if faulted.returncode != 0 else None
        check = faults.run(target, "check")
        faults.stop_servers(target)
        result = outcome(faulted, rerun, check, [])
        return {"delay_s": round(delay, 1), "answers_cached_before_rerun": cached,
                "rerun_s": round(rerun.seconds, 1) if rerun else None, **result}


KG = ("enrich", "kg", "--method", "fast", "--no-progress")


def cached_answers(data_dir: Path) -> int:
    import sqlite3

    path = data_dir / "llm.sqlite"
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT count(*) FROM responses").fetchone()[0])


def outcome(faulted: faults.Run, rerun: faults.Run | None, check: faults.Run | None, differing: list[str]
            ) -> dict[str, Any]:
    return {"kills": faulted.kills, "exit": faulted.returncode, "clear": faulted.clear,
            "message": faulted.message[:300], "rerun_exit": rerun.returncode if rerun else None,
            "check_passes": check.returncode == 0 if check else None, "differences": differing[:5],
            "whole": (faulted.returncode == 0 or faulted.clear) and (rerun is None or rerun.returncode == 0)
            and (check is None or check.returncode == 0) and not differing}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "data" / "hotpotqa" / "corpus.jsonl")
    parser.add_argument("--records", type=int, default=40)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--llm-trials", type=int, default=2)
    parser.add_argument("--llm-records", type=int, default=3)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--work", type=Path, default=Path("/tmp/neoweave-faults"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    variants = args.variants.split(",")
    if any(v.startswith(("disk", )) for v in variants) and (reason := faults.mount_refusal()):
        print(f"skipping the disk variants: {reason}")
        variants = [v for v in variants if not v.startswith("disk")]
    args.work.mkdir(parents=True, exist_ok=True)
    bench = Bench(args.work, args.corpus, args.records, args.llm_records, random.Random(args.seed))
    bench.prepare()
    results: dict[str, Any] = json.loads(args.out.read_text()) if args.out.exists() else {}
    results.update({"corpus": f"{args.corpus} (first {args.records} records as linked HTML pages)",
                    })
    results.setdefault("clean_seconds", {}).update({k: round(v, 1) for k, v in bench.times.items()})
    results.setdefault("variants", {})
    for variant in variants:
        trials = []
        count = args.llm_trials if variant == "llm-kg" else args.trials
        started = time.monotonic()
        for index in range(count):
            trials.append({"trial": index, **bench.trial(variant)})
            print(json.dumps({"variant": variant, **trials[-1]}), flush=True)
        results["variants"][variant] = {
            "trials": count, "faulted": sum(t["kills"] > 0 or t["exit"] != 0 for t in trials),
            "finished_anyway": sum(t["exit"] == 0 for t in trials),
            "failed_clearly": sum(t["exit"] != 0 and t["clear"] for t in trials),
            "whole": sum(t["whole"] for t in trials), "minutes": round((time.monotonic() - started) / 60, 1),
            "messages": sorted({t["message"] for t in trials if t["message"]}), "runs": trials}
        args.out.write_text(json.dumps(results, indent=1) + "\n")
    for reference in (bench.ingested, bench.kg, args.work / "ingested-copy"):
        faults.stop_servers(reference)
    for variant, row in results["variants"].items():
        print(f"{variant}: {row['trials']} trials, {row['finished_anyway']} finished despite the fault, "
              f"{row['failed_clearly']} failed with a clear message, {row['whole']} whole after the rerun")


if __name__ == "__main__":
    main()
