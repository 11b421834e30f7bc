"""Where a mapped frame's original source is in the project, and whether it is the app's own code.

**The path.** A source map names each original source by a URL relative to the map (its `sources`
entry; the map lies beside its JavaScript file). `project_path` resolves that entry against the
directory of the asset's URL path (`/assets/x.js` → `/assets/`), percent-decoded, counting the
`..` that climb above the served root, then puts the served root where the build has it in the
project: a production build is served from `.web/build/client` (so a map of `/assets/x.js` that
names `../../../app/routes/[try]._index.jsx` means `.web/app/routes/[try]._index.jsx`), the dev
server (build "dev") serves `.web` itself (`/app/routes/x.jsx` is `.web/app/routes/x.jsx`). A
source that climbs out of the project keeps only the part within (`../` above it is dropped). An
absolute entry (`/…`, `file:///…`, `C:\\…`) is a file of some build machine: it is cut to what
follows its last `.web/` (or its first `node_modules/`, placed under `.web/`); with neither, it is
taken as a URL path on the served origin. So the path never holds the directory a build ran in:
the same sources built in `/tmp/x` and in `/work/main` give the same paths.

**In app.** The app's own code is what Reflex generates from the app's Python and the project's
files: the route modules (`.web/app/routes/`), the component modules compiled from the pages and
components (`.web/app_components/`, `.web/utils/components/`) and the project's `assets/` (served
from `.web/public/`). Everything else is not: `node_modules/` anywhere, Reflex's runtime
(`.web/utils/state.js`, `.web/utils/helpers/`, `.web/app/root.jsx` — which also holds Lookout's
monitoring glue —, `.web/app/entry.client.js`, `.web/components/`, and `.web/app_components/reflex/`,
Reflex's own compiled components), Lookout's monitoring code (`.web/app/lookout_sdk.js`, `.web/app/lookout_loader.js`,
`app/monitoring/`), and any path this layout does not place.

**Other apps' maps** (uploaded with sentry-cli, app/sourcemaps/uploads.py: build IDs "upload-…")
know nothing of this layout: a relative source is resolved from the asset's URL path with nothing
above it (`../../src/a.js` of `/assets/main.js` is `src/a.js`), an absolute one keeps its path from
`node_modules/` if it has one, else all of it (`webpack://app/./src/a.js` is `src/a.js`). In app,
as Sentry has it: everything but `node_modules/` and webpack's runtime (`webpack/runtime/…`,
`webpack/bootstrap`). Except another Reflex app's maps made by reflex-lookout's build step (they carry
its field, reflex_lookout/sourcemaps/map_pages.py): their layout is this app's (`REFLEX_UPLOAD`).
"""

from __future__ import annotations

import functools
import re
from urllib.parse import unquote, urlsplit

PROD_ROOT = (".web", "build", "client")
DEV_ROOT = (".web",)
DEV_BUILD = "dev"
MAX_SOURCE = 4096  # a `sources` entry longer than this is cut first
MAX_PATH = 1024
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
IN_APP = (".web/app/routes/", ".web/app_components/", ".web/utils/components/", ".web/public/", "assets/")
NOT_IN_APP = (".web/app_components/reflex/",)
UPLOAD_PREFIX = "upload-"  # the build IDs of other apps' uploaded bundles (app/sourcemaps/uploads.py)
# The rules for an uploaded map of another Reflex app (reflex_lookout/sourcemaps/map_pages.py): this app's layout.
REFLEX_UPLOAD = "reflex-upload"
WEBPACK_RUNTIME = ("webpack/runtime/", "webpack/bootstrap", "(webpack)/")


@functools.lru_cache(maxsize=4096)  # a build has a few hundred sources; each frame asks again
def project_path(source: str, asset_path: str, build_id: str) -> str:
    """The project-relative path of `source` (a map's `sources` entry, as symbolic gives it) in the
    map of the file served at `asset_path` by the build `build_id`."""
    source = source[:MAX_SOURCE].replace("\\", "/")
    upload = is_upload(build_id)
    root = () if upload else DEV_ROOT if build_id == DEV_BUILD else PROD_ROOT
    if SCHEME.match(source):
        source = _path_of_url(source)
    if source.startswith("/"):
        parts = _segments(source)
        if upload:
            return _join(parts[parts.index("node_modules"):] if "node_modules" in parts else parts)
        if ".web" in parts:
            return _join(parts[len(parts) - 1 - parts[::-1].index(".web"):])
        if "node_modules" in parts:
            return _join((".web", *parts[parts.index("node_modules"):]))
        base: list[str] = []
    else:
        base = _segments(asset_path)[:-1]
    resolved, above = _resolve(base, _segments(source))
    inside = root[:len(root) - above] if above <= len(root) else ()
    return _join((*inside, *resolved))


def is_upload(build_id: str) -> bool:
    """Whether `build_id` is another app's uploaded bundle rather than one of this app's builds."""
    return build_id.startswith(UPLOAD_PREFIX)


def in_app(path: str, build_id: str) -> bool:
    """Whether the project-relative `path`, mapped with a map of `build_id`, is the app's own code."""
    if is_upload(build_id):
        return not (path.startswith("node_modules/") or "/node_modules/" in path or path.startswith(WEBPACK_RUNTIME))
    return is_in_app(path)


@functools.lru_cache(maxsize=4096)
def is_in_app(path: str) -> bool:
    """Whether the project-relative `path` is the app's own code (the rule is in the docstring)."""
    if path.startswith("node_modules/") or "/node_modules/" in path or path.startswith(NOT_IN_APP):
        return False
    return path.startswith(IN_APP)


def _path_of_url(source: str) -> str:
    if len(source) > 2 and source[1] == ":" and source[2] == "/":  # a Windows drive: C:/...
        return "/" + source[3:]
    return urlsplit(source).path or "/"


def _segments(path: str) -> list[str]:
    return [unquote(part) for part in path.split("/") if part not in ("", ".")]


def _resolve(base: list[str], parts: list[str]) -> tuple[list[str], int]:
    """`parts` followed from `base`, and how many `..` climbed above the root."""
    resolved, above = list(base), 0
    for part in parts:
        if part != "..":
            resolved.append(part)
        elif resolved:
            resolved.pop()
        else:
            above += 1
    return resolved, above


def _join(parts: tuple[str, ...] | list[str]) -> str:
    return "/".join(part for part in parts if part not in ("", ".", ".."))[:MAX_PATH]
