"""One bundle's chunks and maps (bundle.py) uploaded with the pinned sentry-cli (a host app's: the PyPI
wheel `sentry-cli`; Lookout's: `make setup` installs it under `.tools/`), as to_sentry.py does it:

    sentry-cli [--url URL] sourcemaps upload [--org ORG] --project PROJECT --url-prefix ~/<frontend path>
               --no-rewrite --strict <the bundle's chunks and maps>

- The maps go as the build step wrote them (`--no-rewrite`): sentry-cli's rewrite (flattening index
  maps, inlining sources) would drop the field that carries their Python pages (map_pages.py), and
  Vite's maps are flat and hold their sources already.

- Only the chunks and maps the manifest names go: they are linked into a temporary directory inside
  the bundle, in the served layout, so their URLs are `~/assets/x.js` (any other map in the bundle,
  a stylesheet's, stays out). Sentry finds them by the debug IDs injected at build.
- The token goes in SENTRY_AUTH_TOKEN, never on the command line; no other SENTRY_* variable of this
  process is passed on, no `.env` is read (SENTRY_LOAD_DOTENV=0), no update check is made.
- A failure is sentry-cli's own sentence, its `error:` line with the innermost `Caused by:` line, with
  the token blanked out wherever it appears. sentry-cli sets no overall time limit on its requests:
  the run has one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from reflex_lookout.sourcemaps import bundle
from reflex_lookout.sourcemaps.bundle import Manifest
from reflex_lookout.sourcemaps.upload_settings import UploadSettings

UPLOAD_TIMEOUT_S = 180  # an upload of Lookout's build takes about 0.4 s; sentry-cli retries 5xx for ~25 s
MAX_SENTENCE = 500
ORG_TOKEN_PREFIX = "sntrys_"  # an organization token: its organization (and URL) come with it


@dataclass(frozen=True)
class Target:
    """Where the maps go: Sentry's URL ("" for sentry-cli's default, sentry.io), organization
    ("" when the token names it) and project, and the token (never in its repr)."""

    url: str
    org: str
    project: str
    token: str = field(repr=False)

    @classmethod
    def of(cls, settings: UploadSettings) -> Target | None:
        """The target the settings name, or None when a variable it needs is missing."""
        token, org, project = settings.token, settings.org, settings.project
        if not token or not project or not (org or token.startswith(ORG_TOKEN_PREFIX)):
            return None
        return cls(settings.url, org, project, token)


def upload(directory: Path, manifest: Manifest, target: Target, cli: Path,
           timeout: float = UPLOAD_TIMEOUT_S) -> tuple[bool, str]:
    """Upload the bundle in `directory`; whether sentry-cli succeeded, and else its sentence.
    Raises BundleError or OSError when the bundle's files cannot be staged."""
    with _staged(directory, manifest) as staged:
        ok, sentence = _run(_command(cli, target, _url_prefix(manifest), staged), cli, target.token, timeout)
    return ok, redacted(sentence, target.token)


def _url_prefix(manifest: Manifest) -> str:
    """`~` and the frontend path the chunks are served under (`~/shop` for `/shop/assets/x.js`)."""
    for file in manifest.files:
        if file.asset_path.endswith("/" + file.js):
            return "~" + file.asset_path[:-len(file.js)].rstrip("/")
    return "~"


def _command(cli: Path, target: Target, url_prefix: str, staged: Path) -> list[str]:
    return [str(cli), *(["--url", target.url] if target.url else []), "sourcemaps", "upload",
            *(["--org", target.org] if target.org else []), "--project", target.project,
            "--url-prefix", url_prefix, "--no-rewrite", "--strict", str(staged)]


@contextlib.contextmanager
def _staged(directory: Path, manifest: Manifest) -> Iterator[Path]:
    """A temporary directory inside the bundle with only its chunks and their maps (hard links)."""
    with tempfile.TemporaryDirectory(prefix=".upload-", dir=directory) as temporary:
        staged = Path(temporary)
        for file in manifest.files:
            for relative in (file.js, file.map):
                source, copy = bundle.inside(directory, relative), bundle.inside(staged, relative)
                copy.parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.link(source, copy)
                except OSError:
                    shutil.copyfile(source, copy)
        yield staged


def _run(command: list[str], cli: Path, token: str, timeout: float) -> tuple[bool, str]:
    if not os.access(cli, os.X_OK):
        return False, missing_cli(cli)
    env = {name: value for name, value in os.environ.items() if not name.startswith("SENTRY_")}
    env.update({"SENTRY_AUTH_TOKEN": token, "SENTRY_LOAD_DOTENV": "0", "SENTRY_DISABLE_UPDATE_CHECK": "true",
                "RUST_BACKTRACE": "0"})
    try:
        done = subprocess.run(command, capture_output=True, env=env, timeout=timeout, check=False,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return False, f"sentry-cli did not finish within {timeout:g} s."
    except OSError as exc:
        return False, f"sentry-cli did not run ({exc})."
    if done.returncode == 0:
        return True, ""
    return False, cli_sentence(done.stderr.decode("utf-8", "replace"), done.returncode)


def missing_cli(cli: Path) -> str:
    """The sentence for a sentry-cli that is not there."""
    return (f"sentry-cli is missing ({cli} is not an executable): install reflex-lookout[sourcemaps] "
            f"(the sentry-cli wheel), or name one in LOOKOUT_SENTRY_CLI; Lookout: run `make setup`.")


def cli_sentence(output: str, returncode: int) -> str:
    """sentry-cli's own account of a failure: its `error:` line, with the innermost `Caused by:` line
    ("API request failed: sentry reported an error: Invalid token (http status: 401)")."""
    error, cause, in_causes = "", "", False
    for line in output.splitlines():
        text = line.strip()
        if line.startswith("error:") and not error:
            error = text.removeprefix("error:").strip()
        elif text == "Caused by:":
            in_causes = True
        elif in_causes and text:
            number, _, rest = text.partition(": ")
            cause = rest if number.isdigit() else text  # "0: …", "1: …" when there are several
        elif in_causes:
            in_causes = not cause  # a blank line ends the causes
    if not error:
        tail = " ".join(output.split())[-MAX_SENTENCE:]
        return f"sentry-cli failed (exit {returncode})" + (f": {tail}" if tail else ".")
    return (f"{error}: {cause}" if cause and cause != error else error)[:MAX_SENTENCE]


def redacted(text: str, token: str) -> str:
    """`text` with the token blanked out."""
    return text.replace(token, "[token]") if token else text
