"""Who may use the console from another machine, and their signed-in sessions.

From this machine the console is open (app/console/access.py says what counts as this machine). From
anywhere else it needs a sign-in: users come from the database (added with the CLI below) or from
LOOKOUT_CONSOLE_USERS (`name:role:hash` entries, comma-separated, hashes made with the CLI's
`hash`). There is no default user and no default password. Roles: `viewer` reads, `maintainer`
also changes states and deletes issues. Failed sign-ins are throttled per name and per client
address (`Throttle`). Passwords are kept as scrypt hashes, and an unknown name costs the same one
scrypt run as a known one. A session is a random token in a cookie, stored only as its SHA-256;
each use of it re-reads its user, so a removed user is signed out at once and a changed role
applies at once. Removing a user also revokes their API tokens (app/webapi/tokens.py), in the same
transaction, and their id is never given to a user added later (the name may be).

    .venv/bin/python -m app.console.accounts add NAME --role maintainer   # asks for the password
    .venv/bin/python -m app.console.accounts role NAME --role viewer      # ends NAME's sessions
    .venv/bin/python -m app.console.accounts remove NAME                  # ends NAME's sessions, revokes their API tokens
    .venv/bin/python -m app.console.accounts hash                         # for LOOKOUT_CONSOLE_USERS
"""

from __future__ import annotations

import argparse
import base64
import getpass
import hashlib
import hmac
import http.cookies
import os
import secrets
import sys
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import sqlalchemy
from sqlalchemy import delete, insert, select, update

from app.console.models import ApiToken, ConsoleSession, ConsoleUser
from app.tables import table_of

ROLES = ("viewer", "maintainer")
SESSION_S = 7 * 86400
COOKIE = "lookout_session"
USERS = table_of(ConsoleUser)
SESSIONS = table_of(ConsoleSession)
API_TOKENS = table_of(ApiToken)  # the web API's tokens (app/webapi/tokens.py): a user's go with the user
_N, _R, _P = 2**14, 8, 1
MAX_NAME_CHARS = 128
# What an unknown name's password is checked against: the same scrypt parameters as a real hash,
# a digest nothing hashes to, so a sign-in costs one scrypt run whether or not the name exists.
UNKNOWN_USER_HASH = (f"scrypt${_N}${_R}${_P}${base64.b64encode(os.urandom(16)).decode()}"
                     f"${base64.b64encode(os.urandom(32)).decode()}")


class AccountError(ValueError):
    """A user that cannot be added, or a LOOKOUT_CONSOLE_USERS entry that cannot be read."""


@dataclass(frozen=True)
class Viewer:
    name: str
    role: str

    @property
    def may_change(self) -> bool:
        return self.role == "maintainer"


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
                f"{', '.join(ROLES)} and the hash from `python -m app.console.accounts hash`."
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
        if not name.strip() or ":" in name or "," in name or len(name) > MAX_NAME_CHARS:
            raise AccountError(
                f"The name must not be empty, contain ':' or ',', or be over {MAX_NAME_CHARS} characters.")
        with self.engine.begin() as connection:
            if connection.execute(select(USERS.c.id).where(USERS.c.name == name)).first():
                raise AccountError(f"There is already a user {name!r}.")
            connection.execute(insert(USERS).values(
                name=name, role=role, password_hash=hash_password(password), created_at=time.time(),
            ))

    def authenticate(self, name: str, password: str) -> Viewer | None:
        """The user, if the password is theirs: one scrypt run whether or not the name exists."""
        if name in self.from_env:
            role, stored = self.from_env[name]
        else:
            with self.engine.connect() as connection:
                row = connection.execute(select(USERS.c.role, USERS.c.password_hash).where(USERS.c.name == name)).first()
            role, stored = row if row is not None else ("", UNKNOWN_USER_HASH)
        return Viewer(name, role) if verify_password(password, stored) and role else None

    def set_role(self, name: str, role: str) -> None:
        """Give a database user another role; their sessions end (they sign in again)."""
        if role not in ROLES:
            raise AccountError(f"The role must be one of {', '.join(ROLES)}, not {role!r}.")
        with self.engine.begin() as connection:
            if connection.execute(update(USERS).where(USERS.c.name == name).values(role=role)).rowcount == 0:
                raise _not_in_database(name)
            connection.execute(delete(SESSIONS).where(SESSIONS.c.name == name))

    def remove_user(self, name: str, now: float | None = None) -> None:
        """Remove a database user, end their sessions and revoke their API tokens (as of `now`; a
        token revoked before keeps its date), all in one transaction. Their id is never reused, so
        a user added later under the same name has none of these tokens (app/webapi/tokens.py)."""
        with self.engine.begin() as connection:
            removed = connection.execute(delete(USERS).where(USERS.c.name == name).returning(USERS.c.id)).first()
            if removed is None:
                raise _not_in_database(name)
            connection.execute(delete(SESSIONS).where(SESSIONS.c.name == name))
            connection.execute(update(API_TOKENS).where(API_TOKENS.c.user_id == removed.id, API_TOKENS.c.revoked_at.is_(None))
                               .values(revoked_at=time.time() if now is None else now))

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
        """The user of a live session, with the role they have now (None once they are removed)."""
        if not token:
            return None
        with self.engine.connect() as connection:
            row = connection.execute(
                select(SESSIONS.c.name, SESSIONS.c.expires_at, USERS.c.role)
                .select_from(SESSIONS.outerjoin(USERS, USERS.c.name == SESSIONS.c.name))
                .where(SESSIONS.c.token_hash == _digest(token))
            ).first()
        if row is None or row.expires_at < (time.time() if now is None else now):
            return None
        role = self.from_env[row.name][0] if row.name in self.from_env else row.role
        return Viewer(row.name, role) if role in ROLES else None

    def end_session(self, token: str) -> None:
        with self.engine.begin() as connection:
            connection.execute(delete(SESSIONS).where(SESSIONS.c.token_hash == _digest(token)))


class Throttle:
    """Failed sign-ins, counted per name and per client address: after `limit` failures within
    `window_s`, that name or address must wait until the oldest of them is `window_s` old. Kept
    in memory, so each backend process counts its own, for at most `max_keys` names and
    addresses: past that, the one whose last failure is oldest is forgotten."""

    def __init__(self, limit: int = 5, window_s: float = 900.0,
                 clock: Callable[[], float] = time.monotonic, max_keys: int = 10_000) -> None:
        self.limit, self.window_s, self.clock, self.max_keys = limit, window_s, clock, max_keys
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()  # least recently failed first

    def __len__(self) -> int:
        return len(self._failures)

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
            self._failures.setdefault(key, deque(maxlen=self.limit)).append(self.clock())
            self._failures.move_to_end(key)
        while len(self._failures) > self.max_keys:
            self._failures.popitem(last=False)

    def succeeded(self, *keys: str) -> None:
        for key in keys:
            self._failures.pop(key, None)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _not_in_database(name: str) -> AccountError:
    return AccountError(
        f"There is no user {name!r} in the database (users of LOOKOUT_CONSOLE_USERS are changed there).")


def main(argv: list[str] | None = None, engine: sqlalchemy.Engine | None = None) -> int:
    """The command line, on `engine` (by default the configured database, migrated)."""
    parser = argparse.ArgumentParser(prog="python -m app.console.accounts", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    add = commands.add_parser("add", help="add a user to the database (asks for the password)")
    add.add_argument("name")
    add.add_argument("--role", choices=ROLES, default="viewer")
    role = commands.add_parser("role", help="change a database user's role (ends their sessions)")
    role.add_argument("name")
    role.add_argument("--role", choices=ROLES, required=True)
    remove = commands.add_parser("remove", help="remove a database user (ends their sessions, revokes their API tokens)")
    remove.add_argument("name")
    commands.add_parser("hash", help="print the hash of a password, for LOOKOUT_CONSOLE_USERS")
    args = parser.parse_args(argv)
    if args.command == "hash":
        print(hash_password(_password()))
        return 0
    from app import db

    engine = engine if engine is not None else db.migrated_engine()
    accounts = Accounts(engine, from_env={})
    try:
        if args.command == "add":
            accounts.add_user(args.name, args.role, _password())
            print(f"added {args.name} ({args.role})")
        elif args.command == "role":
            accounts.set_role(args.name, args.role)
            print(f"{args.name} is now {args.role}; their sessions have ended")
        else:
            accounts.remove_user(args.name)
            print(f"removed {args.name}; their sessions have ended and their API tokens are revoked")
    except AccountError as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


def _password() -> str:
    return getpass.getpass("Password: ") if sys.stdin.isatty() else sys.stdin.readline().rstrip("\n")


if __name__ == "__main__":
    sys.exit(main())
