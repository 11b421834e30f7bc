"""Events the app's monitoring makes no transaction of (reflex_lookout/event_tracing.py):

- handlers that are the app's own housekeeping (a live page's refresh loop), marked `@housekeeping`;
  their breadcrumbs are not kept either;
- an event the app's access rule refused (`refused_event()`, called by the check; Lookout's console
  has one): it did no
  work of the app, and a stranger's flood of events would otherwise fill the inbox with transactions,
  as unbound events would (reflex_lookout/event_binding.py).

An error either raises is still reported."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import sentry_sdk

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


def refused_event() -> None:
    """Say that the event being handled was refused: its transaction, if it has one, is not sent."""
    span = sentry_sdk.get_current_span()
    transaction = span.containing_transaction if span is not None else None
    if transaction is not None:
        transaction.sampled = False
