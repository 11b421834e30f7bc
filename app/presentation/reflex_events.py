"""Reflex's event transactions (reflex_lookout/event_tracing.py) as the console names them: a handler by
its class and function, also one stored under its module path before the plugin named it so; Reflex's
own plumbing told apart from the app's handlers."""

from __future__ import annotations

from reflex_lookout.event_tracing import INTERNAL_OP, OP, REFLEX_PACKAGES


def is_internal(name: str, op: str) -> bool:
    """Whether a transaction is Reflex's own plumbing: the plugin's op for it, or (stored before the
    plugin named it so) a Reflex event named after a handler of Reflex's own package."""
    return op == INTERNAL_OP or (op == OP and name.split(".", 1)[0] in REFLEX_PACKAGES and name.count(".") >= 2)


def short_name(name: str, op: str) -> str:
    """A Reflex handler's transaction by its class and function ("TracesState.load", also for one stored
    as "app.components.trace_filters.TracesState.load"); any other transaction by its name."""
    if op in (OP, INTERNAL_OP) and name.count(".") >= 2:
        return ".".join(name.split(".")[-2:])
    return name
