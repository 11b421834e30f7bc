"""Who may use the tunnel: which origins may post to it (`origin_allowed`) and the CORS headers
answered to them (`cors_headers`), and which requests may read its stats (`stats_refusal`)."""

from __future__ import annotations

import hmac

from reflex_lookout.protocol.asgi import Refused, Request, Scope
from reflex_lookout.protocol.clients import all_loopback, as_address, forwarded_chain

CORS_HEADERS = [
    (b"access-control-allow-methods", b"POST, OPTIONS"),
    (b"access-control-allow-headers", b"Content-Type, Content-Encoding"),
    (b"access-control-expose-headers", b"Retry-After, X-Sentry-Rate-Limits"),
    (b"access-control-max-age", b"86400"),
    (b"vary", b"Origin"),
]


def forbidden_origin() -> Refused:
    return Refused(403, "This origin may not post to the tunnel.", "forbidden_origin")


def origin_allowed(request: Request, origins: tuple[str, ...]) -> bool:
    """Whether `request` may post: the app's own origin, or one of `origins` (LOOKOUT_TUNNEL_ALLOWED_ORIGINS)."""
    origin = request.origin
    if origin is None:
        return True  # not a browser's cross-origin request: SDKs on servers send none
    same_origin = origin.partition("://")[2] == request.host
    return same_origin or origin.rstrip("/") in origins


def cors_headers(request: Request, origins: tuple[str, ...]) -> list[tuple[bytes, bytes]]:
    """The CORS headers of an answer to `request`: none unless its origin may post (`origin_allowed`)."""
    if request.origin is None or not origin_allowed(request, origins):
        return []
    return [(b"access-control-allow-origin", request.origin.encode("latin-1")), *CORS_HEADERS]


def stats_refusal(scope: Scope, request: Request, token: str) -> Refused | None:
    """Why the stats are not answered to this request, or None. A page of another site gets them
    never (a Reflex app's own CORS layer, outside the tunnel, would let that page read them: its
    `Origin` is refused here, 403); a request with the stats token (`Authorization: Bearer`), or
    from this machine (its peer and every X-Forwarded-For address loopback, and a `Host` naming
    this machine, which a DNS-rebound name does not), gets them; anyone else 401. `token`: the stats
    token (LOOKOUT_TUNNEL_STATS_TOKEN), "" for none."""
    origin = request.origin
    if origin is not None and origin.lower().partition("://")[2] != request.host.lower():
        return Refused(403, "Pages of other sites may not read the tunnel's stats.", "forbidden_origin")
    if token and hmac.compare_digest(_bearer(scope), token.encode()):
        return None
    if all_loopback(request.peer, forwarded_chain(request.forwarded_for)) and _loopback_host(request.host):
        return None
    return Refused(401, "The tunnel's stats answer this machine only, or a request with the stats token.",
                   "unauthorized", {"WWW-Authenticate": "Bearer"} if token else None)


def _bearer(scope: Scope) -> bytes:
    """The token of an `Authorization: Bearer <token>` header (b"" for none; a repeated header is none)."""
    found = [value for name, value in scope["headers"] if name == b"authorization"]
    scheme, _, token = found[0].strip().partition(b" ") if len(found) == 1 else (b"", b"", b"")
    return token.strip() if scheme.lower() == b"bearer" else b""


def _loopback_host(host: str) -> bool:
    """Whether a `Host` header names this machine: localhost, a name under .localhost, or a loopback
    address, with or without a port."""
    host = host.strip().lower()
    if host.startswith("["):  # an IPv6 address
        name, _, port = host[1:].partition("]")
        port = port.removeprefix(":") if port.startswith(":") or not port else "x"
    else:
        name, _, port = host.partition(":")
    if (port and not port.isdigit()) or not name:
        return False
    name = name.rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    address = as_address(name)
    return address is not None and address.is_loopback
