"""`table_of`: the SQLAlchemy Core table of a table model (each package's models.py), for the
statements its modules build (each package's tables.py names them)."""

from __future__ import annotations

from sqlalchemy import Table
from sqlmodel import SQLModel


def table_of(model: type[SQLModel]) -> Table:
    """The table a table model maps, for SQLAlchemy Core statements."""
    return model.__table__  # type: ignore[attr-defined]  # SQLAlchemy sets it on each table model; SQLModel does not declare it
