"""Process helpers shared by the servers neoweave starts itself (FalkorDB, the local model)."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """Whether `pid` runs. A zombie (killed but not yet reaped) answers kill(0) yet counts as dead."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True
