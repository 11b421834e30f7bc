"""A background pass's waits after failures in a row (reflex_lookout/background.py `FailureBackoff`)."""

from __future__ import annotations

import logging

import pytest
import sqlalchemy

from reflex_lookout.background import FailureBackoff


def test_the_wait_doubles_up_to_the_cap_each_failure_is_logged_and_a_success_starts_over(
        caplog: pytest.LogCaptureFixture) -> None:
    backoff = FailureBackoff("tag counter", cap_s=5.0, log=logging.getLogger("app.ingest.tag_counter"))
    with caplog.at_level(logging.WARNING, "app.ingest.tag_counter"):
        waits = [backoff.failed(sqlalchemy.exc.OperationalError("select", {}, Exception("locked")), 1.0) for _ in range(4)]
        assert waits == [1.0, 2.0, 4.0, 5.0]
        backoff.succeeded()
        try:
            raise RuntimeError("a bug")
        except RuntimeError as exc:  # as the passes call it: in their except clause
            assert backoff.failed(exc, 1.0) == 1.0
    assert [r.getMessage().split(";")[-1] for r in caplog.records] == [" trying again in 1.0 s", " trying again in 2.0 s",
                                                                      " trying again in 4.0 s", " trying again in 5.0 s",
                                                                      " trying again in 1.0 s"]
    assert caplog.records[0].getMessage().startswith("tag counter: (builtins.Exception) locked")
    assert not caplog.records[0].exc_info  # a database error: its sentence alone
    assert caplog.records[-1].exc_info is not None and caplog.records[-1].exc_info[0] is RuntimeError  # a bug: its traceback
