"""The notebooks run top to bottom (nbclient, the real store, embedder and local model) in a fresh data
directory, and are committed without outputs."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parents[1] / "notebooks").glob("*.ipynb"))


def test_notebooks_are_committed_without_outputs():
    assert len(NOTEBOOKS) == 5
    for path in NOTEBOOKS:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        code = [cell for cell in cells if cell["cell_type"] == "code"]
        assert code and all(not c["outputs"] and c["execution_count"] is None for c in code), path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, tmp_path, monkeypatch, model_dir):
    import nbformat
    from nbclient import NotebookClient

    folder = tmp_path / "notebooks"
    folder.mkdir()
    shutil.copytree(path.parents[1] / "tests" / "data", tmp_path / "tests" / "data")
    notebook = nbformat.read(path, as_version=4)
    env = {"NEOWEAVE_DATA_DIR": str(tmp_path / "data"), "NEOWEAVE_LLM_MODEL": "qwen2.5-coder-0.5b",
           "NEOWEAVE_LLM_MODEL_DIR": str(model_dir)}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    try:
        NotebookClient(notebook, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(folder)}}).execute()
    finally:
        from neoweave.config import load_settings
        from neoweave.llm.local import MODELS, LocalModelServer
        from neoweave.store.falkordb_server import EmbeddedFalkorDB

        settings = load_settings()
        LocalModelServer(MODELS["qwen2.5-coder-0.5b"], state_dir=settings.falkordb.data_dir / "llm").stop()
        EmbeddedFalkorDB(settings.falkordb.data_dir).stop()
    errors = [output for cell in notebook.cells if cell["cell_type"] == "code" for output in cell["outputs"]
              if output["output_type"] == "error"]
    assert errors == []
    assert os.environ["NEOWEAVE_DATA_DIR"] == str(tmp_path / "data")
    assert not (folder / ".neoweave").exists()  # the notebook used the configured data directory (stopped above)
