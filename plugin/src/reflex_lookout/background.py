"""Keeps a background task of the backend running: `supervise(name, run)` starts `run()` as a task
and, whenever it ends (by an error, or by returning), logs it and starts it again after a pause that
doubles with each quick end, from `BASE_S` up to `MAX_S`; a run that lasted `STEADY_S` resets the
pause. Cancelling the supervising task cancels the run and stops there, as shutdown needs.

The forwarder and the inbox feeder catch what they expect and log what they do not; this is the
last line, for an error that escapes them anyway (or a bug in their loops), so that one bad turn
never stops delivery or the inbox until the next restart.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

logger = logging.getLogger(__name__)

BASE_S = 1.0
MAX_S = 60.0
STEADY_S = 60.0


def supervise(name: str, run: Callable[[], Coroutine[Any, Any, None]], base_s: float = BASE_S,
              max_s: float = MAX_S, steady_s: float = STEADY_S) -> asyncio.Task[None]:
    """A task running `run()` again and again until it is cancelled (see the module's docstring)."""
    return asyncio.create_task(_keep_running(name, run, base_s, max_s, steady_s), name=name)


async def _keep_running(name: str, run: Callable[[], Coroutine[Any, Any, None]], base_s: float,
                        max_s: float, steady_s: float) -> None:
    pause = base_s
    while True:
        started = time.monotonic()
        try:
            await run()
            logger.error("%s stopped by itself; starting it again in %.1f s", name, pause)
        except Exception:
            logger.exception("%s failed; starting it again in %.1f s", name, pause)
        pause = base_s if time.monotonic() - started >= steady_s else pause
        await asyncio.sleep(pause)
        pause = min(pause * 2, max_s)
