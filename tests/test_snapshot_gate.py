"""The readers-writer gate that keeps a retrieval's reads apart from write units (`store.snapshot_gate`): two
gates on the same lock files (two processes, or two stores of one process) exclude each other, and a waiting
writer shuts out new readers."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from neoweave.store.snapshot_gate import SnapshotGate


def _gates(tmp_path, count: int) -> list[SnapshotGate]:
    return [SnapshotGate(tmp_path / "reads.lock", tmp_path / "writes.lock", tmp_path / "waiting.lock")
            for _ in range(count)]


def _started(target) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def test_a_write_waits_for_the_readers_and_a_read_for_the_writer(tmp_path):
    reader, other_reader, writer = _gates(tmp_path, 3)
    events: list[str] = []
    with reader.reading():
        with other_reader.reading():  # readers share
            events.append("two readers")
        def write() -> None:
            with writer.writing():
                events.append("wrote")

        wrote = _started(write)
        time.sleep(0.3)
        assert events == ["two readers"]  # the writer waits for the reader still inside
    wrote.join(timeout=5)
    assert events == ["two readers", "wrote"]


def test_a_waiting_writer_goes_before_new_readers(tmp_path):
    first, writer, late = _gates(tmp_path, 3)
    events: list[str] = []
    release = threading.Event()

    def write() -> None:
        with writer.writing():
            events.append("write")

    def read_late() -> None:
        with late.reading():
            events.append("late read")

    def read_first() -> None:
        with first.reading():
            events.append("first read")
            release.wait(5)

    reading = _started(read_first)
    time.sleep(0.2)
    writing = _started(write)
    time.sleep(0.2)  # the writer waits at the turnstile's far side
    reading_late = _started(read_late)
    time.sleep(0.2)
    assert events == ["first read"]  # the late reader waits behind the writer
    release.set()
    for thread in (reading, writing, reading_late):
        thread.join(timeout=5)
    assert events == ["first read", "write", "late read"]


_WRITER = """
import sys, time
from pathlib import Path
from neoweave.store.snapshot_gate import SnapshotGate
folder = Path(sys.argv[1])
gate = SnapshotGate(folder / "reads.lock", folder / "writes.lock", folder / "waiting.lock")
for unit in range(6):
    with gate.writing():
        began = time.monotonic()
        while time.monotonic() - began < 0.15:  # busy, as a process sending a statement
            pass
        (folder / "units").write_text(str(unit + 1))
"""


def test_a_reader_waits_for_one_unit_of_a_writer_in_another_process_sending_units_back_to_back(tmp_path):
    seen = []
    for _ in range(8):
        units = tmp_path / "units"
        units.unlink(missing_ok=True)
        writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path)])
        while not units.exists() and writer.poll() is None:  # the first unit is written: the second in progress
            time.sleep(0.001)
        time.sleep(0.02)
        with _gates(tmp_path, 1)[0].reading():
            seen.append(int(units.read_text()))
        assert writer.wait(timeout=30) == 0
    # each read came in while the second unit was in progress and waited for that one only, not the ones after it
    assert seen == [2] * 8, seen


def test_readers_arriving_without_pause_delay_a_writer_a_bounded_time(tmp_path):
    writer, *readers = _gates(tmp_path, 4)
    stop = threading.Event()

    def read_without_pause(gate: SnapshotGate) -> None:
        while not stop.is_set():
            with gate.reading():
                time.sleep(0.01)

    threads = [_started(lambda gate=gate: read_without_pause(gate)) for gate in readers]
    time.sleep(0.1)
    began = time.monotonic()
    for _ in range(5):
        with writer.writing():
            pass
    took = time.monotonic() - began
    stop.set()
    for thread in threads:
        thread.join(timeout=5)
    assert took < 5 * (0.5 + 0.2), took  # each unit waits at most READERS_FIRST_WAIT_S for readers


def test_a_thread_reads_again_and_writes_inside_its_read_without_deadlock(tmp_path):
    gate, writer = _gates(tmp_path, 2)
    with gate.reading(), gate.reading(), gate.writing():  # nested: never waits for itself
        pass
    with writer.writing(), writer.writing():
        pass
    with gate.reading():
        pass
