"""The supervisor starts a background task again whenever it ends, and stops with it on cancel."""

from __future__ import annotations

import asyncio
import logging

import pytest

from reflex_lookout.background import supervise

pytestmark = pytest.mark.anyio


async def test_a_task_that_dies_is_started_again_and_cancelled_cleanly(caplog: pytest.LogCaptureFixture) -> None:
    started, stopped = [], asyncio.Event()
    running = asyncio.Event()

    async def run() -> None:
        started.append(len(started))
        if len(started) == 1:
            raise RuntimeError("died on a poison row")
        if len(started) == 2:
            return  # ended by itself: started again too
        try:
            running.set()
            await asyncio.Event().wait()  # runs until cancelled
        finally:
            stopped.set()

    with caplog.at_level(logging.INFO):
        task = supervise("lookout-test-loop", run, base_s=0.01)
        async with asyncio.timeout(10):
            await running.wait()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert started == [0, 1, 2] and stopped.is_set() and task.cancelled()
    assert "lookout-test-loop failed" in caplog.text and "died on a poison row" in caplog.text
    assert "lookout-test-loop stopped by itself" in caplog.text


async def test_a_task_cancelled_while_it_waits_to_start_again_stops_at_once() -> None:
    async def run() -> None:
        raise RuntimeError("always")

    task = supervise("lookout-test-loop", run, base_s=60)
    await asyncio.sleep(0.05)  # it failed and now waits a minute
    task.cancel()
    async with asyncio.timeout(2):
        await asyncio.gather(task, return_exceptions=True)
    assert task.cancelled()
