"""How one setting's value is read (`Reader`): the `Monitoring(...)` option if given, else its
environment variable, as a DSN, a switch, a rate, a log level, a number, a secret or a list; a value
that cannot be used raises `SettingsError` with a sentence naming where it came from."""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Mapping

from reflex_lookout.dsn import Dsn
from reflex_lookout.settings_error import SettingsError

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
SCHEME = re.compile(r"[a-z][a-z0-9+.-]{0,30}")
UNSAFE_SCHEMES = ("javascript", "data", "vbscript", "blob", "file", "http", "https")  # not an editor
SPOTLIGHT_URL = "http://localhost:8969/stream"  # Spotlight's sidecar, where its SDK integrations look by default


class Reader:
    """One value per call: the option if given, else the variable; the sentence names which. An
    option of "" is never given (a variable alone); Lookout reads its own variables with this too."""

    def __init__(self, options: Mapping[str, object], env: Mapping[str, str]) -> None:
        self.options, self.env = options, env

    def _raw(self, option: str, variable: str) -> tuple[object, str]:
        value = self.options.get(option) if option else None
        if value is not None:
            return value, f"Monitoring({option}=...)"
        return self.env.get(variable, "").strip(), variable

    def text(self, option: str, variable: str) -> str:
        value, source = self._raw(option, variable)
        if not isinstance(value, str):
            raise SettingsError(f"{source} must be a string, not {type(value).__name__}.")
        return value.strip()

    def dsn(self, option: str, variable: str) -> Dsn | None:
        value, source = self._raw(option, variable)
        if isinstance(value, Dsn):
            return value
        if not isinstance(value, str):
            raise SettingsError(f"{source} must be a DSN string, not {type(value).__name__}.")
        return Dsn.parse(value, source) if value.strip() else None

    def path(self, option: str, variable: str) -> str:
        text = self.text(option, variable)
        if text and (not text.startswith("/") or text.rstrip("/") == "" or "?" in text or "#" in text):
            _, source = self._raw(option, variable)
            raise SettingsError(f"{source} {text!r} must be an absolute path like /monitoring.")
        return text.rstrip("/")

    def switch(self, option: str, variable: str, default: bool) -> bool:
        value, source = self._raw(option, variable)
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if not text:
            return default
        if text not in ("on", "off", "true", "false", "1", "0"):
            raise SettingsError(f"{source} {text!r} must be on or off.")
        return text in ("on", "true", "1")

    def editor(self, option: str, variable: str, default: str) -> str:
        """A link to a file and line in the developer's editor: a scheme (`vscode`, `cursor`: its
        `{scheme}://file{path}:{line}:{column}`, the path absolute) or a template holding `{path}`
        (`idea://open?file={path}&line={line}`)."""
        text = self.text(option, variable) or default
        _, source = self._raw(option, variable)
        if SCHEME.fullmatch(text):
            text = f"{text}://file{{path}}:{{line}}:{{column}}"
        scheme = text.split(":", 1)[0].lower()
        if "{path}" not in text or not SCHEME.fullmatch(scheme) or scheme in UNSAFE_SCHEMES:
            raise SettingsError(f"{source} {text!r} must be an editor's URL scheme (vscode) or a template "
                                "with {path} and {line} (idea://open?file={path}&line={line}).")
        return text

    def sidecar(self, option: str, variable: str) -> str:
        """Spotlight's sidecar: off ("", 0, false, off), its default address (1, true, on) or a URL of its own."""
        value, source = self._raw(option, variable)
        if isinstance(value, bool):
            return SPOTLIGHT_URL if value else ""
        text = str(value).strip()
        if text.lower() in ("", "0", "false", "off", "no"):
            return ""
        if text.lower() in ("1", "true", "on", "yes"):
            return SPOTLIGHT_URL
        if not re.fullmatch(r"https?://[^\s/?#]+(/[^\s?#]*)?", text):
            raise SettingsError(f"{source} {text!r} must be on, off or the sidecar's URL (http://localhost:8969/stream).")
        return text

    def rate(self, option: str, variable: str, default: float) -> float:
        value, source = self._raw(option, variable)
        if value == "":
            return default
        try:
            rate = float(value)  # type: ignore[arg-type]  # a str from the environment, or a number given
        except (TypeError, ValueError):
            rate = math.nan
        if not 0.0 <= rate <= 1.0:
            raise SettingsError(f"{source} {value!r} must be a number from 0 to 1.")
        return rate

    def level(self, option: str, variable: str, default: int) -> int:
        value, source = self._raw(option, variable)
        if isinstance(value, int) and not isinstance(value, bool) and logging.getLevelName(value) in LOG_LEVELS:
            return value
        text = str(value).strip().upper()
        if not text:
            return default
        if text not in LOG_LEVELS:
            raise SettingsError(f"{source} {value!r} must be one of {', '.join(LOG_LEVELS)}.")
        return logging.getLevelName(text)

    def positive(self, option: str, variable: str, default: int) -> int:
        value, source = self._raw(option, variable)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
        text = str(value).strip()
        if not text:
            return default
        if not text.isdigit() or int(text) == 0:
            raise SettingsError(f"{source} {value!r} must be a positive whole number.")
        return int(text)

    def whole(self, variable: str, default: int) -> int:
        text = self.env.get(variable, "").strip()
        if not text:
            return default
        if not text.isdigit():
            raise SettingsError(f"{variable} {text!r} must be a whole number (0 or more).")
        return int(text)

    def secret(self, variable: str, min_chars: int) -> str:
        """A token from a variable ("" for none), at least `min_chars` long; the sentence never shows it."""
        text = self.env.get(variable, "").strip()
        if text and (len(text) < min_chars or not text.isascii() or not text.isprintable() or " " in text):
            raise SettingsError(f"{variable} must be at least {min_chars} ASCII characters, without spaces.")
        return text

    def words(self, variable: str) -> list[str]:
        """A list in a variable, separated by commas or spaces."""
        return self.env.get(variable, "").replace(",", " ").split()
