"""Event handlers that are the app's own housekeeping (a live page's refresh loop), marked
`@housekeeping` so that its monitoring makes no transaction of them and keeps none of their
breadcrumbs (app/monitoring/event_tracing.py). An error one raises is still reported."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

# (module, function name) of each marked function: Reflex's spans name a handler "<module>.<class>.<name>",
# and a mixin's handler by the class it was copied into (ConsoleState.watch runs as TracesState.watch).
HANDLERS: set[tuple[str, str]] = set()

F = TypeVar("F", bound=Callable[..., object])


def housekeeping(fn: F) -> F:
    """Mark an event handler's function as housekeeping (put it under `@rx.event`)."""
    HANDLERS.add((fn.__module__, fn.__name__))
    return fn


def is_housekeeping(function_name: str) -> bool:
    """Whether a handler named as Reflex's spans name it ("<module>.<class>.<name>") is marked."""
    owner, _, name = function_name.rpartition(".")
    module = owner.rpartition(".")[0]
    return (module, name) in HANDLERS
