"""The hostile client's transcript (tests/e2e/hostile_client.py), read back by the tests: one JSON
object a line, `sent` (seq, connection, name, payload, path), `received` (connection, event, data),
`refused` (connection, error: the server would not connect), `done` / `incomplete` (connection:
whether its sentinel came back); each with `t`, the client's clock in seconds. What the server sent
after `done`, when the tab left its page before closing, is `received` with `left`.

With `--probe-each-event`, every event's `asPath` carries `_probe=<seq>`, which the server echoes
in the root state's router vars of the update the event causes: a leak names the handler after
whose event it came. Without it, a leak is only "after an event" (the tests then run the client
again with it, to name the handler).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROBE = "_probe"
PROBE_SEQ = re.compile(PROBE + r"=(\d+)")
ROOT_STATE = "reflex___state____state"


class Transcript:
    def __init__(self, lines: list[dict[str, Any]]) -> None:
        self.lines = lines
        self.sent = {line["seq"]: line for line in lines if line["kind"] == "sent"}

    @classmethod
    def read(cls, path: Path) -> Transcript:
        return cls([json.loads(line) for line in path.read_text().splitlines() if line.strip()])

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [line for line in self.lines if line["kind"] == kind]

    def snapshots(self) -> int:
        """Full state snapshots received (hydrate's): proof that the server answered."""
        return sum(1 for line in self.of_kind("received")
                   if ROOT_STATE in ((line.get("data") or {}).get("delta") or {}) and len(line["data"]["delta"]) > 3)

    def seen(self, markers: dict[str, str]) -> set[str]:
        """The labels of the markers that anything the server sent while the client was on its
        pages holds (not after it `left`: the client must find them by looking, not on the way out)."""
        texts = [json.dumps(line.get("data"), ensure_ascii=False) for line in self.of_kind("received")
                 if not line.get("left")]
        return {label for label, marker in markers.items() if any(marker in text for text in texts)}

    def leaks(self, markers: dict[str, str]) -> list[str]:
        """One sentence for each state and handler after whose event that state's vars carried
        markers: the vars, the markers (by label), an example payload, the phase and the paths."""
        found: dict[tuple[str, str, str], Leak] = {}
        for line in self.of_kind("received"):
            text = json.dumps(line.get("data"), ensure_ascii=False)
            seen = {label: marker for label, marker in markers.items() if marker in text}
            if not seen:
                continue
            handler, payload = self._cause(text)
            phase, _, path = line["connection"].partition(" ")
            for label, marker in seen.items():
                for state, var in _places(line.get("data"), marker) or [(f"the {line['event']!r} message", "")]:
                    leak = found.setdefault((state, handler, phase), Leak(payload))
                    leak.vars.add(var)
                    leak.labels.add(label)
                    leak.paths.add(path)
        return [f"{state}.{{{', '.join(sorted(leak.vars))}}}: {', '.join(sorted(leak.labels))} — after {handler} "
                f"(e.g. {leak.payload}; {phase}; at {', '.join(sorted(leak.paths)[:4])}"
                f"{f' and {len(leak.paths) - 4} more' if len(leak.paths) > 4 else ''})"
                for (state, handler, phase), leak in sorted(found.items())]

    def _cause(self, text: str) -> tuple[str, str]:
        """The handler of the newest event whose probe the update carries, and its payload
        (background loops of the same tab may speak in between: they run while later events are
        processed)."""
        seqs = [int(s) for s in PROBE_SEQ.findall(text) if int(s) in self.sent]
        if not seqs:
            return "an event or a background task", "-"
        sent = self.sent[max(seqs)]
        state, _, handler = sent["name"].rpartition(".")
        return f"{_short(state)}.{handler}", json.dumps(sent["payload"], ensure_ascii=False)[:60]


@dataclass
class Leak:
    payload: str
    vars: set[str] = field(default_factory=set)
    labels: set[str] = field(default_factory=set)
    paths: set[str] = field(default_factory=set)


def _short(state: str) -> str:
    """`issue_state` for `reflex___state____state.app___pages___issue____issue_state`."""
    return state.rpartition(".")[2].rpartition("____")[2]


def _places(data: Any, marker: str) -> list[tuple[str, str]]:
    """(state, var) of each var in an update's delta whose value holds `marker`."""
    delta = (data or {}).get("delta") if isinstance(data, dict) else None
    return [(_short(state), var.removesuffix("_rx_state_"))
            for state, values in (delta or {}).items() for var, value in (values or {}).items()
            if marker in json.dumps(value, ensure_ascii=False)]
