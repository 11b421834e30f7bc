"""`/try`: trigger each way an error, a log line or a trace reaches Lookout, from the browser and
from the backend, and see it confirmed."""

import asyncio
import logging
import time

import anyio.to_thread
import httpx
import reflex as rx
import sqlalchemy

from app import routes
from app.components.layout import layout
from app.components.page import page_at
from app.console.state import bounded, database

logger = logging.getLogger(__name__)

TITLE = "Try it · Lookout"
SLOW_TITLE = "A slow page · Lookout"

# (element id, button label, what it does in the page, as JavaScript run by rx.call_script). Each
# case calls a function of TryCases below, which the build bundles into this page's route module:
# its stack frames map back to that code and to this file (README, "Readable browser stacks").
CASES: list[tuple[str, str, str]] = [
    ("try-thrown", "Throw an error", "window.lookoutTry.thrown()"),
    ("try-rejection", "Reject a promise", "window.lookoutTry.rejection(); null"),
    ("try-script", "Fail in a script call", "window.lookoutTry.missingFunction()"),
    ("try-report", "Report an error", "window.lookoutTry.report()"),
    ("try-log", "Write a log line",
     "window.lookout.logger.info('Lookout try: a log line', { page: 'try' }); window.lookout.flush()"),
]


# What `/try?fail=on_load` reports in the status line: its failure is the browser's (the on_load
# handler's rx.call_script threw), so Reflex tells only window.onerror (the SDK reports it) and shows
# nothing; an on_load handler that raised in Python would get event_errors' toast instead.
ON_LOAD_LABEL = "Fail in on_load (its script threw in the browser)"


def _confirm_js(label: str) -> str:
    """After the case had time to be captured: "<label>|<the SDK's last event id>"."""
    return f"new Promise((done) => setTimeout(() => done({label!r} + '|' + (window.lookout.lastEventId() || '')), 400))"


def _outbox_rows() -> int:
    with database().connect() as connection:
        return connection.execute(sqlalchemy.text("select count(*) from outbox")).scalar_one()


class TryState(rx.State):
    # The status line: what the last action did. Each action replaces it when it starts, so a line
    # from an earlier action is never left beside a new one.
    confirmation: str = ""
    bomb_armed: bool = False

    @rx.event
    def begin(self, label: str) -> None:
        """A browser case started: its line says so until `confirm` says how it ended."""
        self.confirmation = f"{bounded(label)}: …"  # a client's text: shown back, so kept short

    @rx.event
    def confirm(self, result: str) -> None:
        label, _, event_id = bounded(result).partition("|")  # a client's text: shown back, so kept short
        self.confirmation = f"{label}: sent as event {event_id}." if event_id else f"{label}: sent."

    @rx.event
    def load(self):
        """Every visit starts with an empty status line. `/try?fail=on_load`: the page's on_load runs
        a script that throws (an error in the first events of a page, before the SDK has arrived),
        then the status line says which event reported it, as the buttons' cases do. It sends only
        these fixed scripts, to this client."""
        self.confirmation = ""
        if self.router.url.query_parameters.get("fail") == "on_load":
            self.confirmation = f"{ON_LOAD_LABEL}: …"
            return [rx.call_script("window.lookoutTry.onLoadScript()"),
                    rx.call_script(_confirm_js(ON_LOAD_LABEL), callback=TryState.confirm)]
        return None

    @rx.event
    async def raise_error(self):
        """A backend event handler that fails: reported once, and the user sees a toast (the status
        line says so first: a raising handler's own changes are not sent)."""
        self.confirmation = "Fail in an event handler: it raised; the toast says what a user sees, with the report's reference."
        yield
        raise RuntimeError("Lookout try: a backend error")

    @rx.event
    def write_log(self) -> None:
        logger.info("Lookout try: a backend log line (%s)", "from an event handler")
        self.confirmation = "Backend log line: written (a Sentry log and a breadcrumb)."

    @rx.event
    async def slow_work(self):
        """A traced handler with a database query and an outbound HTTP request (to this backend)."""
        self.confirmation = "Slow handler: running…"
        yield
        started = time.perf_counter()
        rows = await anyio.to_thread.run_sync(_outbox_rows)  # off the event loop: any client may call this
        async with httpx.AsyncClient(timeout=5.0) as client:
            answer = await client.get(_ping_url())
        await asyncio.sleep(0.3)
        took = (time.perf_counter() - started) * 1000
        self.confirmation = (
            f"Slow handler: done in {took:.0f} ms (outbox rows: {rows}; backend answered {answer.status_code})."
        )

    @rx.event
    async def break_rendering(self):
        """Render the bomb once; disarm it so that the error page's retry button brings the page back."""
        self.confirmation = "Break rendering: a component threw while rendering; the error page replaced this one."
        self.bomb_armed = True
        yield
        await asyncio.sleep(0.5)
        self.bomb_armed = False


class RenderBomb(rx.Component):
    """Throws while rendering when `armed`: React's render-error path."""

    tag = "LookoutRenderBomb"
    armed: rx.Var[bool]

    def add_custom_code(self) -> list[str]:
        return [
            "function LookoutRenderBomb({ armed }) {\n"
            "  if (armed) throw new Error('Lookout try: a render error');\n"
            "  return null;\n"
            "}"
        ]


class TryCases(rx.Component):
    """The code the `/try` buttons run, compiled into the page's route module (not evaluated text,
    which has no source map), so each error's frames name a real, mapped line."""

    tag = "LookoutTryCases"

    def add_custom_code(self) -> list[str]:
        return [
            "const lookoutTry = {\n"
            "  thrown() {\n"
            "    setTimeout(() => lookoutTry.throwLater(), 0);\n"
            "  },\n"
            "  throwLater() {\n"
            "    throw new Error('Lookout try: a thrown error');\n"
            "  },\n"
            "  rejection() {\n"
            "    Promise.reject(new Error('Lookout try: an unhandled rejection'));\n"
            "  },\n"
            "  missingFunction() {\n"
            "    return lookoutTryMissingFunction();\n"
            "  },\n"
            "  onLoadScript() {\n"
            "    throw new Error('Lookout try: an on_load script error');\n"
            "  },\n"
            "  report() {\n"
            "    return window.lookout.captureException(new Error('Lookout try: a reported error'));\n"
            "  },\n"
            "};\n"
            "if (typeof window !== 'undefined') window.lookoutTry = lookoutTry;\n"
            "function LookoutTryCases() {\n"
            "  return null;\n"
            "}"
        ]


def _ping_url() -> str:
    """Reflex's own health route on this backend: a real outbound request for the trace."""
    from reflex_base.config import get_config

    return get_config().api_url.rstrip("/") + "/ping"


def case_button(element_id: str, label: str, javascript: str) -> rx.Component:
    return rx.button(
        label,
        id=element_id,
        on_click=[TryState.begin(label), rx.call_script(javascript),
                  rx.call_script(_confirm_js(label), callback=TryState.confirm)],
    )


@page_at(routes.TRY, TITLE, on_load=TryState.load)
def page() -> rx.Component:
    return layout(
        rx.heading("Try it", size="7", id="page-title"),
        rx.text(
            "Each button makes the browser report something through the tunnel, as a real failure would."
        ),
        rx.flex(
            *[case_button(*case) for case in CASES],
            rx.button("Break rendering", id="try-render", on_click=TryState.break_rendering, color_scheme="red"),
            rx.link(rx.button("Open a slow page", variant="outline"), href=routes.TRY_SLOW, id="try-slow"),
            rx.link(rx.button("Fail in on_load", variant="outline"), href=f"{routes.TRY}?fail=on_load", id="try-on-load"),
            wrap="wrap",
            spacing="3",
        ),
        rx.heading("In the backend", size="4"),
        rx.text("Event handlers on the server: their errors, log lines and traces join the browser's."),
        rx.flex(
            rx.button("Fail in an event handler", id="try-backend-raise", on_click=TryState.raise_error, color_scheme="red"),
            rx.button("Log from an event handler", id="try-backend-log", on_click=TryState.write_log),
            rx.button("Run a slow handler", id="try-backend-slow", on_click=TryState.slow_work),
            wrap="wrap",
            spacing="3",
        ),
        rx.text(TryState.confirmation, id="try-confirmation", role="status"),
        RenderBomb.create(armed=TryState.bomb_armed),
        TryCases.create(),
    )


class SlowState(rx.State):
    loaded: bool = False

    @rx.event
    async def load(self):
        self.loaded = False
        yield
        await asyncio.sleep(2)
        self.loaded = True


@page_at(routes.TRY_SLOW, SLOW_TITLE, on_load=SlowState.load)
def slow_page() -> rx.Component:
    return layout(
        rx.heading("A slow page", size="7", id="page-title"),
        rx.cond(
            SlowState.loaded,
            rx.text("Loaded, two seconds after the navigation.", id="slow-loaded"),
            rx.text("Loading…"),
        ),
    )
