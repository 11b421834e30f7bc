"""The report-only policy of Lookout's own pages: on HTML answers only, pointing at the reporting
project's security endpoint with its key."""

from __future__ import annotations

import dataclasses

import httpx
import pytest
from starlette.responses import HTMLResponse, JSONResponse

from app.monitoring.page_policy import PagePolicy, report_uri
from app.settings import Settings
from reflex_lookout.dsn import Dsn
from tests.environment import LOCAL_ENV

pytestmark = pytest.mark.anyio
LOCAL = Settings.from_env(LOCAL_ENV)  # local DSN http://lookout@localhost/1


async def page_or_json(scope, receive, send) -> None:  # ASGI
    answer = HTMLResponse("<p>page</p>") if scope["path"] == "/" else JSONResponse({"a": 1})
    await answer(scope, receive, send)


async def get(base_url: str, path: str = "/") -> httpx.Response:
    transport = httpx.ASGITransport(app=PagePolicy(page_or_json, LOCAL))
    async with httpx.AsyncClient(transport=transport, base_url=base_url) as client:
        return await client.get(path)


async def test_a_page_reports_to_the_local_projects_security_endpoint() -> None:
    answer = await get("http://127.0.0.1:3000")
    policy = answer.headers["content-security-policy-report-only"]
    assert "img-src 'self' data: blob:" in policy and "script-src 'self' 'unsafe-inline'" in policy
    assert policy.endswith("; report-uri /api/1/security/?sentry_key=lookout")
    assert "content-security-policy" not in answer.headers  # report-only: nothing is blocked


async def test_other_answers_carry_no_policy() -> None:
    answer = await get("http://127.0.0.1:3000", "/api/x")
    assert answer.json() == {"a": 1} and "content-security-policy-report-only" not in answer.headers


def test_in_sentry_mode_reports_go_to_sentrys_security_endpoint() -> None:
    settings = dataclasses.replace(LOCAL, dsn=Dsn.parse("https://k3y@sentry.example.org/prefix/42"))
    assert report_uri(settings) == "https://sentry.example.org/prefix/api/42/security/?sentry_key=k3y"
