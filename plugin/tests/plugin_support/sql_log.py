"""The SQL an engine runs inside a block, seen through a real listener on the engine (no mock):
for tests that assert how much work something does, or that it looked nothing up."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import sqlalchemy


@contextlib.contextmanager
def statements(engine: sqlalchemy.Engine, matching: Callable[[str], bool] = lambda sql: True) -> Iterator[list[str]]:
    """Each statement `engine` runs inside the block that `matching` accepts, in order."""
    ran: list[str] = []

    def record(_connection: object, _cursor: object, sql: str, *_rest: object) -> None:
        if matching(sql):
            ran.append(sql)

    sqlalchemy.event.listen(engine, "before_cursor_execute", record)
    try:
        yield ran
    finally:
        sqlalchemy.event.remove(engine, "before_cursor_execute", record)


def outbox_depth_queries(engine: sqlalchemy.Engine) -> contextlib.AbstractContextManager[list[str]]:
    """The aggregate queries over the outbox (`OutboxStore.depth`) `engine` runs inside the block."""
    return statements(engine, lambda sql: "group by" in sql.lower() and "outbox" in sql.lower())
