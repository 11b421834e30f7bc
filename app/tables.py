"""`table_of`: the SQLAlchemy Core table of a table model (each package's models.py), for the
statements its modules build (each package's tables.py names them); `chunks`, for the long
`IN (...)` lists they build."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

from sqlalchemy import Table
from sqlmodel import SQLModel


def table_of(model: type[SQLModel]) -> Table:
    """The table a table model maps, for SQLAlchemy Core statements."""
    return model.__table__  # type: ignore[attr-defined]  # SQLAlchemy sets it on each table model; SQLModel does not declare it


T = TypeVar("T")  # what `chunks` slices: row ids, or names


def chunks(ids: Sequence[T], size: int = 500) -> Iterator[Sequence[T]]:
    """`ids` in slices of `size`, for `IN (...)` lists that stay under the drivers' parameter limits."""
    for start in range(0, len(ids), size):
        yield ids[start:start + size]
