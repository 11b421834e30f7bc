"""`Monitoring`: the one line in rxconfig.py, `plugins=[..., reflex_lookout.Monitoring()]`.

Which of Reflex 0.10.1's plugin hooks carries which part (docs/design/reflex-plugin.md):
- `__init__` (rxconfig.py's import, in every `reflex` command and backend process): the settings,
  validated; a bad value stops the start with a sentence naming it;
- `pre_compile`: `.web/app/entry.client.js` (with `provides_entry_client`), the SDK chunk, the
  loader module, and the dev server's proxy of the tunnel path in `vite.config.js`;
- `compile_page`: the app wrap that loads the SDK after hydration (`page_ctx.app_wrap_components`)
  and the configuration + loader first in `<head>` (the app's `head_components`, reached through the
  compile context; Reflex reads them after every page is compiled: reflex/compiler/compiler.py:1414);
- `post_compile` (each backend process, before its ASGI stack and lifespan exist): the exception
  handlers, the tunnel route and the server SDK (backend.py);
- `pre_compile` and `post_build`, with SENTRY_AUTH_TOKEN only: the production build's source maps
  (sourcemaps/build_step.py: hidden, debug IDs, kept out of the served build, uploaded).

Modules are imported inside the hooks: rxconfig.py is imported by every `reflex` command, most of
which never compile or serve.
"""

from __future__ import annotations

import functools
import logging
import os
from typing import TYPE_CHECKING, Any

from reflex_base.plugins.base import Plugin, PostBuildContext, PostCompileContext, PreCompileContext
from typing_extensions import Unpack

from reflex_lookout.destination import Destination
from reflex_lookout.dsn import Dsn
from reflex_lookout.settings import MonitoringSettings
from reflex_lookout.settings_error import SettingsError

if TYPE_CHECKING:
    from reflex_lookout.sourcemaps.build_step import SourceMapsPlugin

logger = logging.getLogger("reflex_lookout")


class Monitoring(Plugin):
    """Browser and server error reporting, tracing and logs for this Reflex app, through a tunnel on
    its own origin, to the DSN in `SENTRY_DSN` (a Lookout project's or Sentry's). Each option given
    here overrides its environment variable."""

    def __init__(
        self,
        *,
        dsn: str | Dsn | None = None,
        environment: str | None = None,
        release: str | None = None,
        tunnel_path: str | None = None,
        browser: bool | None = None,
        server: bool | None = None,
        traces_sample_rate: float | None = None,
        log_level: str | int | None = None,
        outbox: str | None = None,
        route_load_timeout_ms: int | None = None,
        scrub: bool | None = None,
        dev_overlay: bool | None = None,
        editor: str | None = None,
        spotlight: bool | str | None = None,
        feedback: bool | None = None,
        destination: str | None = None,
        dev_proxy: tuple[str, ...] = (),
    ) -> None:
        options = {
            "dsn": dsn, "environment": environment, "release": release, "tunnel_path": tunnel_path,
            "browser": browser, "server": server, "traces_sample_rate": traces_sample_rate,
            "log_level": log_level, "outbox": outbox, "route_load_timeout_ms": route_load_timeout_ms,
            "scrub": scrub, "dev_overlay": dev_overlay, "editor": editor, "spotlight": spotlight,
            "feedback": feedback,
        }
        try:
            self.settings = MonitoringSettings.resolve({k: v for k, v in options.items() if v is not None}, os.environ)
        except SettingsError as exc:
            # rxconfig.py is being read, by a `reflex` command or a backend process: the start stops with
            # the sentence alone (a traceback through Reflex's config loader would bury it).
            raise SystemExit(f"reflex-lookout: {exc}") from None
        # "package.module:name" of a `Destination` (destination.py), imported when first needed.
        self.destination_spec = destination
        self._destination: Destination | None = None
        # Paths besides the tunnel that the dev server proxies to the backend (Lookout's "/api/").
        self.dev_proxy = tuple(dev_proxy)
        self._head: list[Any] = []
        if self.settings.dsn is None and destination is None:
            logger.warning("reflex-lookout: no DSN (SENTRY_DSN, or Monitoring(dsn=...)): nothing is reported "
                           "(under `reflex run`, the dev overlay still shows this tab's errors).")

    def destination(self) -> Destination | None:
        if self._destination is None and self.destination_spec is not None:
            from reflex_lookout import destination

            self._destination = destination.load(self.destination_spec)
        return self._destination

    def dsn(self) -> Dsn | None:
        """The DSN reports are made for: the destination's, if one is named, else the settings'."""
        found = self.destination()
        return found.dsn() if found is not None else self.settings.dsn

    @property
    def reports_browser(self) -> bool:
        """The pages get the browser SDK: to report to a DSN, or, under `reflex run`, for the dev overlay."""
        return self.settings.browser and (self.settings.dsn is not None or self.destination_spec is not None
                                          or self.settings.shows_dev_overlay)

    def provides_entry_client(self) -> bool:
        return self.reports_browser

    @functools.cached_property
    def source_maps(self) -> SourceMapsPlugin:
        """The host's build step, from SENTRY_AUTH_TOKEN & co. (read once, when a build hook first asks:
        rxconfig.py, where this plugin is made, is read by every `reflex` command)."""
        from reflex_lookout.sourcemaps.build_step import for_host

        return for_host(os.environ)

    def _source_maps(self) -> SourceMapsPlugin | None:
        """The host's source-map step, or None: no token, or the app installs a build step of its own
        (Lookout's own, the app this plugin comes from), which would inject and upload a second time."""
        from reflex_base.config import get_config

        from reflex_lookout.sourcemaps.build_step import SourceMapsPlugin

        own = any(isinstance(p, SourceMapsPlugin) and p is not self.source_maps for p in get_config().plugins)
        return self.source_maps if self.source_maps.active and not own else None

    def post_build(self, **context: Unpack[PostBuildContext]) -> None:
        if (maps := self._source_maps()) is not None:
            maps.post_build(**context)

    def pre_compile(self, **context: Unpack[PreCompileContext]) -> None:
        if (maps := self._source_maps()) is not None:
            maps.pre_compile(**context)
        if not self.reports_browser:
            return
        from reflex.utils.prerequisites import get_web_dir
        from reflex_base import constants
        from reflex_base.config import get_config

        from reflex_lookout import browser

        web = get_web_dir()
        settings = self.settings
        def files() -> list[tuple[str, str]]:
            dsn = self.dsn()
            if dsn is None and not settings.shows_dev_overlay:
                raise RuntimeError(f"reflex-lookout: {self.destination_spec} gave no DSN to build the pages with.")
            written = [
                (str(web / constants.Embed.ENTRY_PATH), browser.ENTRY_CLIENT_JS.read_text()),
                (str(web / browser.SDK_MODULE), browser.SDK_JS.read_text()),
                (str(web / browser.LOADER_MODULE), browser.loader_module(settings, dsn)),
                (str(web / browser.FEEDBACK_MODULE), browser.feedback_module(settings)),
            ]
            if settings.shows_dev_overlay:  # dev mode only: a production build has none of it
                written.append((str(web / browser.DEV_OVERLAY_MODULE), browser.DEV_OVERLAY_JS.read_text()))
            return written

        context["add_save_task"](files)
        backend_url = get_config().api_url.rstrip("/")
        proxied = (settings.tunnel_path, *self.dev_proxy)
        context["add_modify_task"](
            constants.ReactRouter.VITE_CONFIG_FILE,
            lambda text: browser.add_sentry_flags(browser.add_proxy(text, proxied, backend_url), settings.debug),
        )

    def compile_page(self, page_ctx: Any, /, **kwargs: Any) -> None:
        if not self.reports_browser:
            return
        from reflex_lookout import browser
        from reflex_lookout.sourcemaps import pages

        page_ctx.app_wrap_components[browser.APP_WRAP_KEY] = browser.BrowserMonitoring.create()
        if self.settings.shows_dev_overlay:
            page_ctx.app_wrap_components[browser.DEV_APP_WRAP_KEY] = browser.DevOverlay.create()
        app = getattr(kwargs.get("compile_context"), "app", None)
        if app is None:
            raise RuntimeError("reflex-lookout: Reflex compiled a page with no app in its compile context; "
                               "this Reflex version is not supported (0.9.11 to 0.10 are).")
        if not self._head or not any(c is self._head[0] for c in app.head_components):
            self._head = browser.head_components()
            app.head_components[:0] = self._head  # first: the loader runs before anything else
        # The route module says which Python page it is, in a comment its source map keeps: a Lookout
        # maps a dev server's modules of another app with it (sourcemaps/pages.py `page_marker`).
        source = pages.page_source(getattr(kwargs.get("page"), "component", None))
        if source is not None:
            page_ctx.module_code[pages.page_marker(source)] = None

    def post_compile(self, **context: Unpack[PostCompileContext]) -> None:
        # An app that names a destination is the receiver itself and wires its own backend (as Lookout,
        # the app this plugin comes from, does); the browser side above is all it takes from these
        # hooks. A process attaches once: `backend.attach` adds nothing where a runtime exists
        # (runtime.current()).
        if self.destination_spec is not None:
            return
        if self.settings.dsn is None and not self.settings.shows_dev_overlay:
            return
        try:
            from reflex_lookout import backend

            if self.settings.dsn is None:
                backend.attach_dev_only(context["app"], self.settings)
            else:
                backend.attach(context["app"], self.settings)
        except Exception:  # noqa: BLE001 (never breaks its host: the app serves without the monitoring)
            logger.exception("reflex-lookout could not attach to the backend; the app serves without server monitoring")

    def __repr__(self) -> str:
        where = self.settings.dsn.netloc if self.settings.dsn else "nowhere"
        return f"Monitoring(to {where}, tunnel {self.settings.tunnel_path})"
