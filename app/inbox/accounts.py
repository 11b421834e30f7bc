"""Who may use the console from another machine, and their signed-in sessions.

From this machine (loopback) the console is open. From anywhere else it needs a sign-in: users
come from the database (added with the CLI below) or from LOOKOUT_CONSOLE_USERS
(`name:role:hash` entries, comma-separated, hashes made with the CLI's `hash`). There is no
default user and no default password. Roles: `viewer` reads, `maintainer` also changes states
and deletes issues. Failed sign-ins are throttled per name and per client address (`Throttle`).
Passwords are kept as scrypt hashes; a session is a random token in a cookie, stored only as its
SHA-256.

    .venv/bin/python -m app.inbox.accounts add NAME --role maintainer   # asks for the password
    .venv/bin/python -m app.inbox.accounts hash                         # for LOOKOUT_CONSOLE_USERS
"""

from __future__ import annotations

import argparse
import base64
import getpass
import hashlib
import hmac
import http.cookies
import ipaddress
import os
import secrets
import sys
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import sqlalchemy
from sqlalchemy import delete, insert, select

from app.models import ConsoleSession, ConsoleUser

ROLES = ("viewer", "maintainer")
SESSION_S = 7 * 86400
COOKIE = "lookout_session"
USERS = ConsoleUser.__table__
SESSIONS = ConsoleSession.__table__
_N, _R, _P = 2**14, 8, 1


class AccountError(ValueError):
    """A user that cannot be added, or a LOOKOUT_CONSOLE_USERS entry that cannot be read."""


@dataclass(frozen=True)
class Viewer:
    name: str
    role: str

    @property
    def may_change(self) -> bool:
        return self.role == "maintainer"


def from_loopback(address: str) -> bool:
    """Whether a client address is this machine's (also as an IPv4-mapped IPv6 address, the way
    Node's proxies report an IPv4 client: `::ffff:127.0.0.1`)."""
    try:
        found = ipaddress.ip_address(address)
    except ValueError:
        return False
    if isinstance(found, ipaddress.IPv6Address) and found.ipv4_mapped is not None:
        found = found.ipv4_mapped
    return found.is_loopback


def from_this_machine(peer: str, forwarded_for: str = "") -> bool:
    """Whether a request comes from this machine (where the console needs no sign-in): its peer is
    loopback, and so is every address in its X-Forwarded-For, which a proxy on this machine (a
    reverse proxy, the dev server's) adds for the client it serves. The header can only take
    trust away: a client elsewhere that sends it still has its own address as the peer."""
    forwarded = [a.strip() for a in forwarded_for.split(",") if a.strip()]
    return from_loopback(peer) and all(from_loopback(a) for a in forwarded)


def session_cookie(token: str, max_age: int, secure: bool) -> str:
    """The Set-Cookie value for a session token ("" with max_age 0 ends it): HttpOnly, so page
    scripts never see it; SameSite=Strict, so other sites' pages cannot use it."""
    return (f"{COOKIE}={token}; Path=/; Max-Age={max_age}; HttpOnly; SameSite=Strict"
            + ("; Secure" if secure else ""))


def cookie_token(cookie_header: str) -> str:
    """The session token in a Cookie request header ("" if none)."""
    jar = http.cookies.SimpleCookie()
    try:
        jar.load(cookie_header)
    except http.cookies.CookieError:
        return ""
    return jar[COOKIE].value if COOKIE in jar else ""


def hash_password(password: str) -> str:
    salt = os.urandom(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=_N, r=_R, p=_P, dklen=32)
    return f"scrypt${_N}${_R}${_P}${base64.b64encode(salt).decode()}${base64.b64encode(digest).decode()}"


def verify_password(password: str, stored: str) -> bool:
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        expected = base64.b64decode(digest)
        found = hashlib.scrypt(password.encode(), salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p),
                               dklen=len(expected))
    except (ValueError, TypeError):
        return False
    return kind == "scrypt" and hmac.compare_digest(found, expected)


def env_users(env: Mapping[str, str] = os.environ) -> dict[str, tuple[str, str]]:
    """LOOKOUT_CONSOLE_USERS as {name: (role, hash)}; `AccountError` naming a bad entry."""
    users: dict[str, tuple[str, str]] = {}
    for entry in filter(None, (e.strip() for e in env.get("LOOKOUT_CONSOLE_USERS", "").split(","))):
        name, _, rest = entry.partition(":")
        role, _, stored = rest.partition(":")
        if not name or role not in ROLES or not stored.startswith("scrypt$"):
            raise AccountError(
                f"LOOKOUT_CONSOLE_USERS entry {name or entry[:20]!r} must be name:role:hash, the role one of "
                f"{', '.join(ROLES)} and the hash from `python -m app.inbox.accounts hash`."
            )
        users[name] = (role, stored)
    return users


class Accounts:
    def __init__(self, engine: sqlalchemy.Engine, from_env: Mapping[str, tuple[str, str]] | None = None) -> None:
        self.engine = engine
        self.from_env = dict(env_users() if from_env is None else from_env)

    def add_user(self, name: str, role: str, password: str) -> None:
        if role not in ROLES:
            raise AccountError(f"The role must be one of {', '.join(ROLES)}, not {role!r}.")
        if len(password) < 8:
            raise AccountError("The password must have at least 8 characters.")
        if not name.strip() or ":" in name or "," in name:
            raise AccountError("The name must not be empty or contain ':' or ','.")
        with self.engine.begin() as connection:
            if connection.execute(select(USERS.c.id).where(USERS.c.name == name)).first():
                raise AccountError(f"There is already a user {name!r}.")
            connection.execute(insert(USERS).values(
                name=name, role=role, password_hash=hash_password(password), created_at=time.time(),
            ))

    def authenticate(self, name: str, password: str) -> Viewer | None:
        if name in self.from_env:
            role, stored = self.from_env[name]
        else:
            with self.engine.connect() as connection:
                row = connection.execute(select(USERS.c.role, USERS.c.password_hash).where(USERS.c.name == name)).first()
            if row is None:
                verify_password(password, hash_password("timing"))  # as slow as for a real user
                return None
            role, stored = row
        return Viewer(name, role) if verify_password(password, stored) else None

    def start_session(self, viewer: Viewer, now: float | None = None) -> str:
        token = secrets.token_urlsafe(32)
        now = time.time() if now is None else now
        with self.engine.begin() as connection:
            connection.execute(delete(SESSIONS).where(SESSIONS.c.expires_at < now))
            connection.execute(insert(SESSIONS).values(
                token_hash=_digest(token), name=viewer.name, role=viewer.role, expires_at=now + SESSION_S,
            ))
        return token

    def session(self, token: str, now: float | None = None) -> Viewer | None:
        if not token:
            return None
        with self.engine.connect() as connection:
            row = connection.execute(select(SESSIONS.c.name, SESSIONS.c.role, SESSIONS.c.expires_at).where(
                SESSIONS.c.token_hash == _digest(token),
            )).first()
        if row is None or row[2] < (time.time() if now is None else now):
            return None
        return Viewer(row[0], row[1])

    def end_session(self, token: str) -> None:
        with self.engine.begin() as connection:
            connection.execute(delete(SESSIONS).where(SESSIONS.c.token_hash == _digest(token)))


class Throttle:
    """Failed sign-ins, counted per name and per client address: after `limit` failures within
    `window_s`, that name or address must wait until the oldest of them is `window_s` old. Kept
    in memory, so each backend process counts its own."""

    def __init__(self, limit: int = 5, window_s: float = 900.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit, self.window_s, self.clock = limit, window_s, clock
        self._failures: dict[str, deque[float]] = {}

    def wait_s(self, *keys: str) -> float:
        """How long the slowest of `keys` must still wait before trying again (0: it may try now)."""
        now = self.clock()
        wait = 0.0
        for key in keys:
            failures = self._failures.get(key)
            while failures and failures[0] <= now - self.window_s:
                failures.popleft()
            if failures is not None and not failures:
                del self._failures[key]
            elif failures is not None and len(failures) >= self.limit:
                wait = max(wait, failures[0] + self.window_s - now)
        return wait

    def failed(self, *keys: str) -> None:
        for key in keys:
            self._failures.setdefault(key, deque()).append(self.clock())

    def succeeded(self, *keys: str) -> None:
        for key in keys:
            self._failures.pop(key, None)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.inbox.accounts", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    add = commands.add_parser("add", help="add a user to the database (asks for the password)")
    add.add_argument("name")
    add.add_argument("--role", choices=ROLES, default="viewer")
    commands.add_parser("hash", help="print the hash of a password, for LOOKOUT_CONSOLE_USERS")
    args = parser.parse_args(argv)
    password = getpass.getpass("Password: ") if sys.stdin.isatty() else sys.stdin.readline().rstrip("\n")
    if args.command == "hash":
        print(hash_password(password))
        return 0
    from app import db

    engine = db.engine()
    db.migrate(engine)
    try:
        Accounts(engine, from_env={}).add_user(args.name, args.role, password)
    except AccountError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(f"added {args.name} ({args.role})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
