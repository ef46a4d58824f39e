"""Faults as a user meets them (`neoweave.kb.faults`), each once on the small site: the embedded store killed
in the middle of `ingest` (it is restarted and the command finishes) and killed again after its restart (one
clear line), the data directory's disk full mid-ingest, a backup's disk full mid-backup. After each, the same
command run again completes and the graph equals a clean ingest's. benchmarks/faults.py counts them over many
repetitions (docs/benchmarks/faults.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from neoweave.kb import faults
from neoweave.kb.backup import read_manifest, verify_files


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> tuple[Path, Path]:
    """(the site's folder, a data directory with a clean ingest of it); both reused by the module's tests."""
    import shutil

    root = tmp_path_factory.mktemp("faults")
    site = root / "site"
    shutil.copytree(Path(__file__).parent / "data" / "site", site)
    data = root / "clean"
    run = faults.run(data, "ingest", str(site), "--no-progress")
    assert run.returncode == 0, run.stderr
    faults.stop_servers(data)
    yield site, data
    faults.stop_servers(data)


def _ingest(site: Path) -> list[str]:
    return ["ingest", str(site), "--no-progress"]


def test_store_killed_mid_ingest_is_restarted_and_the_graph_is_whole(clean, tmp_path):
    site, reference = clean
    data = tmp_path / "data"
    run = faults.run_killing(data, _ingest(site), faults.store_pid(data), delay=0.0)
    assert run.kills == 1, "the command finished before the store could be killed"
    assert run.returncode == 0 or run.clear, run.stderr[-2000:]
    if run.returncode != 0:
        assert faults.run(data, *_ingest(site)).returncode == 0
    try:
        assert faults.differences(data, reference) == []
    finally:
        faults.stop_servers(data)


def test_store_killed_again_after_its_restart_fails_with_one_clear_line(clean, tmp_path):
    site, reference = clean
    data = tmp_path / "data"
    run = faults.run_killing(data, _ingest(site), faults.store_pid(data), delay=0.0, kills=2)
    assert run.kills >= 1
    if run.returncode != 0:
        assert run.clear, run.stderr[-2000:]
        assert str(data) in run.message and "FalkorDB" in run.message, run.message
        rerun = faults.run(data, *_ingest(site))
        assert rerun.returncode == 0, rerun.stderr[-2000:]
    try:
        assert faults.differences(data, reference) == []
    finally:
        faults.stop_servers(data)


@pytest.fixture
def mountable() -> None:
    reason = faults.mount_refusal()
    if reason:
        pytest.skip(reason)


def test_disk_full_mid_ingest_says_so_and_the_rerun_completes(clean, tmp_path, mountable):
    site, reference = clean
    with faults.small_disk(tmp_path / "disk", faults.disk_use_kb(reference) * 7 // 10) as disk:
        data = disk / "data"
        run = faults.run(data, *_ingest(site))
        assert run.returncode != 0, "the ingest fit on the small disk"
        assert run.clear and "is full" in run.message and str(data) in run.message, run.stderr[-2000:]
        faults.resize_disk(disk, 16 * 1024)
        check = faults.run(data, "check")
        assert check.returncode == 0, check.stderr[-2000:]
        rerun = faults.run(data, *_ingest(site))
        assert rerun.returncode == 0, rerun.stderr[-2000:]
        assert faults.differences(data, reference) == []


def test_backup_to_a_full_disk_leaves_nothing_and_the_rerun_completes(clean, tmp_path, mountable):
    _, data = clean
    with faults.small_disk(tmp_path / "backups", 8) as disk:
        dest = disk / "b"
        run = faults.run(data, "backup", str(dest))
        assert run.clear and "no space left" in run.message and str(disk) in run.message, run.stderr[-2000:]
        assert list(disk.iterdir()) == [], "a partial backup was left"
        assert not (data / "dump.rdb").exists(), "the snapshot was left in the data directory"
        faults.resize_disk(disk, 16 * 1024)
        rerun = faults.run(data, "backup", str(dest))
        assert rerun.returncode == 0, rerun.stderr[-2000:]
        verify_files(dest, read_manifest(dest))
    faults.stop_servers(data)
