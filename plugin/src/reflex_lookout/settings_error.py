"""The error of a setting that cannot be used (`SettingsError`): the monitoring's settings, a DSN's
parsing and Lookout's own settings raise it with a sentence naming the setting."""

from __future__ import annotations


class SettingsError(ValueError):
    """A setting holds a value the monitoring cannot use; the message names the setting."""
