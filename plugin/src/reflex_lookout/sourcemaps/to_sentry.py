"""The source maps of the app's production builds, uploaded to Sentry or to a Lookout (its upload API
is Sentry's), so that it symbolicates the browser events the tunnel forwards to it.

When the settings want uploads (upload_settings.py: a host app with SENTRY_AUTH_TOKEN; Lookout in
Sentry mode), with SENTRY_AUTH_TOKEN, SENTRY_ORG and SENTRY_PROJECT (SENTRY_URL for a server that is
not sentry.io; an organization token, `sntrys_…`, names its organization itself), the build step
(build_step.py) uploads each new bundle (bundle.py) once it is saved (`after_build`), with the pinned
sentry-cli (sentry_cli.py).

- The outcome is kept in the bundle, in `sentry-upload.json` (state ok or failed, at, url, org,
  project, sentence). A failed upload (Sentry down, a refused token…) never fails the build: it is
  logged with sentry-cli's own sentence and retried at the next start (`retry_at_start`, a lifespan
  task: in a thread of its own, the start not waiting for it, newest bundle first, at most
  `keep` of the settings, by one process of the backend at a time: Lookout's; a host app has none). A bundle uploaded to another
  URL, organization or project than the settings name now counts as not uploaded.
- The token is in no log line, status file or page.
- Uploads wanted without those variables: one log line per build says that the maps stay local.
  Not wanted (Lookout's local mode): nothing is uploaded, nothing said.

`report` is the home page's sentence on the newest build.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from reflex_lookout.sourcemaps import bundle, sentry_cli
from reflex_lookout.sourcemaps.bundle import BundleError
from reflex_lookout.sourcemaps.sentry_cli import UPLOAD_TIMEOUT_S, Target
from reflex_lookout.sourcemaps.upload_settings import UploadSettings

logger = logging.getLogger(__name__)

STATUS = "sentry-upload.json"
LOCK = ".sentry-upload.lock"  # beside the bundles: one process of the backend retries at a time
MAX_STATUS_BYTES = 64 * 1024
STAY_LOCAL = "Source maps stay local: set SENTRY_AUTH_TOKEN, SENTRY_ORG and SENTRY_PROJECT to upload them"


@dataclass(frozen=True)
class Upload:
    """One upload's outcome, as `sentry-upload.json` keeps it."""

    state: str  # "ok" or "failed"
    at: float
    url: str
    org: str
    project: str
    sentence: str

    def is_to(self, target: Target) -> bool:
        return (self.url, self.org, self.project) == (target.url, target.org, target.project)


def missing(settings: UploadSettings) -> list[str]:
    """The variables an upload still needs (empty: none)."""
    token = settings.token
    return [name for name, value in (
        ("SENTRY_AUTH_TOKEN", token),
        ("SENTRY_ORG", settings.org or token.startswith(sentry_cli.ORG_TOKEN_PREFIX)),
        ("SENTRY_PROJECT", settings.project),
    ) if not value]


def after_build(directory: Path, settings: UploadSettings, cli: Path) -> Upload | None:
    """The build step's part: upload the bundle just saved in `directory` (when uploads are wanted),
    or say that its maps stay local. Never raises: a build is never failed by its upload."""
    if not settings.wanted:
        return None
    target = Target.of(settings)
    if target is None:
        logger.warning("source maps of build %s stay local: no %s", directory.name, " and ".join(missing(settings)))
        return None
    try:
        return upload_bundle(directory, target, cli)
    except Exception as exc:  # noqa: BLE001 (the build goes on; this is logged, and retried at start)
        logger.warning("source maps of build %s not uploaded to Sentry: %s", directory.name,
                       sentry_cli.redacted(str(exc), target.token))
        return None


def upload_bundle(directory: Path, target: Target, cli: Path,
                  timeout: float = UPLOAD_TIMEOUT_S) -> Upload:
    """Upload one bundle's chunks and maps; keep and log the outcome, and return it."""
    try:
        manifest = bundle.read_manifest(directory)
        ok, sentence = sentry_cli.upload(directory, manifest, target, cli, timeout)
        if ok:
            sentence = f"{len(manifest.files)} chunks and their maps uploaded"
    except (BundleError, OSError) as exc:
        ok, sentence = False, sentry_cli.redacted(str(exc), target.token)
    upload = Upload("ok" if ok else "failed", time.time(), target.url, target.org, target.project, sentence)
    _write_status(directory, upload)
    if ok:
        logger.info("source maps of build %s uploaded to Sentry (project %s)", directory.name, target.project)
    else:
        logger.warning("source maps of build %s not uploaded to Sentry: %s; retried at the next start",
                       directory.name, upload.sentence)
    return upload


def read_status(directory: Path) -> Upload | None:
    """The bundle's last upload, or None (never tried, or a status file that cannot be read)."""
    path = directory / STATUS
    try:
        if path.stat().st_size > MAX_STATUS_BYTES:
            return None
        value = json.loads(path.read_text("utf-8"))
        found = Upload(**{name: value[name] for name in Upload.__dataclass_fields__})
    except (OSError, ValueError, TypeError, KeyError, RecursionError):
        return None
    texts = (found.state, found.url, found.org, found.project, found.sentence)
    if found.state not in ("ok", "failed") or not all(isinstance(t, str) for t in texts) \
            or type(found.at) not in (int, float):
        return None
    return found


def _write_status(directory: Path, upload: Upload) -> None:
    incoming = directory / f".{STATUS}.{os.getpid()}"
    incoming.write_text(json.dumps(asdict(upload), indent=1), "utf-8")
    incoming.replace(directory / STATUS)


def pending(bundles: Path, target: Target, keep: int) -> list[Path]:
    """The newest `keep` bundles not uploaded to `target` yet, newest first."""
    found = []
    for path, _manifest in bundle.present(bundles)[:keep]:
        status = read_status(path)
        if status is None or status.state != "ok" or not status.is_to(target):
            found.append(path)
    return found


def retry_pending(bundles: Path, settings: UploadSettings, cli: Path) -> list[Upload]:
    """At start: upload the bundles whose upload failed or never ran (uploads wanted, with a target),
    unless another process is doing it now. Blocking: run it in a thread."""
    target = Target.of(settings)
    if not settings.wanted or target is None or not bundles.is_dir():
        return []
    with _locked(bundles) as mine:
        if not mine:
            return []
        return [upload_bundle(path, target, cli) for path in pending(bundles, target, settings.keep)]


@contextlib.asynccontextmanager
async def retry_at_start(settings: UploadSettings, cli: Path, bundles: Path | None = None) -> AsyncIterator[None]:
    """Lifespan task: `retry_pending` in a thread of its own, so the start does not wait for Sentry."""
    if settings.wanted and Target.of(settings) is not None:
        threading.Thread(target=_retry_logged, args=(bundles or bundle.root(), settings, cli),
                         name="lookout-sentry-upload", daemon=True).start()
    yield


def _retry_logged(bundles: Path, settings: UploadSettings, cli: Path) -> None:
    try:
        retry_pending(bundles, settings, cli)
    except Exception:  # a thread's last resort: the server goes on
        logger.exception("source maps not uploaded to Sentry at start")


@contextlib.contextmanager
def _locked(bundles: Path) -> Iterator[bool]:
    """Take the bundles' upload lock unless another process holds it (an flock: released when its
    process dies); whether it is ours."""
    with (bundles / LOCK).open("a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def report(settings: UploadSettings, bundles: Path | None = None) -> str:
    """Lookout's home page's sentence on the newest build's maps in Sentry mode ("" when uploads are not
    wanted, or when no production build is here). Reads files: call it off the event loop."""
    if not settings.wanted:
        return ""
    found = bundle.present(bundles or bundle.root())
    if not found:
        return ""
    target = Target.of(settings)
    if target is None:
        return STAY_LOCAL
    path, manifest = found[0]
    status = read_status(path)
    if status is None or not status.is_to(target):
        return f"Source maps of build {manifest.build_id} are not uploaded to Sentry yet: each start uploads them"
    if status.state == "ok":
        return f"Source maps of build {manifest.build_id} uploaded to Sentry at {_when(status.at)}"
    return f"Upload to Sentry failed: {status.sentence}; retried at the next start"


def _when(timestamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(timestamp))
