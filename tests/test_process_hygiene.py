"""Process hygiene, with real processes: workers die with their parent (also on kill -9), and the servers left
running for the next command (embedded FalkorDB, the local model) stop with their data directory or after
`idle_timeout`, each guarded by a watchdog that never outlives its server."""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import psutil
import pytest

from neoweave.processes import pid_alive
from neoweave.store.falkordb_server import EmbeddedFalkorDB
from neoweave.store.falkordb_store import FalkorDBStore
from neoweave.watchdog import WATCHDOG_MODULE, probe_interval

POLL = 0.2  # the watchdogs' poll interval in these tests


def _wait(condition: Callable[[], bool], timeout: float) -> float:
    """Seconds until `condition()` held; fails after `timeout`."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, f"not within {timeout} s"
        time.sleep(0.05)
    return time.monotonic() - started


def _all_gone(pids: Iterable[int]) -> Callable[[], bool]:
    pids = list(pids)
    return lambda: not any(pid_alive(pid) for pid in pids)  # a zombie waiting for init counts as gone


def _watchdogs_of(path: Path) -> list[int]:
    """Watchdog processes whose command line names `path` (this test's data directory). Linux shows an empty
    command line for a moment after a process is started: callers expecting one wait for it."""
    found = []
    for process in psutil.process_iter(["pid", "cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if WATCHDOG_MODULE in cmdline and str(path) in cmdline and pid_alive(process.info["pid"]):
            found.append(process.info["pid"])
    return found


def _python(tmp_path: Path, name: str, code: str) -> Path:
    script = tmp_path / name
    script.write_text(textwrap.dedent(code))
    return script


# -- workers die with their parent ---------------------------------------------------------------------------

POOL_SCRIPT = """\
    import threading, time
    from neoweave.nlp.extract_fast import FastExtractor

    if __name__ == "__main__":
        extractor = FastExtractor(n_process=2)
        chunks = [(f"c{i}", f"Guido van Rossum created Python at CWI in Amsterdam ({i}).") for i in range(40)]
        # the pool is started from a thread that then ends (as enrich's prefetch thread does): the workers'
        # parent-death signal must not fire with it
        worker = threading.Thread(target=extractor.extract, args=(chunks,))
        worker.start()
        worker.join()
        time.sleep(0.5)
        assert len(extractor.extract(chunks)) == 40
        print("ready", flush=True)
        time.sleep(600)
"""


def test_extractor_workers_and_resource_tracker_die_with_a_killed_parent(tmp_path):
    script = _python(tmp_path, "pool.py", POOL_SCRIPT)
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout.readline().strip() == "ready"
        descendants = psutil.Process(parent.pid).children(recursive=True)
        commands = [" ".join(p.cmdline()) for p in descendants]
        assert sum("spawn_main" in c for c in commands) == 2, commands  # the two workers, still alive
        assert any("resource_tracker" in c for c in commands), commands
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
        _wait(_all_gone(p.pid for p in descendants), timeout=10)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


ORPHAN_CHILD = """\
    import sys, time
    from neoweave.processes import die_with_parent

    parent, mode = int(sys.argv[1]), sys.argv[2]
    if mode == "late":
        time.sleep(1.5)  # the parent is killed before this worker arms itself
    die_with_parent(parent, poll=0.2, death_signal=mode != "watcher")
    print("armed", flush=True)
    time.sleep(600)
"""

ORPHAN_PARENT = """\
    import os, subprocess, sys, time

    child_script, mode = sys.argv[1], sys.argv[2]
    child = subprocess.Popen([sys.executable, child_script, str(os.getpid()), mode], stdout=subprocess.PIPE, text=True)
    print(child.pid, flush=True)
    if mode != "late":
        assert child.stdout.readline().strip() == "armed"
        print("armed", flush=True)
    time.sleep(600)
"""


@pytest.mark.parametrize("mode", ["signal", "watcher", "late"])
def test_a_worker_exits_when_its_parent_is_killed(tmp_path, mode):
    """signal: PR_SET_PDEATHSIG; watcher: only the portable getppid() thread; late: the parent is already dead
    when the worker starts watching it."""
    child_script = _python(tmp_path, "child.py", ORPHAN_CHILD)
    script = _python(tmp_path, "parent.py", ORPHAN_PARENT)
    parent = subprocess.Popen([sys.executable, str(script), str(child_script), mode], stdout=subprocess.PIPE,
                              text=True)
    try:
        child = int(parent.stdout.readline())
        if mode != "late":
            assert parent.stdout.readline().strip() == "armed"
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
        _wait(_all_gone([child]), timeout=10)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


# -- the embedded FalkorDB server and its watchdog -----------------------------------------------------------

@pytest.fixture
def data_dir(tmp_path):
    path = tmp_path / "data"
    yield path
    if path.exists():
        EmbeddedFalkorDB(path).stop()


def test_removing_the_data_directory_stops_the_server_and_its_watchdog(data_dir):
    server = EmbeddedFalkorDB(data_dir, watchdog_poll=POLL)
    server.ensure_running()
    pid, watchdog = server.pid(), server.watchdog_pid()
    assert pid and watchdog
    _wait(lambda: _watchdogs_of(data_dir) == [watchdog], timeout=5)
    shutil.rmtree(data_dir)
    _wait(_all_gone([pid, watchdog]), timeout=15)


def test_an_idle_server_is_stopped_but_not_while_a_client_holds_it(data_dir):
    server = EmbeddedFalkorDB(data_dir, idle_timeout=1.5, watchdog_poll=POLL)
    store = FalkorDBStore(server=server, graph="idle")
    store.query("CREATE (:Probe {n: 1})", write=True)
    pid, watchdog = server.pid(), server.watchdog_pid()
    time.sleep(3)  # twice the timeout: the open store's connection is a use
    assert pid_alive(pid) and pid_alive(watchdog)
    store.close()
    waited = _wait(_all_gone([pid, watchdog]), timeout=15)
    assert waited >= 1.0  # idle_timeout after the last use, not at once
    assert not server.paths.pid_file.exists()  # a graceful stop (the server removes its pid file)
    # the next use starts it again, with the data
    again = FalkorDBStore(server=EmbeddedFalkorDB(data_dir, idle_timeout=0), graph="idle")
    assert again.query("MATCH (p:Probe) RETURN count(p) AS n")[0]["n"] == 1
    assert again.server.pid() != pid and again.server.watchdog_pid() not in (None, watchdog)
    again.close()


def test_the_watchdog_looks_at_a_long_timeout_servers_use_at_most_once_a_minute(data_dir):
    """Its look is commands, which Redis runs even inside a yielding MULTI/EXEC and then dies of (see
    `probe_interval`): a server with an idle timeout of hours is looked at once a minute, not every poll."""
    assert probe_interval(5.0, 14400) == 60.0 and probe_interval(0.2, 1.5) == 0.2 and probe_interval(5, 0) == 5
    server = EmbeddedFalkorDB(data_dir, idle_timeout=100, watchdog_poll=POLL)  # a look every 10 s
    store = FalkorDBStore(server=server, graph="looks")
    store.query("RETURN 1")

    def looks() -> int:
        stats = store._db.connection.info("commandstats")
        return int(stats.get("cmdstat_client|list", {}).get("calls", 0))

    _wait(lambda: looks() >= 1, timeout=10)  # the first look comes at once
    first = looks()
    time.sleep(3)  # 15 polls
    assert looks() == first
    assert pid_alive(server.watchdog_pid())
    store.close()


def test_a_normal_stop_leaves_no_watchdog(data_dir):
    server = EmbeddedFalkorDB(data_dir, watchdog_poll=POLL)
    server.ensure_running()
    watchdog = server.watchdog_pid()
    # another command reuses the server and its watchdog
    other = EmbeddedFalkorDB(data_dir)
    other.ensure_running()
    assert other.pid() == server.pid() and other.watchdog_pid() == watchdog
    assert other.stop() is True
    assert not pid_alive(watchdog) and not server.paths.watchdog_pid_file.exists()
    assert _watchdogs_of(data_dir) == []


def test_the_watchdog_exits_with_its_server_and_a_restart_gets_a_new_one(data_dir):
    server = EmbeddedFalkorDB(data_dir, watchdog_poll=POLL)
    server.ensure_running()
    pid, watchdog = server.pid(), server.watchdog_pid()
    os.kill(pid, signal.SIGKILL)
    _wait(_all_gone([pid, watchdog]), timeout=10)
    server.ensure_running()
    assert server.watchdog_pid() not in (None, watchdog)
    _wait(lambda: _watchdogs_of(data_dir) == [server.watchdog_pid()], timeout=5)


def test_a_server_without_a_watchdog_gets_one_on_reuse(data_dir):
    """A server started by an older neoweave, or whose watchdog was killed, is adopted by the next command."""
    server = EmbeddedFalkorDB(data_dir, watchdog_poll=POLL)
    server.ensure_running()
    watchdog = server.watchdog_pid()
    os.kill(watchdog, signal.SIGKILL)
    _wait(_all_gone([watchdog]), timeout=5)
    assert server.watchdog_pid() is None
    server.ensure_running()
    assert server.watchdog_pid() not in (None, watchdog)


def test_concurrent_starts_share_one_server_and_one_watchdog(data_dir):
    code = ("import sys; from pathlib import Path; from neoweave.store.falkordb_server import EmbeddedFalkorDB;"
            "s = EmbeddedFalkorDB(Path(sys.argv[1])); s.ensure_running(); print(s.pid(), s.watchdog_pid())")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(data_dir)], stdout=subprocess.PIPE, text=True)
             for _ in range(3)]
    answers = {p.communicate(timeout=60)[0].strip() for p in procs}
    assert all(p.returncode == 0 for p in procs) and len(answers) == 1
    _wait(lambda: len(_watchdogs_of(data_dir)) == 1, timeout=5)
    time.sleep(0.5)
    assert len(_watchdogs_of(data_dir)) == 1


def test_cli_server_start_returns_and_server_stop_stops_the_watchdog(tmp_path, data_dir):
    """The watchdog holds none of the command's descriptors: reading a command's output to the end returns."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEOWEAVE_")}
    env["NEOWEAVE_DATA_DIR"] = str(data_dir)
    start = subprocess.run([sys.executable, "-m", "neoweave.cli", "server", "start"], capture_output=True,
                           text=True, env=env, timeout=60, cwd=tmp_path)
    assert start.returncode == 0, start.stderr
    _wait(lambda: len(_watchdogs_of(data_dir)) == 1, timeout=5)
    watchdogs = _watchdogs_of(data_dir)
    stop = subprocess.run([sys.executable, "-m", "neoweave.cli", "server", "stop"], capture_output=True,
                          text=True, env=env, timeout=60, cwd=tmp_path)
    assert stop.returncode == 0 and "stopped" in stop.stdout, stop.stderr
    _wait(_all_gone(watchdogs), timeout=5)


# -- the local model server (the same watchdog) --------------------------------------------------------------

def _local_model_or_skip():
    from neoweave.llm.local import MODELS

    small = MODELS["qwen2.5-coder-0.5b"]
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llama_cpp.server") is None:
        pytest.skip("llama-cpp-python's server is not installed (bash scripts/setup.sh --local-llm): the "
                    "FalkorDB tests above cover the shared watchdog")
    missing = [m for m in small.modules if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"the local model's weight packages are not installed ({missing[0]}, ...)")
    return small


def test_removing_the_data_directory_stops_the_local_model_server(tmp_path, model_dir):
    from neoweave.llm.local import LocalModelServer, server_state_dir

    small = _local_model_or_skip()
    data = tmp_path / "data"
    server = LocalModelServer(small, state_dir=server_state_dir(data), model_dir=model_dir, watchdog_poll=POLL)
    try:
        server.ensure_running()
        pid, watchdog = server.pid(), server.watchdog_pid()
        assert pid and watchdog
        shutil.rmtree(data)
        _wait(_all_gone([pid, watchdog]), timeout=30)
    finally:
        server.stop()


LLM_USER_SCRIPT = """\
    import sys
    from pathlib import Path
    from neoweave.llm.local import MODELS, LocalModelServer

    server = LocalModelServer(MODELS["qwen2.5-coder-0.5b"], state_dir=Path(sys.argv[1]), model_dir=Path(sys.argv[2]),
                              idle_timeout=1.5, watchdog_poll=0.2)
    server.ensure_running()
    print(server.pid(), server.watchdog_pid(), flush=True)
    sys.stdin.read()  # a user (a `serve`) until the test closes stdin
"""


def test_an_idle_local_model_server_stops_once_its_users_are_gone(tmp_path, model_dir):
    from neoweave.llm.local import LocalModelServer

    small = _local_model_or_skip()
    state_dir = tmp_path / "data" / "llm"
    script = _python(tmp_path, "user.py", LLM_USER_SCRIPT)
    user = subprocess.Popen([sys.executable, str(script), str(state_dir), str(model_dir)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        line = user.stdout.readline().split()
        assert len(line) == 2, "the user process did not start the server"
        pid, watchdog = map(int, line)
        time.sleep(3)  # twice the timeout: the user still runs
        assert pid_alive(pid) and pid_alive(watchdog)
        user.stdin.close()
        user.wait(timeout=30)
        waited = _wait(_all_gone([pid, watchdog]), timeout=30)
        assert waited >= 1.0
    finally:
        if user.poll() is None:
            user.kill()
            user.wait()
        LocalModelServer(small, state_dir=state_dir).stop()


def test_idle_timeouts_are_settings():
    from neoweave.config import load_settings
    from neoweave.store import embedded_server

    defaults = load_settings(environ={})
    assert defaults.falkordb.idle_timeout == 4 * 3600 and defaults.llm.local_idle_timeout == 3600
    settings = load_settings(environ={"NEOWEAVE_FALKORDB_IDLE_TIMEOUT": "60", "NEOWEAVE_LLM_IDLE_TIMEOUT": "0"})
    assert settings.falkordb.idle_timeout == 60 and settings.llm.local_idle_timeout == 0
    assert embedded_server(settings).idle_timeout == 60
