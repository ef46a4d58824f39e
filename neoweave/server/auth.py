"""A shared secret on the HTTP servers (`serve`, `mcp --http`): every request must carry it.

The servers only read, but what they read is the team's documents: bound beyond this machine they need a lock.
With a token set (`--token` or `NEOWEAVE_TOKEN`), a request is let through when it carries the token as
`Authorization: Bearer <token>` (API clients, MCP clients, the command line) or in the `neoweave_token` cookie
(the web page); anything else gets 401 and nothing runs. Tokens are compared in constant time. A browser opens
the web page once as `/?token=<token>`: the answer sets the cookie (HttpOnly, SameSite=Strict) and redirects to
`/` so the token leaves the address bar and the history. Binding beyond localhost without a token is refused
unless `--insecure` says so (`require_token_for`).
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

from neoweave.errors import NeoweaveError

TOKEN_ENV = "NEOWEAVE_TOKEN"
COOKIE = "neoweave_token"
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
MIN_TOKEN_CHARS = 16

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def require_token_for(host: str, token: str | None, *, insecure: bool, command: str) -> None:
    """Refuse a server bound beyond localhost without a token (unless `insecure`), or with a guessable one."""
    if token is not None and len(token) < MIN_TOKEN_CHARS:
        raise NeoweaveError(f"{command}: --token must be at least {MIN_TOKEN_CHARS} characters, not {len(token)}",
                            hint="e.g. python -c 'import secrets; print(secrets.token_urlsafe(24))'")
    if host not in LOCAL_HOSTS and token is None and not insecure:
        raise NeoweaveError(f"{command}: binding {host} makes the graph readable by anyone who can reach it; "
                            "refusing without a token",
                            hint=f"pass --token (or set {TOKEN_ENV}); --insecure serves without one")


def _matches(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode("utf-8"), token.encode("utf-8"))


class RequireToken:
    """ASGI middleware: 401 for any HTTP request without the token (see the module docstring)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan events carry no request
            await self.app(scope, receive, send)
            return
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope.get("headers", [])}
        bearer = headers.get("authorization", "")
        given = bearer[7:].strip() if bearer[:7].lower() == "bearer " else None
        cookie = SimpleCookie()
        cookie.load(headers.get("cookie", ""))
        from_cookie = cookie[COOKIE].value if COOKIE in cookie else None
        if _matches(given, self.token) or _matches(from_cookie, self.token):
            await self.app(scope, receive, send)
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if scope.get("method") == "GET" and _matches((query.get("token") or [None])[0], self.token):
            await _redirect_with_cookie(send, scope.get("path", "/"), self.token)
            return
        await _unauthorized(send)


async def _redirect_with_cookie(send: Send, path: str, token: str) -> None:
    cookie = f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict"
    await send({"type": "http.response.start", "status": 303,
                "headers": [(b"location", path.encode("latin-1")), (b"set-cookie", cookie.encode("latin-1")),
                            (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": b""})


async def _unauthorized(send: Send) -> None:
    body = json.dumps({"error": "a token is required",
                       "hint": "send Authorization: Bearer <token>, or open the page once as /?token=<token>"}
                      ).encode("utf-8")
    await send({"type": "http.response.start", "status": 401,
                "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b'Bearer realm="neoweave"'),
                            (b"content-length", str(len(body)).encode("latin-1"))]})
    await send({"type": "http.response.body", "body": body})
