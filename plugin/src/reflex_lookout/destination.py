"""Where reports go, when the app itself decides it: `Monitoring(destination="package.module:name")`.

By default the monitoring reports to the DSN of its settings (`SENTRY_DSN`, or `Monitoring(dsn=...)`).
An app that is itself the receiver — Lookout, whose embedded inbox has a DSN kept in its database —
names an object with the methods of `Destination` instead; it is imported in the hooks that need it
(rxconfig.py stays light: every `reflex` command imports it).
"""

from __future__ import annotations

import importlib
from typing import Protocol

from reflex_lookout.dsn import Dsn
from reflex_lookout.settings_error import SettingsError


class Destination(Protocol):
    def dsn(self) -> Dsn | None:
        """The DSN reports are made for, when the pages are compiled and when the backend starts;
        None: nothing is reported."""
        ...


def load(spec: str) -> Destination:
    """The object `spec` ("package.module:name") names; a sentence naming the option if it cannot be had."""
    module_name, _, name = spec.partition(":")
    if not module_name or not name:
        raise SettingsError(f"Monitoring(destination={spec!r}) must look like 'package.module:name'.")
    try:
        found = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as exc:
        raise SettingsError(f"Monitoring(destination={spec!r}) cannot be imported: {exc}.") from exc
    if not callable(getattr(found, "dsn", None)):
        raise SettingsError(f"Monitoring(destination={spec!r}) has no dsn() method.")
    return found
