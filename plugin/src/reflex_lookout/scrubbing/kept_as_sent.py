"""What is kept of an item once Relay has scrubbed it (`kept_as_sent`, for scrubbing/relay.py).

What is kept of an item is the item as sent, except where Relay scrubbed, removed, trimmed or refused
a value (its remarks in `_meta` say where), or did not keep one (a legacy key it moved, an unknown
key where it takes none): there Relay's output is kept, or nothing. So an item Relay found nothing
in stays byte for byte as sent (`scrub` returns the very same dict), and its shapes (headers as a
dict, exceptions as a list) stay what the SDK sent wherever Relay changed nothing.
"""

from __future__ import annotations

import json
from typing import Any

from reflex_lookout.scrubbing.prefilter import holds_nothing_to_scrub
from reflex_lookout.scrubbing.settings import ScrubbingSettings

_GONE = object()  # no value at this place of Relay's output


def kept_as_sent(sent: Any, out: Any, meta: dict[str, Any], settings: ScrubbingSettings) -> Any:
    """What is kept of `sent`, an item as the SDK sent it, given `out`, Relay's output for it, and
    `meta`, Relay's `_meta`: `sent` itself where Relay changed nothing in it (`_kept`)."""
    return _kept(sent, out, meta, _Clean(settings))


class _Clean:
    """Whether a value Relay changed without any rule's remark (a legacy key it moved, a value of a
    type it refuses, an unknown key where it takes none) may be kept as sent: when it holds nothing
    any rule of the settings matches (scrubbing/prefilter.py, on its JSON). So an item the prefilter
    finds clean is kept exactly as Relay's full path would keep it: as sent."""

    def __init__(self, settings: ScrubbingSettings) -> None:
        self.settings = settings

    def __call__(self, value: Any) -> bool:
        # No message of Relay's (where its e-mail rule applies) is such a value: as the item's own
        # prefilter asks (`messages_of`), an e-mail address here alone does not send it to Relay.
        return _holds_nothing(value) or holds_nothing_to_scrub(json.dumps(value).encode(), self.settings, b"[]")


def _kept(sent: Any, out: Any, meta: dict[str, Any], clean: _Clean) -> Any:
    """What is kept of `sent`, a value as the SDK sent it, given `out`, Relay's output at the same
    place (_GONE: none), and `meta`, Relay's `_meta` there: `sent` itself where Relay changed
    nothing in it, else a copy with Relay's values where it changed them; _GONE for nothing."""
    if "" in meta:  # a remark on this very value: scrubbed, removed, trimmed or refused
        if out == sent or (not _by_a_rule(meta[""]) and clean(sent)):
            return sent
        return out
    if out is _GONE or out is None:  # Relay did not keep it (unknown where it takes no unknown key, or moved)
        return sent if clean(sent) else out
    if isinstance(out, dict | list):
        if isinstance(sent, dict):
            return _kept_dict(sent, out, meta, clean)
        if isinstance(sent, list):
            return _kept_list(sent, out, meta, clean)
        return out if meta else sent  # a string Relay read as parts (a query string, cookies), scrubbed within
    if isinstance(sent, list) and not meta and not any(isinstance(v, dict | list) for v in sent):
        return sent  # a header's values, which Relay joins into one string and found nothing in
    if isinstance(sent, dict | list) and not _holds_nothing(sent):
        return out  # Relay's type for the same value (42 as "42")
    # A scalar, or an empty container Relay replaced by a scalar of its own (a context's `"type": {}`
    # becomes its key, "app"): it holds nothing to scrub, so as sent, as the prefilter's path keeps it.
    return sent


def _by_a_rule(remarks: Any) -> bool:
    """Whether Relay's remarks on a value name a rule that changed it (not only an error of its own,
    `err`, or one of its internal remarks, whose rule ids start with "!")."""
    found = remarks.get("rem") if isinstance(remarks, dict) else None
    if not isinstance(found, list):
        return False
    return any(not (isinstance(remark, list) and remark and str(remark[0]).startswith("!")) for remark in found)


def _holds_nothing(value: Any) -> bool:
    """None, "", or containers of nothing (what Relay leaves out of its output: `{"frames": []}`)."""
    if isinstance(value, dict):
        return all(_holds_nothing(v) for v in value.values())
    if isinstance(value, list):
        return all(_holds_nothing(v) for v in value)
    return value is None or value == ""


def _kept_dict(sent: dict[str, Any], out: Any, meta: dict[str, Any], clean: _Clean) -> Any:
    if isinstance(out, list):  # headers, tags, cookies: Relay writes a mapping as [name, value] pairs
        found = _pairs(out, meta)
        if found is None:
            return out
        out, meta = found
    kept = None  # a copy, made at the first change
    matched = set()
    for key, value in sent.items():
        name = _name(out, key)
        matched.add(name)
        if value is None:
            continue
        child = _kept(value, out.get(name, _GONE), meta.get(name) or {}, clean)
        if child is value:
            continue
        kept = dict(sent) if kept is None else kept
        if child is _GONE:
            del kept[key]
        else:
            kept[key] = child
    if kept is None:
        return sent
    # Something changed here: what Relay moved under a new key (a legacy name's value) comes along.
    kept.update((name, value) for name, value in out.items() if name not in matched and value is not None)
    return kept


def _name(out: dict[str, Any], key: str) -> str:
    """`key` as `out` names it: Relay writes header names in title case ("content-type" becomes
    "Content-Type"), so a name not found as sent is the one equal to it but for case, if alone."""
    if key in out:
        return key
    found = [name for name in out if name.lower() == key.lower()]
    return found[0] if len(found) == 1 else key


def _pairs(out: list[Any], meta: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Relay's [name, value] pairs as a mapping by name, with their values' remarks; None when `out`
    is not pairs, or names one twice (two headers sent as "X-A" and "x-a")."""
    values: dict[str, Any] = {}
    remarks: dict[str, Any] = {}
    for index, pair in enumerate(out):
        if not _is_pair(pair) or pair[0] in values:
            return None
        on_pair = meta.get(str(index)) or {}
        values[pair[0]] = pair[1]
        whole = on_pair.get("") or on_pair.get("0")  # a remark on the pair, or on its name
        remarks[pair[0]] = {"": whole} if whole else on_pair.get("1") or {}
    return values, remarks


def _kept_list(sent: list[Any], out: Any, meta: dict[str, Any], clean: _Clean) -> Any:
    if isinstance(out, dict) and isinstance(out.get("values"), list):  # Relay's {"values": [...]} of a bare list
        out, meta = out["values"], meta.get("values") or {}
    if not isinstance(out, list) or len(out) != len(sent) or not _aligned(sent, out):
        return out
    kept = None
    for index, value in enumerate(sent):
        child = _kept(value, out[index], meta.get(str(index)) or {}, clean)
        if child is not value:
            kept = list(sent) if kept is None else kept
            kept[index] = None if child is _GONE else child
    return sent if kept is None else kept


def _aligned(sent: list[Any], out: list[Any]) -> bool:
    """Whether Relay kept the list's order: pairs it sorted by name are not read index by index."""
    return all(not (_is_pair(s) and _is_pair(o)) or s[0].lower() == o[0].lower() for s, o in zip(sent, out, strict=True))


def _is_pair(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)
