"""The upload tokens page in Chromium, on the built app: a maintainer makes a token, sees it once
with its sentry-cli settings, the upload API takes it, and once revoked refuses it; a viewer from
another machine sees the tokens but no way to make or revoke one."""

from __future__ import annotations

import re
import uuid

import httpx
from playwright.sync_api import Page, expect

from tests.e2e.app_server import AppServer
from tests.e2e.helpers import sign_in_from_refusal
from tests.netns import Namespace

OPTIONS = "/api/0/organizations/lookout/chunk-upload/"  # what sentry-cli asks first (app/sourcemaps/upload_api.py)


def make_token(page: Page, app_server: AppServer, label: str) -> tuple[str, str]:
    """Make a token for project 1 on /tokens, as this machine (a maintainer): its id and the secret
    shown once."""
    page.goto(app_server.url + "/tokens")
    expect(page.locator("#upload-tokens")).to_be_visible(timeout=15_000)
    page.select_option("#token-project", "1 · Lookout")
    page.fill("#token-label", label)
    page.click("#token-create")
    shown = page.locator("#token-secret-once")
    expect(shown).to_have_text(re.compile("^[0-9a-f]{64}$"), timeout=15_000)
    secret = shown.text_content() or ""
    row = page.locator(".upload-token", has_text=label)
    expect(row).to_have_count(1)
    return (row.get_attribute("id") or "").removeprefix("upload-token-"), secret


def upload_options(app_server: AppServer, secret: str) -> httpx.Response:
    return httpx.get(app_server.url + OPTIONS, headers={"Authorization": f"Bearer {secret}"}, timeout=30)


def test_a_maintainer_makes_a_token_sees_it_once_and_revokes_it(app_server: AppServer, page: Page) -> None:
    label = f"e2e-{uuid.uuid4().hex[:8]}"
    token_id, secret = make_token(page, app_server, label)
    expect(page.locator("#token-settings-once")).to_contain_text(
        f"SENTRY_ORG=lookout\nSENTRY_PROJECT=1\nSENTRY_AUTH_TOKEN={secret}")
    row = page.locator(f"#upload-token-{token_id}")
    expect(row).to_contain_text(secret[:8] + "…")
    expect(row).not_to_contain_text(secret)
    assert upload_options(app_server, secret).status_code == 200

    page.reload()  # shown once: never again
    expect(row).to_be_visible(timeout=15_000)
    expect(page.locator("#token-secret-once")).to_have_count(0)
    assert secret not in page.content()

    page.click(f"#token-revoke-{token_id}")
    expect(row.locator(".token-revoked")).to_have_text(re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d UTC$"), timeout=15_000)
    expect(page.locator(f"#token-revoke-{token_id}")).to_have_count(0)
    refused = upload_options(app_server, secret)
    assert refused.status_code == 401 and refused.json()["detail"].startswith("This upload token was revoked on")


def test_a_viewer_sees_the_tokens_but_cannot_make_or_revoke_one(
    app_server: AppServer, page: Page, elsewhere: Namespace, page_elsewhere: Page
) -> None:
    label = f"e2e-{uuid.uuid4().hex[:8]}"
    token_id, secret = make_token(page, app_server, label)
    viewer = page_elsewhere  # Chromium on another machine (a network namespace)
    url = app_server.url_at(elsewhere.host_address)
    viewer.goto(url + "/tokens")
    expect(viewer.locator("#console-refused")).to_be_visible(timeout=15_000)
    expect(viewer.locator("#upload-tokens")).to_have_count(0)
    sign_in_from_refusal(viewer)
    viewer.goto(url + "/tokens")
    expect(viewer.locator(f"#upload-token-{token_id}")).to_contain_text(label, timeout=15_000)
    expect(viewer.locator("#tokens-readonly")).to_be_visible()
    for control in ("#token-create", "#token-label", f"#token-revoke-{token_id}", "#token-secret-once"):
        expect(viewer.locator(control)).to_have_count(0)
    assert secret not in viewer.content()
    page.click(f"#token-revoke-{token_id}")  # the maintainer's page still has it
    expect(page.locator(f"#token-revoke-{token_id}")).to_have_count(0, timeout=15_000)
