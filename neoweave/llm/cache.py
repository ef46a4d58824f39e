"""The response cache key: model + messages + every parameter that changes the answer."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def cache_key(model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    payload = json.dumps({"model": model, "messages": messages, "params": params}, sort_keys=True,
                         ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()
