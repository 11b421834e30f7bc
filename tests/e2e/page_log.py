"""What a page did, kept for a failing test's report: its console, script errors, failed requests,
navigations, websocket opens/closes and each websocket's first frames (the last MAX_ENTRIES, with the
time since the page was made).

A browser test that fails on the CI machine only can then be read: whether the page's scripts loaded,
whether its websocket connected, and what the console said."""

from __future__ import annotations

import time
from collections import deque

from playwright.sync_api import Page, WebSocket

MAX_ENTRIES = 200
MAX_TEXT = 300
MAX_FRAMES = 20  # of each websocket, each way: the hydration and the first events' answers


class PageLog:
    def __init__(self, page: Page) -> None:
        self._started = time.monotonic()
        self._entries: deque[str] = deque(maxlen=MAX_ENTRIES)
        page.on("console", lambda message: self._add("console", message.type, message.text))
        page.on("pageerror", lambda error: self._add("pageerror", error))
        page.on("requestfailed", lambda request: self._add("requestfailed", request.url, request.failure))
        page.on("framenavigated", lambda frame: self._add("navigated", frame.url) if frame is page.main_frame else None)
        page.on("websocket", self._websocket)

    def _websocket(self, socket: WebSocket) -> None:
        self._add("websocket", socket.url)
        counts = {"sent": 0, "received": 0}

        def frame(way: str, payload: str | bytes) -> None:
            counts[way] += 1
            if counts[way] <= MAX_FRAMES:
                self._add(f"websocket {way} #{counts[way]}", payload)

        socket.on("framesent", lambda payload: frame("sent", payload))
        socket.on("framereceived", lambda payload: frame("received", payload))
        socket.on("close", lambda _socket: self._add("websocket closed", socket.url, counts))
        socket.on("socketerror", lambda error: self._add("websocket error", socket.url, error))

    def _add(self, kind: str, *parts: object) -> None:
        text = " ".join(str(part) for part in parts)[:MAX_TEXT]
        self._entries.append(f"{time.monotonic() - self._started:8.3f} s  {kind}: {text}")

    def text(self) -> str:
        return "\n".join(self._entries) or "(nothing)"
