"""A second Lookout playing Sentry for the first (its server, database, project and upload token), the
frames a real chunk's error has under node, and waiting for an event in the second Lookout's inbox."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy
from sqlalchemy import select

from app import db
from app.inbox.reading import InboxReader
from app.ingest.store import InboxStore
from app.projects.registry import Projects
from app.settings import Settings
from app.sourcemaps import own_build
from app.sourcemaps.tables import BUILDS, FILES
from app.sourcemaps.tokens import Tokens
from reflex_lookout.dsn import Dsn
from reflex_lookout.sourcemaps.upload_settings import UploadSettings
from tests.environment import LOCAL_DSN
from tests.reliability.cluster import Tunnels
from tests.sourcemaps.reflex_like_build import V8_FRAME

# Import the lazy chunk and throw from its `boom`; print the error's V8 stack as JSON.
RUNNER = """const [chunk] = process.argv.slice(2);
const module = await import(chunk);
try { module.boom(42); } catch (error) { console.log(JSON.stringify(error.stack)); }
"""


@dataclass
class SecondLookout:
    """The Lookout playing Sentry: its server, its database, the project the maps go to and a token for it."""
    server: Tunnels
    engine: sqlalchemy.Engine
    project_id: int
    public_key: str
    token: str

    def settings(self, **env: str) -> Settings:
        """The first Lookout's settings in Sentry mode, uploading to this one (`env` overrides)."""
        return Settings.from_env({
            "SENTRY_DSN": f"http://{self.public_key}@127.0.0.1:{self.server.port}/{self.project_id}",
            "SENTRY_URL": self.server.url, "SENTRY_AUTH_TOKEN": self.token, "SENTRY_ORG": "lookout",
            "SENTRY_PROJECT": str(self.project_id), **env,
        })

    def uploads(self, **env: str) -> UploadSettings:
        """What the first Lookout's build step gets from `settings(**env)`."""
        return own_build.upload_settings(self.settings(**env))

    def stop(self) -> None:
        self.server.stop()
        self.engine.dispose()

    def stored_builds(self) -> list[tuple[int | None, dict[str, str]]]:
        """Each uploaded build's project and its files, debug ID → asset path."""
        with self.engine.connect() as connection:
            builds = connection.execute(select(BUILDS.c.id, BUILDS.c.project_id).order_by(BUILDS.c.id)).all()
            return [(project_id, dict(connection.execute(
                select(FILES.c.debug_id, FILES.c.asset_path).where(FILES.c.build == build)).all()))
                for build, project_id in builds]


def second_lookout(tmp: Path, port: int | None = None, start: bool = True) -> SecondLookout:
    """A second Lookout's database with a project "lookout-web" and an upload token for it, and
    its server on `port` (started unless `start` is false)."""
    url = f"sqlite:///{tmp / 'second.db'}"
    engine = db.engine(url)
    db.migrate(engine)
    InboxStore(engine).ensure_project(Dsn.parse(LOCAL_DSN))  # its own project, 1
    project = Projects(engine).add("lookout-web")
    _row, token = Tokens(engine).add(project.id, label="first Lookout")
    server = Tunnels(env={
        "DATABASE_URL": url, "SENTRY_DSN": "", "LOOKOUT_LOCAL_DSN": LOCAL_DSN, "LOOKOUT_SERVER_MONITORING": "off",
        "REFLEX_WEB_WORKDIR": str(tmp / "second-web"),  # no builds of its own
    }, log=tmp / "second.log", workers=1, module="app.standalone.inbox:app")
    if port is not None:
        server.port = port
    if start:
        server.start()
    return SecondLookout(server, engine, project.id, project.public_key, token)


def serving_second_lookout(tmp: Path) -> Iterator[SecondLookout]:
    """A second Lookout started in `tmp`, for a fixture to `yield from`: stopped afterwards."""
    found = second_lookout(tmp)
    try:
        yield found
    finally:
        found.stop()


def frames_of(chunk: Path, url: str, work: Path) -> list[dict]:
    """The frames, outermost first, of the error the chunk's `boom` throws under node, each as the
    browser SDK sends it, naming the chunk by the URL it is served at."""
    runner = work / "run.mjs"
    runner.write_text(RUNNER)
    stack = json.loads(subprocess.run(["node", str(runner), chunk.as_uri()], check=True, capture_output=True,
                                      text=True).stdout)
    frames = [{"filename": url, "abs_path": url, "function": found["function"] or "?", "lineno": int(found["line"]),
               "colno": int(found["column"]), "in_app": True}
              for found in map(V8_FRAME.match, stack.splitlines()[1:]) if found and found["url"] == chunk.as_uri()]
    assert frames, stack
    return frames[::-1]


def stored_event(lookout: SecondLookout, event_id: str, timeout: float = 30) -> dict:
    """The event as the second Lookout's inbox keeps it, once its feeder has read it in."""
    deadline = time.monotonic() + timeout
    while (found := InboxReader(lookout.engine).event(event_id)) is None:
        assert time.monotonic() < deadline, f"event {event_id} not in the inbox:\n{lookout.server.log_tail()}"
        time.sleep(0.2)
    return found["event"]
