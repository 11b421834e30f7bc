"""Which Python page each generated route module comes from.

Reflex compiles the page given to `app.add_page(component, route=...)` into a route module,
`.web/app/routes/<stem>.jsx`, and the memoized components defined in the page's Python module into
`.web/app_components/<module path>.jsx`. A browser frame mapped into either also names the page's
Python source: `page_sources` builds the map from those modules' project-relative paths (as
symbolication names original sources: under `.web/`, whatever REFLEX_WEB_WORKDIR says) to `PageSource`.

Another app's pages cannot be listed by this process: its generated modules may say which Python page
each is, in a line of their own that `page_marker` writes (`// reflex-lookout page: {...}`, the
`PageSource` as JSON), which symbolication reads from the map's `sourcesContent`
(Lookout's inbox does).

A component module of a Python module that registers several pages (`shop/pages/checkout.py`:
`page` and `receipt_page`) cannot tell which page it serves: its function is `<module>`, as Python's
tracebacks name module-level code, and its line 0. Only plain functions defined inside the project
have a source; a page given as a component object (no function) or taken from a library is left out.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

# How symbolication names the web directory, wherever the build ran (REFLEX_WEB_WORKDIR included).
WEB_PREFIX = ".web"
MODULE_LEVEL = "<module>"
# How a generated module says which Python page it is: this, then the PageSource as JSON, on one line.
PAGE_MARKER = "// reflex-lookout page: "


@dataclass(frozen=True)
class PageSource:
    """The Python behind a generated route module: what was given to `app.add_page`."""

    module: str  # "shop.pages.checkout"
    function: str  # "page"
    file: str  # project-relative: "shop/pages/checkout.py"
    line: int  # the function's first line, 0 when unknown

    def to_json(self) -> dict[str, object]:
        return {"module": self.module, "function": self.function, "file": self.file, "line": self.line}


class Page(Protocol):
    """What Reflex keeps per page (`reflex.app.UnevaluatedPage`): its route and what renders it.
    Read-only members, since that class is a frozen dataclass."""

    @property
    def route(self) -> str: ...

    @property
    def component(self) -> Any: ...


def route_module(route: str) -> str:
    """The generated module of `route` ("try", "index", "404"), project-relative:
    `.web/app/routes/[try]._index.jsx`."""
    from reflex.compiler.utils import get_page_path
    from reflex.utils.prerequisites import get_web_dir

    module = Path(get_page_path(route)).relative_to(get_web_dir())
    return f"{WEB_PREFIX}/{module.as_posix()}"


def component_module(module: str) -> str | None:
    """The generated module of the components memoized in Python module `module`, project-relative:
    `.web/app_components/shop/pages/checkout.jsx`; None when Reflex does not mirror that module."""
    from reflex_base.constants.base import Dirs
    from reflex_base.utils.memo_paths import module_to_mirrored_segments

    segments = module_to_mirrored_segments(module)
    return None if segments is None else f"{WEB_PREFIX}/{'/'.join((Dirs.APP_COMPONENTS, *segments))}.jsx"


def page_source(component: object, root: Path | None = None) -> PageSource | None:
    """The function behind a page, or None when it is not a function of this project (`root`; by
    default the working directory, the app's root, where every `reflex` command runs)."""
    function = inspect.unwrap(component) if callable(component) else None
    if not inspect.isfunction(function):
        return None
    try:
        file = Path(inspect.getsourcefile(function) or "").resolve()
        relative = file.relative_to((root or Path.cwd()).resolve())
    except (TypeError, ValueError):  # built-in, or outside the project
        return None
    line = function.__code__.co_firstlineno
    return PageSource(module=function.__module__, function=function.__qualname__, file=relative.as_posix(), line=line)


def sources_of(pages: Iterable[Page], root: Path | None = None) -> dict[str, PageSource]:
    """Route module, and component module of each page's Python module → `PageSource`, for the
    pages that have one."""
    found: dict[str, PageSource] = {}
    by_module: dict[str, list[PageSource]] = {}
    for page in pages:
        source = page_source(page.component, root)
        if source is not None:
            found[route_module(page.route)] = source
            by_module.setdefault(source.module, []).append(source)
    for module, sources in by_module.items():
        path = component_module(module)
        if path is not None:
            one = sources[0] if len(set(sources)) == 1 else PageSource(module, MODULE_LEVEL, sources[0].file, 0)
            found.setdefault(path, one)
    return found


def page_sources(app: Any, root: Path | None = None) -> dict[str, PageSource]:
    """The map for a running app (`rx.App`): every page it registered."""
    return sources_of(app._unevaluated_pages.values(), root)


def to_json(sources: Mapping[str, PageSource]) -> dict[str, dict[str, object]]:
    return {path: source.to_json() for path, source in sorted(sources.items())}


def from_json(value: object) -> dict[str, PageSource]:
    """The map as `to_json` wrote it; entries of the wrong shape are left out."""
    if not isinstance(value, dict):
        return {}
    found: dict[str, PageSource] = {}
    for path, entry in value.items():
        if not isinstance(path, str) or not isinstance(entry, dict):
            continue
        module, function, file, line = (entry.get(key) for key in ("module", "function", "file", "line"))
        if isinstance(module, str) and isinstance(function, str) and isinstance(file, str) and type(line) is int:
            found[path] = PageSource(module=module, function=function, file=file, line=line)
    return found


def page_marker(source: PageSource) -> str:
    """The line a generated module carries to say it is `source`'s page (read back by
    Lookout's inbox, from the map's `sourcesContent`)."""
    return PAGE_MARKER + json.dumps(source.to_json(), sort_keys=True)
