"""Application sessions sent by the real sentry-sdk from a process of its own, as a backend or a job
with `release=` sends them (the e2e tests of release health and the docs' screenshots share it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEALTHY, ERRORED, CRASHED = "", "errored", "crashed"  # how a session ends

# argv 1 the DSN, 2 the sessions as JSON {release: [[user, ending], ...]}: the ending "" (healthy),
# "errored" (a handled error was reported) or "crashed" (an exception nothing caught); one init per
# release, in one process.
SCRIPT = '''
import json
import sys

import sentry_sdk
from sentry_sdk.utils import event_from_exception

for release, sessions in json.loads(sys.argv[2]).items():
    sentry_sdk.init(dsn=sys.argv[1], release=release, environment="production")
    scope = sentry_sdk.get_isolation_scope()
    for user, ending in sessions:
        scope.set_user({"id": user})
        scope.start_session()
        if ending == "errored":
            try:
                raise TimeoutError("the payment gateway did not answer")
            except TimeoutError:
                sentry_sdk.capture_exception()
        elif ending == "crashed":
            try:
                raise KeyError("basket")
            except KeyError:
                event, hint = event_from_exception(sys.exc_info(), client_options=sentry_sdk.get_client().options,
                                                   mechanism={"type": "shop", "handled": False})
                sentry_sdk.capture_event(event, hint=hint)
        scope.end_session()
    sentry_sdk.flush(10)
'''


def send_sessions(work: Path, dsn: str, releases: dict[str, list[tuple[str, str]]]) -> None:
    """Run each release's sessions ((user, ending) each, in order) in one sentry-sdk process reporting to `dsn`."""
    script = work / "sessions.py"
    script.write_text(SCRIPT)
    subprocess.run([sys.executable, str(script), dsn, json.dumps(releases)], capture_output=True, text=True,
                   timeout=60, check=True)
