"""What ingest changed in an event, kept as a patch beside the event as sent, instead of a new copy.

Ingest changes a browser event before grouping: symbolication replaces stack frames and gives each
stack it mapped its `raw_stacktrace` (symbolicate.py), the User-Agent adds the browser, os and device
contexts and their tags (app/ingest/user_agent.py), an event sent without an `event_id` gets the
envelope's. Written out whole with `json.dumps`, such an event cost more to store than to map: 22 KB
for a 10 KB browser event with 30 frames, its stack as sent among them a second time. So the store
(app/ingest/store.py) keeps an event that came through the outbox and was changed as one text,
`kept_text`: the event as sent, verbatim (the envelope's item, scrubbed: no `json.dumps` of it), and
the patch, where a mapped frame's JSON is made once per position and shared by the events that hit it:

    {"lookout_sent_length": N, "lookout_sent": <the event as sent: N characters>, <the patch's members>}

and `read_kept` (through `kept_events`, app/inbox/reading.py) reads it back by applying the patch to
the event as sent with the very functions ingest changed it with (`apply_stack`, `add_contexts`), so
the event reads back exactly as it was grouped, its keys in the same order. The patch has the event's
shape, each change where it was made (the text reads as what changed); its members:

- `event_id`: the id given to an event sent without one;
- `exception`, `threads`: `{"values": [stack or null, ...]}`, null for a value left as sent, each
  stack `{"stacktrace": {"frames": [frame or null, ...]}}`, a frame as `mapped_spec` or `error_spec`
  makes it (null: left as sent); a stack with a mapped frame gets its `raw_stacktrace` back (the
  stack as sent);
- `lookout_maps`: the maps the mapped frames name (`map`: an index), each [debug ID, build ID, how
  it was found];
- `contexts`: the contexts the User-Agent gave, by name (their tags follow from them).

The event as sent is in the event's own row, not read from its envelope's: retention frees an envelope
once no event's row names it (an envelope can hold much else: attachments, up to 100 MiB), and an
event's row is all that deleting the event has to take.

A stored patch is read as strictly as the event (the same JSON reader, and its shape checked here):
one that does not fit its event is that event's problem (`UnreadablePayload`), never the page's.
A text that begins with PREFIX and a digit is a patch; json.dumps never writes one so (it puts a
space after the colon), and the store keeps no text of a client's that begins so as sent.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii as _quoted  # a string as JSON (C)
from typing import Any

from app.ingest.user_agent import CONTEXTS, add_contexts
from reflex_lookout.protocol import payloads
from reflex_lookout.protocol.payloads import UnreadablePayload

SENT_LENGTH, SENT = "lookout_sent_length", "lookout_sent"
PREFIX = f'{{"{SENT_LENGTH}":'
SENT_KEY = f'"{SENT}":'
MAPS = "lookout_maps"
HOLDERS = ("exception", "threads")  # what holds stack traces: their `values`, or the list itself
ERROR_LENGTH = 500  # of `data.sourcemap_error`
# What a mapped frame loses: `module` named the minified file, the context lines were of it.
DROPPED = frozenset(("module", "pre_context", "context_line", "post_context"))
MAX_LENGTH_DIGITS = 12  # of the event's length as sent (an envelope holds at most 100 MiB: 9)


def mapped_spec(path: str, function: str, line: int, column: int, in_app: bool, map_index: int,
                python_page: dict[str, Any] | None,
                context: tuple[tuple[str, ...], str, tuple[str, ...]] | None) -> tuple[dict[str, Any], str]:
    """A frame mapped to `path` (`function`: "" for none), through map `map_index` of the patch;
    `context`: (pre, line, post) when the context lines were read. With its JSON, written here
    rather than by `json.dumps` (a call of which costs more than writing so small an object)."""
    spec: dict[str, Any] = {"filename": path, "lineno": line, "colno": column, "in_app": in_app, "map": map_index}
    text = (f'{{"filename": {_quoted(path)}, "lineno": {int(line)}, "colno": {int(column)}, '
            f'"in_app": {"true" if in_app else "false"}, "map": {int(map_index)}')
    if function:
        spec["function"] = function
        text += f', "function": {_quoted(function)}'
    if python_page is not None:
        spec["python_page"] = python_page
        text += f', "python_page": {json.dumps(python_page)}'
    if context is not None:
        spec.update(pre_context=list(context[0]), context_line=context[1], post_context=list(context[2]))
        text += (f', "pre_context": [{", ".join(map(_quoted, context[0]))}], "context_line": {_quoted(context[1])}, '
                 f'"post_context": [{", ".join(map(_quoted, context[2]))}]')
    return spec, text + "}"


def error_spec(reason: str) -> dict[str, Any]:
    """A frame left as sent, with why it was not mapped."""
    return {"sourcemap_error": reason[:ERROR_LENGTH]}


def is_mapped(spec: dict[str, Any]) -> bool:
    return "filename" in spec


def apply_stack(holder: dict[str, Any], specs: list[dict[str, Any] | None], maps: list[list[str]]) -> None:
    """Replace the frames of `holder`'s stack trace that `specs` name (None: left as sent; one per
    frame), and give it its `raw_stacktrace` (the stack as sent) when one of them has `data.sourcemap`
    after (is mapped, or was sent so). `maps`:
    [debug ID, build ID, how found] per map a spec names."""
    stacktrace = holder["stacktrace"]
    frames = stacktrace["frames"]
    # The frames as sent: a new list of the same dicts, since a changed frame is a new dict, never an edit.
    raw = {**stacktrace, "frames": list(frames)}
    mapped = False
    for index, spec in enumerate(specs):
        if spec is None:
            continue
        frame = frames[index] = (_mapped_frame(frames[index], spec, maps[spec["map"]]) if is_mapped(spec)
                                 else _with_error(frames[index], spec["sourcemap_error"]))
        mapped |= "sourcemap" in frame["data"]  # (a frame not mapped may have been sent with one)
    if mapped:
        holder["raw_stacktrace"] = raw


def _mapped_frame(frame: dict[str, Any], spec: dict[str, Any], found: list[str]) -> dict[str, Any]:
    data = {k: v for k, v in frame["data"].items() if k != "sourcemap_error"} if isinstance(frame.get("data"), dict) else {}
    data["sourcemap"] = {"debug_id": found[0], "build_id": found[1], "resolved_with": found[2]}
    if "python_page" in spec:
        data["python_page"] = dict(spec["python_page"])
    mapped = {k: v for k, v in frame.items() if k not in DROPPED}
    function = spec.get("function", "")
    mapped["filename"] = mapped["abs_path"] = spec["filename"]
    mapped["function"] = function
    mapped["lineno"], mapped["colno"], mapped["in_app"], mapped["data"] = spec["lineno"], spec["colno"], spec["in_app"], data
    if "context_line" in spec:
        mapped["pre_context"] = list(spec["pre_context"])
        mapped["context_line"] = spec["context_line"]
        mapped["post_context"] = list(spec["post_context"])
    if not function:
        del mapped["function"]
    return mapped


def _with_error(frame: dict[str, Any], reason: str) -> dict[str, Any]:
    data = frame.get("data")
    data = data if isinstance(data, dict) else {}
    return {**frame, "data": {**data, "sourcemap_error": reason[:ERROR_LENGTH]}}


def holders(event: dict[str, Any]) -> list[tuple[str, int, dict[str, Any]]]:
    """The exceptions and threads of the event that are objects: (where: "exception" or "threads",
    index in their values, the value)."""
    found: list[tuple[str, int, dict[str, Any]]] = []
    for key in HOLDERS:
        values = _values(event.get(key))
        found.extend((key, index, value) for index, value in enumerate(values or ()) if isinstance(value, dict))
    return found


def _values(found: Any) -> list[Any] | None:
    values = found.get("values") if isinstance(found, dict) else found
    return values if isinstance(values, list) else None


class FramesPatch:
    """The frames symbolication changed in one event, and the maps they name, as the patch has them:
    each frame's change with its JSON text (a mapped frame's is made once and shared by the events
    that hit it: symbolicate.py keeps it with the position), so the patch is written by joining them."""

    def __init__(self) -> None:
        self.maps: list[list[str]] = []
        self._map_index: dict[tuple[str, str, str], int] = {}
        self.stacks: dict[str, dict[int, list[str | None]]] = {}

    def map_index(self, debug_id: str, build_id: str, resolved_with: str) -> int:
        key = (debug_id, build_id, resolved_with)
        index = self._map_index.get(key)
        if index is None:
            index = self._map_index[key] = len(self.maps)
            self.maps.append(list(key))
        return index

    def add(self, key: str, index: int, texts: list[str | None]) -> None:
        """The stack at `index` of `key`'s values changed: each frame's change as JSON (None: none)."""
        self.stacks.setdefault(key, {})[index] = texts

    def members(self) -> str:
        """The patch's members for these frames, as JSON text (without the braces)."""
        members = []
        for key, stacks in self.stacks.items():
            values = ["null"] * (max(stacks) + 1)
            for index, texts in stacks.items():
                values[index] = '{"stacktrace": {"frames": [' + ", ".join(t or "null" for t in texts) + "]}}"
            members.append(f'"{key}": {{"values": [' + ", ".join(values) + "]}")
        if self.maps:
            members.append(f'"{MAPS}": {json.dumps(self.maps)}')
        return ", ".join(members)


def kept_text(sent: str, event_id: str | None, frames: FramesPatch | None, contexts: dict[str, dict[str, str]]) -> str:
    """The text an event is kept as: `sent`, the event's JSON as sent (an object), and the patch of
    what ingest changed: the `event_id` it gave (None: sent with one), the `frames` symbolication
    changed, the `contexts` the User-Agent gave (at least one of them)."""
    members = [f'"event_id": {json.dumps(event_id)}'] if event_id is not None else []
    if frames is not None:
        members.append(frames.members())
    if contexts:
        members.append(f'"contexts": {json.dumps(contexts)}')
    return f'{PREFIX}{len(sent)},{SENT_KEY}{sent}, {", ".join(members)}}}'


def is_kept_text(text: str) -> bool:
    """Whether `text` is a `kept_text`: PREFIX and a digit (json.dumps puts a space between them)."""
    return text.startswith(PREFIX) and text[len(PREFIX):len(PREFIX) + 1].isdigit()


def read_kept(text: str) -> dict[str, Any]:
    """The event a `kept_text` keeps, as ingest left it; `UnreadablePayload` if it is not one."""
    at = len(PREFIX)
    comma = text.find(",", at, at + MAX_LENGTH_DIGITS + 1)
    digits = text[at:comma] if comma > at else ""
    if not (digits.isascii() and digits.isdigit()) or not text.startswith(SENT_KEY, comma + 1):
        raise UnreadablePayload("The kept event's text does not say where the event as sent ends.")
    start = comma + 1 + len(SENT_KEY)
    end = start + int(digits)
    if end >= len(text) or text[end] != ",":
        raise UnreadablePayload("The kept event's text is shorter than the event as sent it holds.")
    event = payloads.load_object(text[start:end])
    apply(event, payloads.load_object("{" + text[end + 1:]))
    return event


def apply(event: dict[str, Any], patch: dict[str, Any]) -> None:
    """Make the event as sent what ingest made of it, in ingest's order (its id, its frames, its
    contexts); `UnreadablePayload` when the patch does not fit the event."""
    try:
        if SENT in patch or SENT_LENGTH in patch:
            raise ValueError("a patch within a patch")
        if "event_id" in patch:
            if "event_id" in event or not isinstance(patch["event_id"], str):
                raise ValueError("an event id for an event that has one")
            event["event_id"] = patch["event_id"]
        maps = _maps(patch.get(MAPS))
        for key in HOLDERS:
            if key in patch:
                _apply_stacks(event, key, patch[key], maps)
        if "contexts" in patch:
            add_contexts(event, _contexts(patch["contexts"]))
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise UnreadablePayload(f"The kept event's patch does not fit it: {str(exc)[:200]}") from None


def _maps(found: Any) -> list[list[str]]:
    maps = found if found is not None else []
    if not (isinstance(maps, list) and all(isinstance(m, list) and len(m) == 3 and all(isinstance(p, str) for p in m)
                                           for m in maps)):
        raise ValueError("maps that are not [debug ID, build ID, how found]")
    return maps


def _apply_stacks(event: dict[str, Any], key: str, found: Any, maps: list[list[str]]) -> None:
    changes = _values(found) if isinstance(found, dict) else None
    values = _values(event.get(key))
    if changes is None or values is None or len(changes) > len(values):
        raise ValueError(f"{key} changed where the event has none")
    for index, change in enumerate(changes):
        if change is None:
            continue
        holder = values[index]
        specs = change["stacktrace"]["frames"]
        frames = holder["stacktrace"]["frames"]
        if not isinstance(frames, list) or not isinstance(specs, list) or len(specs) != len(frames):
            raise ValueError(f"frames of {key} {index} changed that it does not have")
        for spec, frame in zip(specs, frames, strict=True):
            _check_spec(spec, len(maps))
            if spec is not None and not isinstance(frame, dict):
                raise ValueError(f"a frame of {key} {index} changed that is not an object")
        apply_stack(holder, specs, maps)


def _check_spec(spec: Any, maps: int) -> None:
    if spec is None:
        return
    if not isinstance(spec, dict):
        raise ValueError("a frame's change that is not an object")
    if not is_mapped(spec):
        if not isinstance(spec.get("sourcemap_error"), str):
            raise ValueError("a frame's change that is neither mapped nor an error")
        return
    whole = all(type(spec.get(k)) is int for k in ("lineno", "colno", "map"))
    if not (whole and isinstance(spec["filename"], str) and type(spec.get("in_app")) is bool
            and 0 <= spec["map"] < maps and isinstance(spec.get("function", ""), str)
            and isinstance(spec.get("python_page", {}), dict)):
        raise ValueError("a mapped frame without its path, position, map or function")
    if "context_line" in spec and not (isinstance(spec["context_line"], str) and _strings(spec.get("pre_context"))
                                       and _strings(spec.get("post_context"))):
        raise ValueError("a mapped frame's context lines that are not lines")


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _contexts(found: Any) -> dict[str, dict[str, str]]:
    if not (isinstance(found, dict) and found and all(
            name in CONTEXTS and isinstance(context, dict) and all(isinstance(v, str) for v in context.values())
            and (name == "device" or isinstance(context.get("name"), str)) for name, context in found.items())):
        raise ValueError("contexts the User-Agent cannot have given")
    return found
