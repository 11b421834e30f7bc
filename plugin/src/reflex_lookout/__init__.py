"""reflex-lookout: Lookout's monitoring for any Reflex app, in one line of rxconfig.py:

    config = rx.Config(app_name="my_app", plugins=[reflex_lookout.Monitoring()])

Browser and server errors, traces and logs go through a tunnel on the app's own origin to the DSN in
SENTRY_DSN (a Lookout project's or Sentry's). Options of `Monitoring(...)` override the environment.
From Lookout (the app this plugin comes from), where its design and tests live (issue #27).
"""

from reflex_lookout.dsn import Dsn
from reflex_lookout.plugin import Monitoring
from reflex_lookout.settings import MonitoringSettings
from reflex_lookout.settings_error import SettingsError

__all__ = ["Dsn", "Monitoring", "MonitoringSettings", "SettingsError"]
__version__ = "0.1.0"  # the distribution's version (plugin/pyproject.toml reads it here)
