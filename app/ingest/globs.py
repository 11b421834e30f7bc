"""Globs as Relay matches them in its filters: `*` is any run of characters (newlines too), `?` one
character, everything else itself, in any case.

A glob from a user is matched without backtracking: it is split once at its stars into pieces of
fixed length (each a regex with no quantifier: literal characters and `.`); the first piece must
start the text, the last end it, and each one between is found at its leftmost place after the one
before (leftmost is always right for pieces separated by stars). Each piece is one linear-time
`re` search, so a glob costs at most (pieces × text length) steps, whatever it is. The text is cut
at MAX_TEXT characters first."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

MAX_TEXT = 8192  # characters of a message or release matched


class Glob:
    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.pieces = [re.compile("".join("." if c == "?" else re.escape(c) for c in piece), re.IGNORECASE | re.DOTALL)
                       for piece in pattern.split("*")]
        self.lengths = [len(piece) for piece in pattern.split("*")]

    def matches(self, text: str) -> bool:
        text = text[:MAX_TEXT]
        pieces, lengths = self.pieces, self.lengths
        if len(pieces) == 1:
            return len(text) == lengths[0] and pieces[0].fullmatch(text) is not None
        if len(text) < sum(lengths) or pieces[0].match(text) is None:
            return False
        start, end = lengths[0], len(text) - lengths[-1]
        if pieces[-1].fullmatch(text, end) is None:
            return False
        for piece in pieces[1:-1]:
            found = piece.search(text, start, end)
            if found is None:
                return False
            start = found.end()
        return True


@functools.lru_cache(maxsize=256)
def compiled(patterns: tuple[str, ...]) -> tuple[Glob, ...]:
    """The globs of a project's list, made once per list (the options are read every few seconds)."""
    return tuple(Glob(pattern) for pattern in patterns)


def any_matches(globs: Iterable[Glob], texts: Iterable[str]) -> bool:
    texts = list(texts)
    return any(glob.matches(text) for glob in globs for text in texts)
