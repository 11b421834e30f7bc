"""How an event becomes an issue: its fingerprint, title and culprit, as Sentry derives them.

- **Fingerprint**: the SDK's `fingerprint` when the event has one (`{{ default }}` stands for the
  default parts); otherwise, for an error, the main exception's type, its value with the variable
  bits normalised (numbers, hex, UUIDs, e-mail addresses), and the culprit; for a message (a log
  line, `capture_message`), its template (`logentry.message` before the parameters went in), also
  normalised. Events with equal fingerprints are one issue.
- **Title**: "Type: value" of the main exception (the last in the chain: the one that was raised),
  or the message's first line.
- **Culprit**: where it happened: the innermost in-app frame ("module in function"), or the
  innermost frame when the SDK marked none, or what the event itself names. Browser frames are
  symbolicated before grouping (app/sourcemaps/symbolicate.py), so `stacktrace` holds the original
  frames: a mapped frame reads "<project-relative source> in <original function>" — no chunk hash,
  minified name, build directory or column, so two builds of the same code give one issue. When
  that frame has no function (none in the map, or an anonymous one: "<anonymous>"), the Python
  page the innermost frame with `data.python_page` was generated from names it instead
  ("app/pages/try_errors.py in page"); with none, the source alone. Frames that were not mapped
  are read as before.

SDKs send many shapes (messages as strings or objects, exceptions as a list or `{"values": []}`,
frames as null, fingerprint parts as numbers): every reader here accepts them all.

Every string is cut before it is used, at Relay's limits (`MaxChars` in relay-event-schema): 8,192
characters for a message, an exception's value and a fingerprint part, 256 for a type, module or
function, 200 for a culprit and a transaction, 128 for a level. Sentry trims events to those
before grouping them too. Every pattern runs in time linear in its input (no two quantifiers can
share a character at one place), so no value can make grouping slow.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from app.protocol.fields import cut

TITLE_LENGTH = 200
MESSAGE_LENGTH = 8192  # a message, an exception value, a fingerprint part (Relay's MaxChars::Message)
SYMBOL_LENGTH = 256  # an exception type, a frame's module, file or function (MaxChars::Symbol, ::Path)
CULPRIT_LENGTH = 200  # a culprit, a transaction (MaxChars::Culprit)
LEVEL_LENGTH = 128  # (MaxChars::EnumLike)
ANONYMOUS = "<anonymous>"  # the scope name source maps give an anonymous function
DEFAULT_PART = re.compile(r"^\{\{\s*default\s*\}\}$")
# Order matters: a UUID or an address would otherwise lose its digits to the number rule first.
VARIABLE_PARTS = (
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<uuid>"),
    # An address starts where its local part does: without the look-behind, a long run with no "@"
    # was scanned again from each of its characters (quadratic: 20,000 characters took a second).
    (re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+"), "<email>"),
    # 0x-prefixed, or 8+ hex digits mixing digits and letters (ids, hashes, addresses)
    (re.compile(r"\b0x[0-9a-fA-F]+\b|\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b"), "<hex>"),
    # a number standing alone (not the digits in "x1" or after a dot of "1.5")
    (re.compile(r"(?<![\w.])\d+(?:\.\d+)?\b"), "<int>"),
)


@dataclass(frozen=True)
class Grouping:
    fingerprint: str  # sha256 of the parts, hex
    parts: tuple[str, ...]
    title: str
    culprit: str
    level: str
    kind: str  # "error", "message" or "default"


def normalise(value: str) -> str:
    """`value` (cut at MESSAGE_LENGTH) with the parts that differ between occurrences of one problem replaced."""
    value = value[:MESSAGE_LENGTH]
    for pattern, placeholder in VARIABLE_PARTS:
        value = pattern.sub(placeholder, value)
    return value


def group(event: dict[str, Any]) -> Grouping:
    exception = main_exception(event)
    culprit = find_culprit(event, exception)
    if exception is not None:
        kind = "error"
        kind_name = cut(exception.get("type"), SYMBOL_LENGTH) or "Error"
        value = cut(exception.get("value"), MESSAGE_LENGTH)
        title = f"{kind_name}: {first_line(value)}" if value else kind_name
        default: tuple[str, ...] = (kind_name, normalise(value), culprit)
    elif (message := message_of(event)) is not None:
        kind = "message"
        title = first_line(message[1]) or "<no message>"
        default = ("message", normalise(message[0]))
    else:
        kind = "default"
        title = cut(event.get("transaction"), CULPRIT_LENGTH) or "<unlabeled event>"
        default = ("default", title)
    parts = fingerprint_parts(event.get("fingerprint"), default)
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
    level = cut(event.get("level"), LEVEL_LENGTH) or "error"
    return Grouping(digest, parts, title[:TITLE_LENGTH], culprit, level, kind)


def fingerprint_parts(fingerprint: Any, default: tuple[str, ...]) -> tuple[str, ...]:
    if not isinstance(fingerprint, list) or not fingerprint:
        return default
    parts: list[str] = []
    for part in fingerprint:
        value = cut(part, MESSAGE_LENGTH)
        parts.extend(default if DEFAULT_PART.match(value) else (value,))
    return tuple(parts)


def exceptions(event: dict[str, Any]) -> list[dict[str, Any]]:
    """The exception chain, oldest first (the raised one last); each a dict."""
    found = event.get("exception")
    if isinstance(found, dict):
        found = found.get("values")
    return [e for e in found if isinstance(e, dict)] if isinstance(found, list) else []


def main_exception(event: dict[str, Any]) -> dict[str, Any] | None:
    chain = exceptions(event)
    return chain[-1] if chain else None


def frames(container: dict[str, Any] | None) -> list[dict[str, Any]]:
    """A stack trace's frames, outermost first; `container` holds a `stacktrace`."""
    stacktrace = (container or {}).get("stacktrace")
    found = stacktrace.get("frames") if isinstance(stacktrace, dict) else None
    return [f for f in found if isinstance(f, dict)] if isinstance(found, list) else []


def find_culprit(event: dict[str, Any], exception: dict[str, Any] | None) -> str:
    stack = frames(exception)
    if not stack:
        threads = event.get("threads")
        values = threads.get("values") if isinstance(threads, dict) else threads
        for thread in values if isinstance(values, list) else []:
            if isinstance(thread, dict) and (thread.get("crashed") or thread.get("current")):
                stack = frames(thread)
                break
    in_app = [f for f in stack if f.get("in_app") is True]
    frame = (in_app or stack)[-1] if in_app or stack else None
    if frame is not None:
        where = next((found for key in ("module", "filename", "abs_path") if (found := cut(frame.get(key), SYMBOL_LENGTH))), "")
        function = cut(frame.get("function"), SYMBOL_LENGTH)
        if mapped(frame) and function == ANONYMOUS:
            function = ""
        if where and function:
            return f"{where} in {function}"[:CULPRIT_LENGTH]
        if (page := python_page(stack)) is not None:
            return page
        if where or function:
            return (where or function)[:CULPRIT_LENGTH]
    return cut(event.get("culprit"), CULPRIT_LENGTH) or cut(event.get("transaction"), CULPRIT_LENGTH)


def mapped(frame: dict[str, Any]) -> bool:
    """Whether symbolication mapped the frame to its original source."""
    data = frame.get("data")
    return isinstance(data, dict) and isinstance(data.get("sourcemap"), dict)


def python_page(stack: list[dict[str, Any]]) -> str | None:
    """"<file> in <function>" of the Python page of the innermost mapped frame that names one."""
    for frame in reversed(stack):
        page = frame["data"].get("python_page") if mapped(frame) else None
        if isinstance(page, dict) and (file := cut(page.get("file"), SYMBOL_LENGTH)):
            function = cut(page.get("function"), SYMBOL_LENGTH)
            return (f"{file} in {function}" if function else file)[:CULPRIT_LENGTH]
    return None


def message_of(event: dict[str, Any]) -> tuple[str, str] | None:
    """(template, formatted text) of the event's message, if it has one."""
    for key in ("logentry", "message"):
        value = event.get(key)
        if isinstance(value, str) and value.strip():
            return value[:MESSAGE_LENGTH], value[:MESSAGE_LENGTH]
        if isinstance(value, dict):
            template = cut(value.get("message"), MESSAGE_LENGTH)
            formatted = cut(value.get("formatted"), MESSAGE_LENGTH) or template
            if template or formatted:
                return template or formatted, formatted
    return None


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""
