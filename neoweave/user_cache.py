"""Where neoweave keeps what it makes or fetches once per user (the local model's weights, the ONNX export of the
embedder, the FalkorDB module): `$XDG_CACHE_HOME/neoweave/NAME`, by default ~/.cache/neoweave/NAME."""

from __future__ import annotations

import os
from pathlib import Path


def user_cache(name: str) -> Path:
    """The cache folder `name` (not created); an unset, empty or relative XDG_CACHE_HOME means ~/.cache, as XDG
    says (a relative one would name another folder in every working directory, and in the servers' `/`)."""
    configured = Path(os.environ.get("XDG_CACHE_HOME") or "")
    base = configured if configured.is_absolute() else Path.home().absolute() / ".cache"
    return base / "neoweave" / name
