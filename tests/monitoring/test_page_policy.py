"""The report-only policy of Lookout's own pages: on HTML answers only, pointing at the reporting
project's security endpoint with its key, with the Reporting API only where browsers take it."""

from __future__ import annotations

import dataclasses

import httpx
import pytest
from starlette.responses import HTMLResponse, JSONResponse

from app.monitoring.page_policy import PagePolicy, report_uri, trustworthy
from app.settings import Dsn, Settings
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


async def test_a_page_on_loopback_reports_to_the_local_projects_endpoint_both_ways() -> None:
    answer = await get("http://127.0.0.1:3000")
    policy = answer.headers["content-security-policy-report-only"]
    assert "img-src 'self' data: blob:" in policy and "script-src 'self' 'unsafe-inline'" in policy
    assert policy.endswith("; report-uri /api/1/security/?sentry_key=lookout; report-to lookout-csp")
    assert answer.headers["reporting-endpoints"] == 'lookout-csp="/api/1/security/?sentry_key=lookout"'
    assert "content-security-policy" not in answer.headers  # report-only: nothing is blocked


async def test_a_page_over_plain_http_elsewhere_gets_report_uri_alone() -> None:
    answer = await get("http://lookout.lan:3000")
    assert answer.headers["content-security-policy-report-only"].endswith("report-uri /api/1/security/?sentry_key=lookout")
    assert "reporting-endpoints" not in answer.headers


async def test_other_answers_carry_no_policy() -> None:
    answer = await get("http://127.0.0.1:3000", "/api/x")
    assert answer.json() == {"a": 1} and "content-security-policy-report-only" not in answer.headers


def test_in_sentry_mode_reports_go_to_sentrys_security_endpoint() -> None:
    settings = dataclasses.replace(LOCAL, dsn=Dsn.parse("https://k3y@sentry.example.org/prefix/42"))
    assert report_uri(settings) == "https://sentry.example.org/prefix/api/42/security/?sentry_key=k3y"


@pytest.mark.parametrize(("scheme", "host", "expected"), [
    ("https", "lookout.example.org", True), ("http", "localhost:3000", True), ("http", "127.0.0.1:3000", True),
    ("http", "[::1]:3000", True), ("http", "app.localhost", True), ("http", "10.0.0.5:3000", False),
    ("http", "lookout.lan", False), ("http", "localhost.evil.test", False),
])
def test_which_origins_browsers_take_reporting_endpoints_from(scheme: str, host: str, expected: bool) -> None:
    assert trustworthy({"scheme": scheme, "headers": [(b"host", host.encode())]}) is expected
