"""The fast extractor loads spaCy without torch (thinc would import it: most of an enrich command's start), and
extracts exactly what it extracts when torch is loaded (real spaCy model, fresh processes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = """
import json, sys
if sys.argv[1] == "torch first":
    import torch  # a process that uses torch already (the torch embedding runtime)
from neoweave.nlp.extract_fast import FastExtractor
texts = [json.loads(line)["text"] for line in open(sys.argv[2], encoding="utf-8")][:60]
found = FastExtractor().extract([(f"c{i}", text) for i, text in enumerate(texts)])
torch_loaded = "torch" in sys.modules
import torch  # still importable afterwards
print(json.dumps({"torch_loaded": torch_loaded, "torch": bool(torch.__version__), "found": repr(found)}))
"""


def _run(mode: str) -> dict:
    done = subprocess.run([sys.executable, "-c", SCRIPT, mode, str(ROOT / "examples/hotpotqa/corpus.jsonl")],
                          capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_spacy_loads_without_torch_and_extracts_the_same():
    alone, with_torch = _run("spacy alone"), _run("torch first")
    assert alone["torch_loaded"] is False and with_torch["torch_loaded"] is True
    assert alone["torch"] and with_torch["torch"]
    assert alone["found"] == with_torch["found"] and "Mention(" in alone["found"]
