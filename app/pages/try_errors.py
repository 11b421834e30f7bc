"""`/try`: trigger each way an error reaches Lookout from the browser, and see it confirmed."""

import asyncio

import reflex as rx

from app import routes
from app.components.layout import layout

TITLE = "Try it · Lookout"
SLOW_TITLE = "A slow page · Lookout"

# (element id, button label, what it does in the page, as JavaScript run by rx.call_script)
CASES: list[tuple[str, str, str]] = [
    ("try-thrown", "Throw an error", "setTimeout(() => { throw new Error('Lookout try: a thrown error'); }, 0)"),
    ("try-rejection", "Reject a promise", "Promise.reject(new Error('Lookout try: an unhandled rejection')); null"),
    ("try-script", "Fail in a script call", "lookoutTryMissingFunction()"),
    ("try-report", "Report an error", "window.lookout.captureException(new Error('Lookout try: a reported error'))"),
    ("try-log", "Write a log line", "window.lookout.logger.info('Lookout try: a log line', { page: 'try' }); window.lookout.flush()"),
]


def _confirm_js(label: str) -> str:
    """After the case had time to be captured: "<label>|<the SDK's last event id>"."""
    return f"new Promise((done) => setTimeout(() => done({label!r} + '|' + (window.lookout.lastEventId() || '')), 400))"


class TryState(rx.State):
    confirmation: str = ""
    bomb_armed: bool = False

    @rx.event
    def confirm(self, result: str) -> None:
        label, _, event_id = result.partition("|")
        self.confirmation = f"{label}: sent as event {event_id}." if event_id else f"{label}: sent."

    @rx.event
    async def break_rendering(self):
        """Render the bomb once; disarm it so that the error page's retry button brings the page back."""
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


def case_button(element_id: str, label: str, javascript: str) -> rx.Component:
    return rx.button(
        label,
        id=element_id,
        on_click=[rx.call_script(javascript), rx.call_script(_confirm_js(label), callback=TryState.confirm)],
    )


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
            wrap="wrap",
            spacing="3",
        ),
        rx.text(TryState.confirmation, id="try-confirmation", role="status"),
        RenderBomb.create(armed=TryState.bomb_armed),
    )


class SlowState(rx.State):
    loaded: bool = False

    @rx.event
    async def load(self):
        self.loaded = False
        yield
        await asyncio.sleep(2)
        self.loaded = True


def slow_page() -> rx.Component:
    return layout(
        rx.heading("A slow page", size="7", id="page-title"),
        rx.cond(
            SlowState.loaded,
            rx.text("Loaded, two seconds after the navigation.", id="slow-loaded"),
            rx.text("Loading…"),
        ),
    )
