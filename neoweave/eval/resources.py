"""Peak memory and CPU of an evaluation run, sampled with psutil.

The work is split over processes: the neoweave process (embedding, Python side of retrieval), the graph
server (FalkorDB, when embedded) and the local model server (llama.cpp). Each is sampled separately so a
report can say where the memory and the CPU time went.
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, field

import psutil


@dataclass
class ProcessUsage:
    peak_rss_mb: float = 0.0
    cpu_seconds: float = 0.0


@dataclass
class ResourceUsage:
    """What a monitored block cost: wall time, and per process role peak RSS and CPU seconds."""

    wall_seconds: float = 0.0
    processes: dict[str, ProcessUsage] = field(default_factory=dict)

    @property
    def cpu_seconds(self) -> float:
        return sum(p.cpu_seconds for p in self.processes.values())

    @property
    def cpu_percent(self) -> float:
        """Mean CPU use over the block, in percent of one core (200 = two cores busy)."""
        return 100.0 * self.cpu_seconds / self.wall_seconds if self.wall_seconds > 0 else 0.0

    def flat(self) -> dict[str, float]:
        """Report columns: per role peak RSS (MB) and CPU seconds, plus total CPU percent."""
        row: dict[str, float] = {"wall_s": self.wall_seconds, "cpu_percent": self.cpu_percent}
        for role, usage in self.processes.items():
            row[f"{role}_peak_rss_mb"] = usage.peak_rss_mb
            row[f"{role}_cpu_s"] = usage.cpu_seconds
        return row

    def to_dict(self) -> dict:
        return {"wall_seconds": self.wall_seconds, "cpu_percent": self.cpu_percent,
                "processes": {role: asdict(usage) for role, usage in self.processes.items()}}


def _cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


class ResourceMonitor:
    """Context manager sampling the RSS of named processes in a background thread.

    `pids` maps a role ("neoweave", "graph_server", "llm_server") to a pid; the current process is always
    included as "neoweave". CPU seconds are the difference of the kernel's counters between the first and the
    last sample (a process that exits early keeps what it used until its last sample); peak RSS is the
    largest sample, so a spike shorter than `interval` can be missed.
    """

    def __init__(self, pids: dict[str, int | None] | None = None, interval: float = 0.2) -> None:
        self.interval = interval
        self._processes: dict[str, psutil.Process] = {"neoweave": psutil.Process()}
        for role, pid in (pids or {}).items():
            if pid is not None:
                try:
                    self._processes[role] = psutil.Process(pid)
                except psutil.NoSuchProcess:
                    continue
        self.usage = ResourceUsage(processes={role: ProcessUsage() for role in self._processes})
        self._cpu_start: dict[str, float] = {}
        self._cpu_last: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample_loop, name="resource-monitor", daemon=True)
        self._started = 0.0

    def _sample(self) -> None:
        for role, process in self._processes.items():
            try:
                with process.oneshot():
                    rss = process.memory_info().rss / 2**20
                    self._cpu_last[role] = _cpu_seconds(process)
            except psutil.Error:
                continue  # exited: its last sample stands
            usage = self.usage.processes[role]
            usage.peak_rss_mb = max(usage.peak_rss_mb, rss)

    def _sample_loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self) -> ResourceMonitor:
        for role, process in self._processes.items():
            try:
                self._cpu_start[role] = _cpu_seconds(process)
            except psutil.Error:
                self._cpu_start[role] = 0.0
        self._started = time.perf_counter()
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
        self.usage.wall_seconds = time.perf_counter() - self._started
        for role in self._processes:
            if role in self._cpu_last:
                self.usage.processes[role].cpu_seconds = self._cpu_last[role] - self._cpu_start[role]
