"""How often one alert channel may get a message: PACE_BURST at once, then one more every
PACE_EVERY_S (`Pace`, a token bucket per channel). What falls due while a channel has no token waits,
and goes out as one digest with the next: pacing is what makes digests (app/alerts/sender.py).
"""

from __future__ import annotations

from dataclasses import dataclass

PACE_BURST = 5  # messages a channel may get at once ...
PACE_EVERY_S = 12.0  # ... then one more this often (5 a minute)


@dataclass
class Pace:
    """A channel's token bucket: PACE_BURST tokens, one more every PACE_EVERY_S; a message takes one."""

    at: float  # when `tokens` was counted
    tokens: float = PACE_BURST

    def take(self, now: float) -> bool:
        """Take a token when one is left (whether one was)."""
        if now > self.at:
            self.tokens = min(PACE_BURST, self.tokens + (now - self.at) / PACE_EVERY_S)
        self.at = max(self.at, now)  # a clock set back earns nothing
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True
