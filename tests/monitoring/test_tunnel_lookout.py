"""The tunnel under Lookout's settings (app/settings.py): local mode keeps envelopes for the embedded
inbox, and the stats are always on. The tunnel's own tests are the plugin's (plugin/tests/test_tunnel.py)."""

from __future__ import annotations

import pytest

from app.settings import Settings
from plugin_support.envelopes import error_event
from plugin_support.pipeline import rows
from tests.environment import LOCAL_ENV

pytestmark = pytest.mark.anyio


async def test_local_mode_keeps_envelopes_for_the_inbox(make_pipeline) -> None:
    settings = Settings.from_env(LOCAL_ENV)
    pipeline = await make_pipeline(settings)
    response = await pipeline.post(error_event(str(settings.local_dsn)))
    assert response.status_code == 200
    assert [r["status"] for r in rows(pipeline)] == ["local"]
    assert pipeline.stats.local == 1


def test_lookouts_stats_are_on_whatever_the_plugins_switch_says() -> None:
    # Lookout's are the console's (its home page shows them), under the console's rule in the app.
    assert Settings.from_env({"LOOKOUT_TUNNEL_STATS": "off"}).tunnel_stats and Settings().tunnel_stats
