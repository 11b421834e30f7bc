"""What the hostile client (tests/e2e/hostile_client.py) sends: every event handler of every state
in the app, read from the app's state tree (`rx.State` and its substates, Reflex's own included)
and never listed by hand, so that a new page or handler is covered the day it is added; each with
plausible arguments made from its signature, on every page's path.

Importing this module imports the app (`app.app`), as the backend does: it is meant for the
client's own process, not the tests'.
"""

from __future__ import annotations

import inspect
import itertools
import types
import typing
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import reflex as rx
from reflex.state import OnLoadInternalState
from reflex_base.utils.format import format_event_handler

import app.app as built  # registers every page and its state

MAX_PAYLOADS = 40  # per handler and path: past it, every value still appears, not every combination
ROOT = rx.State.get_full_name()
HYDRATE, HYDRATE_AND_LOAD = f"{ROOT}.hydrate", f"{ROOT}.hydrate_and_load"


@dataclass(frozen=True)
class Handler:
    name: str  # "<state full name>.<handler>", as the page sends it
    parameters: dict[str, Any]  # argument name → its type
    background: bool

    @property
    def state(self) -> str:
        return self.name.rpartition(".")[0]


@dataclass
class Vocabulary:
    """What arguments are made of: the probe text, whole numbers, and words of the app's domain."""

    probe: str
    numbers: list[int]
    words: list[str]
    state_vars: dict[str, Any] = field(default_factory=dict)  # "<state>.<var>" → its type

    def values(self, kind: Any) -> list[Any]:
        """Plausible values of a parameter of type `kind`."""
        origin, args = typing.get_origin(kind), typing.get_args(kind)
        if origin in (typing.Union, types.UnionType):
            return [value for arg in args for value in self.values(arg)]
        if kind is type(None):
            return [None]
        if kind is bool:
            return [True, False]
        if kind is int:
            return self.numbers
        if kind is float:
            return [0.0, *map(float, self.numbers)]
        if kind is str:
            return ["", self.probe, *self.words]
        if kind is dict or origin is dict:
            return [{}, dict.fromkeys(self.state_vars, self.probe)]
        if kind in (list, tuple) or origin in (list, tuple):
            return [[]]
        return ["", self.probe, *self.words[:3], *self.numbers[:2], True]  # Any


def app_states() -> Iterator[type[rx.State]]:
    """Every state class of the app, Reflex's built-in ones included."""
    pending = [rx.State]
    while pending:
        state = pending.pop()
        yield state
        pending.extend(sorted(state.get_substates(), key=lambda s: s.get_full_name()))


def handlers() -> list[Handler]:
    found = []
    for state in app_states():
        for name, handler in sorted(state.event_handlers.items()):
            try:
                hints = typing.get_type_hints(handler.fn)
            except (NameError, TypeError):
                hints = {}
            parameters = [p.name for p in inspect.signature(handler.fn).parameters.values()
                          if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)][1:]  # not `self`
            found.append(Handler(f"{state.get_full_name()}.{name}",
                                 {p: hints.get(p, Any) for p in parameters}, handler.is_background))
    return found


def state_vars() -> dict[str, Any]:
    return {f"{state.get_full_name()}.{name}": var._var_type
            for state in app_states() for name, var in state.base_vars.items()}


def page_paths() -> list[str]:
    """A path of every page of the app (the not-found page's too)."""
    return sorted("/" if route == "index" else "/no-such-page" if route == "404" else f"/{route}"
                  for route in built.app._unevaluated_pages)


def load_handlers(path: str) -> list[str]:
    """The full names of the on_load handlers of the page at `path`."""
    return [format_event_handler(h) for h in built.app.get_load_events(urlsplit(path).path)]


def loading_handlers() -> set[str]:
    """Handlers that run a page's on_load: every page's own, and Reflex's that start them."""
    own = {name for route in built.app._unevaluated_pages for name in load_handlers(route)}
    return own | {HYDRATE_AND_LOAD, format_event_handler(OnLoadInternalState.event_handlers["on_load_internal"])}


def payloads(handler: Handler, vocabulary: Vocabulary, setters: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """The payloads to send `handler`: every combination of plausible values, or past MAX_PAYLOADS
    enough of them that each value of each argument appears."""
    if handler.name.endswith(".setvar"):  # Reflex's generic setter: every var by name
        return [{"var_name": name, "value": value} for name, values in setters.items() for value in values]
    names = list(handler.parameters)
    choices = [vocabulary.values(kind) for kind in handler.parameters.values()]
    combinations = 1
    for values in choices:
        combinations *= len(values)
    if combinations <= MAX_PAYLOADS:
        return [dict(zip(names, combination, strict=True)) for combination in itertools.product(*choices)]
    longest = max(len(values) for values in choices)
    return [{name: values[i % len(values)] for name, values in zip(names, choices, strict=True)} for i in range(longest)]


def setter_values(state_name: str, all_handlers: Sequence[Handler], vocabulary: Vocabulary) -> dict[str, list[Any]]:
    """For `setvar` on a state: each var it has a setter for (which is also sent every value
    directly) with two values, and each of its other vars with one (a state that let any var be set
    would be caught here)."""
    found: dict[str, list[Any]] = {}
    for handler in all_handlers:
        name = handler.name.rpartition(".")[2]
        if handler.state == state_name and name.startswith("set_") and handler.parameters:
            found[name.removeprefix("set_")] = vocabulary.values(next(iter(handler.parameters.values())))[:2]
    for qualified, kind in vocabulary.state_vars.items():
        state, _, name = qualified.rpartition(".")
        if state == state_name and name not in found:
            found[name] = vocabulary.values(kind)[:1]
    return found


class Plan:
    """The events of one connection, in order, for a page path and a phase (`cold`: no on_load ever
    runs; `loaded`: the path's on_load runs first, as the page would run it). Background handlers
    (`watch`) run at once rather than in the tab's queue: the client sends them once the others are
    done, so that what an update carries until then is the foreground events' doing."""

    def __init__(self, vocabulary: Vocabulary) -> None:
        self.vocabulary = vocabulary
        self.handlers = handlers()
        self.loading = loading_handlers()
        self.setters = {state: setter_values(state, self.handlers, vocabulary) for state in {h.state for h in self.handlers}}

    def events(self, phase: str, path: str, background: bool) -> Iterator[tuple[str, dict[str, Any]]]:
        """The foreground events (which a tab's queue handles in order), or the background ones."""
        if not background:
            if phase == "loaded":
                yield HYDRATE_AND_LOAD, {}
                for name in load_handlers(path):
                    yield name, {}
            yield HYDRATE, {}  # the full snapshot, which proves the server answers
        for handler in self.handlers:
            if handler.background != background or (phase == "cold" and handler.name in self.loading):
                continue
            for payload in payloads(handler, self.vocabulary, self.setters[handler.state]):
                yield handler.name, payload
