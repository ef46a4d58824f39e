"""The readers-writer gate that keeps a retrieval's reads apart from write units (`store.snapshot_gate`): two
gates on the same lock files (two processes, or two stores of one process) exclude each other, and a waiting
writer shuts out new readers."""

from __future__ import annotations

import threading
import time

from neoweave.store.snapshot_gate import SnapshotGate


def _gates(tmp_path, count: int) -> list[SnapshotGate]:
    return [SnapshotGate(tmp_path / "reads.lock", tmp_path / "writes.lock") for _ in range(count)]


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


def test_a_thread_reads_again_and_writes_inside_its_read_without_deadlock(tmp_path):
    gate, writer = _gates(tmp_path, 2)
    with gate.reading(), gate.reading(), gate.writing():  # nested: never waits for itself
        pass
    with writer.writing(), writer.writing():
        pass
    with gate.reading():
        pass
