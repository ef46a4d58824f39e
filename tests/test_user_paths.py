"""The background servers as a user starts them: from the default relative data directory, from another working
directory, and through a symlinked directory. Each server (the embedded store, the local model, `serve`, `mcp`)
must answer, its watchdog must keep it alive after the command that started it exits (a watchdog runs in `/`, so
a relative path handed to it named nothing and it stopped the server at once), and `serve` must remove the file
it announces itself with on SIGTERM as on Ctrl-C. Real processes, real store, the real local model (the 0.5B)."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import free_port, lines_until

from neoweave.processes import pid_alive
from neoweave.watchdog import named_pid

QUESTION = "How does the event loop schedule coroutines and callbacks?"
SMALL_MODEL = "qwen2.5-coder-0.5b"
WATCHDOG_POLL = "0.2"  # seconds: a watchdog that stops its server would do so within a second


def _layout(tmp_path: Path, how: str) -> tuple[Path, list[str], Path]:
    """(the working directory, the --data-dir arguments, the data directory the commands must use)."""
    project = tmp_path / "project"
    project.mkdir()
    if how == "default":  # `neoweave ...` from the project, data in ./.neoweave
        return project, [], project / ".neoweave"
    if how == "relative_from_elsewhere":  # a relative --data-dir from another working directory
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        return elsewhere, ["--data-dir", "../project/data"], project / "data"
    link = tmp_path / "link"  # the project reached through a symlink, data in ./.neoweave
    link.symlink_to(project, target_is_directory=True)
    return link, [], project / ".neoweave"


@pytest.fixture(params=["default", "relative_from_elsewhere", "through_a_symlink"])
def user(request, tmp_path, site, model_dir):
    cwd, data_args, data_dir = _layout(tmp_path, request.param)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEOWEAVE_")}
    env.update(NEOWEAVE_WATCHDOG_POLL=WATCHDOG_POLL, NEOWEAVE_LLM_MODEL_DIR=str(model_dir), PYTHONUNBUFFERED="1")

    def argv(*args: str) -> list[str]:
        return [sys.executable, "-m", "neoweave.cli", *data_args, *args]

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run(argv(*args), cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
        assert not check or result.returncode == 0, (args, result.stderr[-2000:])
        return result

    run.argv, run.cwd, run.env, run.data_dir, run.layout = argv, cwd, env, data_dir.resolve(), request.param
    run("ingest", str(site), "--no-progress", "--base-url", "https://docs.example.org/tiny/")
    yield run
    run("llm", "stop", check=False)
    run("server", "stop", check=False)


def _alive_after_polls(pid_file: Path, watchdog_file: Path) -> tuple[int, int]:
    """The server a pid/state file names and its watchdog, both still running after several watchdog polls."""
    time.sleep(10 * float(WATCHDOG_POLL))
    pid, watchdog = named_pid(pid_file), named_pid(watchdog_file)
    assert pid is not None and pid_alive(pid), f"{pid_file}: the server was stopped"
    assert watchdog is not None and pid_alive(watchdog), f"{pid_file}: no watchdog"
    return pid, watchdog


SERVE_STOP = {"default": signal.SIGINT, "relative_from_elsewhere": signal.SIGTERM,
              "through_a_symlink": signal.SIGTERM}
"""How each layout's `serve` is stopped: Ctrl-C and SIGTERM must both remove its file."""


def test_every_background_server_answers_and_stays_up_in_every_layout(user):
    _store_outlives_the_command(user)
    _local_model_server_outlives_the_command(user)
    _serve_answers_and_removes_its_file(user, SERVE_STOP[user.layout])
    _mcp_answers_and_stops_cleanly_on_sigterm(user)


def _store_outlives_the_command(user) -> None:
    data = user.data_dir
    assert (data / "falkordb.pid").exists(), f"the data went elsewhere than {data}"
    server, _ = _alive_after_polls(data / "falkordb.pid", data / "falkordb-watchdog.pid")
    found = json.loads(user("query", QUESTION, "--k", "1", "--json").stdout)  # the next command reuses it
    assert len(found["items"]) == 1 and named_pid(data / "falkordb.pid") == server


def _local_model_server_outlives_the_command(user) -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("the local model server is not installed (bash scripts/setup.sh --local-llm)")
    user("llm", "check", "--model", SMALL_MODEL)
    state = user.data_dir / "llm" / f"{SMALL_MODEL}.json"
    server, watchdog = _alive_after_polls(state, state.with_name(f"{SMALL_MODEL}-watchdog.pid"))
    again = user("llm", "check", "--model", SMALL_MODEL)  # the next command reuses the same server
    assert "structured call ok" in again.stdout
    assert named_pid(state) == server and pid_alive(watchdog)


def _serve_answers_and_removes_its_file(user, stop_signal: signal.Signals) -> None:
    port = free_port()
    serve = subprocess.Popen(user.argv("serve", "--port", str(port)), cwd=user.cwd, env=user.env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    announced = user.data_dir / "serve.json"
    try:
        lines_until(serve.stdout, "serving", 120)  # type: ignore[arg-type]
        assert json.loads(announced.read_text())["pid"] == serve.pid
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=30) as response:
            assert response.status == 200
        remote = json.loads(user("query", QUESTION, "--k", "1", "--json").stdout)
        assert len(remote["items"]) == 1
    finally:
        serve.send_signal(stop_signal)
        code = serve.wait(timeout=60)
    assert not announced.exists(), f"serve.json left behind after {stop_signal.name}"
    assert code == (143 if stop_signal == signal.SIGTERM else 130), code


def _mcp_answers_and_stops_cleanly_on_sigterm(user) -> None:
    port = free_port()
    mcp = subprocess.Popen(user.argv("mcp", "--http", "--port", str(port)), cwd=user.cwd, env=user.env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        lines_until(mcp.stderr, "serving", 120)  # type: ignore[arg-type]
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/mcp", method="POST",
            data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"}}}).encode(),
            headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 200 and b"neoweave" in response.read()
    finally:
        mcp.send_signal(signal.SIGTERM)
        code = mcp.wait(timeout=60)
    assert code in (0, 143), code
    server = named_pid(user.data_dir / "falkordb.pid")  # the store it used stays for the next command
    assert server is not None and pid_alive(server)


def test_settings_hold_absolute_directories(tmp_path, monkeypatch):
    """Resolved once, when settings are made: a later chdir does not move the data; a config file's relative
    directory is read against the file's directory."""
    from neoweave.config import load_settings

    monkeypatch.chdir(tmp_path)
    settings = load_settings(environ={})
    assert settings.falkordb.data_dir == (tmp_path / ".neoweave").resolve()
    config = tmp_path / "conf" / "neoweave.toml"
    config.parent.mkdir()
    config.write_text('[falkordb]\ndata_dir = "graph"\n[llm]\nlocal_model_dir = "models"\n')
    from_file = load_settings(config, environ={})
    assert from_file.falkordb.data_dir == (tmp_path / "conf" / "graph").resolve()
    assert from_file.llm.local_model_dir == (tmp_path / "conf" / "models").resolve()
    from_env = load_settings(environ={"NEOWEAVE_DATA_DIR": "elsewhere"})
    assert from_env.falkordb.data_dir == (tmp_path / "elsewhere").resolve()
