"""The messages each channel kind gets: every field and key, escaped for where it lands, signed
(json), and within each service's limits even for the longest, most hostile alerts."""

from __future__ import annotations

import dataclasses
import email
import email.policy
import hashlib
import hmac
import json
from email.message import EmailMessage
from typing import Any

import pytest

from app.alerts.alert import AlertItem, Channel
from app.alerts.messages import DIGEST_LIMIT, email_message, message_key, signature, webhook_request

LINK = "https://lookout.example.com/issues/41"


def item(number: int = 1, **changes: Any) -> AlertItem:
    """An alert whose every field is a distinct, recognisable value."""
    fields: dict[str, Any] = {
        "dedupe_key": f"{number:032x}",
        "rule": "new",
        "reason": "A new issue.",
        "project": f"shop-{number}",
        "issue_id": 40 + number,
        "title": f"TypeError: cart{number} is undefined",
        "level": "error",
        "environment": "production",
        "release": "shop@2.4.1",
        "culprit": "checkout(src/cart.ts:12)",
        "first_seen": 1_700_000_000.0,
        "last_seen": 1_700_000_600.0,
        "event_count": 1234,
        "link": f"https://lookout.example.com/issues/{40 + number}",
    }
    return AlertItem(**{**fields, **changes})


def channel(kind: str, secret: str = "") -> Channel:
    return Channel(id=1, kind=kind, target="https://hooks.example.com/x", secret=secret)


def payload(kind: str, items: list[AlertItem], secret: str = "") -> dict[str, Any]:
    return json.loads(webhook_request(channel(kind, secret), items).body)


def strings(value: Any) -> list[str]:
    """Every string in a JSON value."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return [value] if isinstance(value, str) else []


def chat_text(kind: str, items: list[AlertItem]) -> str:
    return "\n".join(strings(payload(kind, items)))


def parsed(message: EmailMessage) -> EmailMessage:
    """The e-mail as a receiver reads it: its bytes through the standard parser."""
    found = email.message_from_bytes(message.as_bytes(), policy=email.policy.default)
    assert isinstance(found, EmailMessage)
    return found


def bodies(message: EmailMessage) -> tuple[str, str]:
    mail = parsed(message)
    plain, rich = mail.get_body(("plain",)), mail.get_body(("html",))
    assert plain is not None and rich is not None
    return plain.get_content(), rich.get_content()


# ---- every kind carries every field and the keys ----

SHOWN = ["TypeError: cart1 is undefined", "shop-1", "error", "production", "shop@2.4.1", "checkout(src/cart.ts:12)",
         "A new issue.", "2023-11-14 22:13:20 UTC", "2023-11-14 22:23:20 UTC", "1,234", "0" * 31 + "1", LINK]


def test_json_carries_every_field_in_its_schema() -> None:
    body = payload("json", [item()])
    assert body == {
        "version": 1,
        "type": "lookout.alerts",
        "dedupe_key": hashlib.sha256(("0" * 31 + "1").encode()).hexdigest(),
        "alerts": [{
            "dedupe_key": "0" * 31 + "1",
            "rule": "new",
            "reason": "A new issue.",
            "project": "shop-1",
            "issue": {"id": 41, "title": "TypeError: cart1 is undefined", "level": "error",
                      "culprit": "checkout(src/cart.ts:12)", "first_seen": "2023-11-14T22:13:20Z",
                      "last_seen": "2023-11-14T22:23:20Z", "event_count": 1234, "url": LINK},
            "environment": "production",
            "release": "shop@2.4.1",
        }],
    }


def test_json_lists_nothing_but_the_alert_items_fields() -> None:
    (listed,) = payload("json", [item()])["alerts"]
    names = set(listed) - {"issue"} | {f"issue.{name}" for name in listed["issue"]}
    renamed = {"issue.id": "issue_id", "issue.url": "link", "issue.event_count": "event_count"}
    assert {renamed.get(n, n.removeprefix("issue.")) for n in names} == {f.name for f in dataclasses.fields(AlertItem)}


@pytest.mark.parametrize("kind", ["slack", "discord"])
def test_chat_messages_carry_every_field_and_the_keys(kind: str) -> None:
    text = chat_text(kind, [item()]).replace("\\", "")  # Discord's escapes
    for value in SHOWN:
        assert value in text


def test_an_email_carries_every_field_and_the_keys() -> None:
    message = email_message([item()], "Lookout <alerts@example.com>", "dev@example.com")
    mail = parsed(message)
    key = message_key([item()])
    assert mail["Subject"] == "[Lookout] New issue in shop-1: TypeError: cart1 is undefined"
    assert mail["From"] == "Lookout <alerts@example.com>" and mail["To"] == "dev@example.com"
    assert mail["Date"] and mail["Auto-Submitted"] == "auto-generated"
    # The header is folded (name and key pass 78 characters): the parser keeps the fold's space.
    assert mail["X-Lookout-Dedupe-Key"].strip() == key and mail["Message-ID"] == f"<{key}.alert@example.com>"
    plain, rich = bodies(message)
    for value in SHOWN:
        assert value in plain and value in rich.replace("&amp;", "&")
    assert f'<a href="{LINK}">' in rich


def test_a_digest_lists_each_alert_under_one_key() -> None:
    items = [item(1), item(2, rule="spike", reason="More than 100 events in 10 minutes."), item(3)]
    key = hashlib.sha256("\n".join(sorted(i.dedupe_key for i in items)).encode()).hexdigest()
    assert message_key(items) == message_key(items[::-1]) == key
    assert [a["dedupe_key"] for a in payload("json", items)["alerts"]] == [i.dedupe_key for i in items]
    for kind in ("json", "slack", "discord"):
        request = webhook_request(channel(kind), items)
        assert request.headers["X-Lookout-Delivery"] == key
        assert all(i.dedupe_key in request.body.decode() for i in items)
    assert len(payload("discord", items)["embeds"]) == 3
    message = email_message(items, "alerts@example.com", "dev@example.com")
    assert parsed(message)["Subject"] == "[Lookout] 3 alerts in shop-1, shop-2, shop-3"
    plain, _ = bodies(message)
    assert "More than 100 events in 10 minutes." in plain and all(i.title in plain for i in items)


def test_the_same_alerts_make_the_same_request() -> None:
    # A retry sends the very bytes sent before: a receiver may compare them, and the signature too.
    first, again = (webhook_request(channel("json", "s3cret"), [item(1), item(2)]) for _ in range(2))
    assert first == again


@pytest.mark.parametrize("count", [0, 1])
def test_a_message_lists_1_to_digest_limit_alerts(count: int) -> None:
    too_many = [item(n) for n in range(DIGEST_LIMIT["json"] + 1)]
    with pytest.raises(ValueError, match="lists 1 to"):
        webhook_request(channel("json"), [] if count == 0 else too_many)


def test_an_email_channel_takes_no_webhook_request() -> None:
    with pytest.raises(ValueError, match="takes no webhook request"):
        webhook_request(channel("email"), [item()])


def test_empty_fields_show_a_dash() -> None:
    # Discord refuses a message with an empty embed title or field value.
    empty = item(title="", reason="", environment="", release="", culprit="", level="", link="")
    (embed,) = payload("discord", [empty])["embeds"]
    assert embed["title"] == "—" and embed["description"] == "—\n—"
    assert {f["name"]: f["value"] for f in embed["fields"]}["Environment"] == "—"
    assert all(f["value"] for f in embed["fields"])
    assert "*Release*\n—" in chat_text("slack", [empty])
    plain, _ = bodies(email_message([empty], "alerts@example.com", "dev@example.com"))
    assert "Culprit:      —" in plain and payload("json", [empty])["alerts"][0]["environment"] == ""


# ---- signatures ----


def test_the_signature_is_the_hmac_sha256_of_the_body() -> None:
    # RFC 4231, test case 2.
    expected = "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    assert signature("Jefe", b"what do ya want for nothing?") == expected


def test_a_json_request_verifies_as_the_readme_shows() -> None:
    request = webhook_request(channel("json", "s3cret"), [item()])
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["User-Agent"] == "Lookout-Alerts/1"
    sent = request.headers["X-Lookout-Signature"]
    expected = "sha256=" + hmac.new(b"s3cret", request.body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(sent, expected)
    changed = request.body.replace(b"shop-1", b"shop-2")
    assert not hmac.compare_digest(sent, signature("s3cret", changed))
    assert not hmac.compare_digest(sent, signature("other", request.body))


def test_a_json_channel_without_a_secret_sends_no_signature() -> None:
    assert "X-Lookout-Signature" not in webhook_request(channel("json"), [item()]).headers


@pytest.mark.parametrize("kind", ["slack", "discord"])
def test_chat_requests_are_not_signed(kind: str) -> None:
    assert "X-Lookout-Signature" not in webhook_request(channel(kind, "s3cret"), [item()]).headers


# ---- hostile text ----

HOSTILE = ("<!channel> <@U123> @everyone <script>alert(1)</script> **bold** [x](https://evil.example) & "
           "\r\nBcc: eve@evil.example")


def test_slack_escapes_what_could_link_or_mention() -> None:
    body = payload("slack", [item(title=HOSTILE, project="<!here>", release="a&b", culprit="<https://evil.example|x>")])
    text = "\n".join(strings(body))
    for raw in ("<!channel>", "<@U123>", "<script>", "<!here>", "<https://evil.example"):
        assert raw not in text
    assert "&lt;!channel&gt;" in text and "&lt;!here&gt;" in text and "a&amp;b" in text
    assert "@everyone" not in text  # a word joiner after @: Slack-compatible services ping on @everyone
    assert f"<{LINK}|Open in Lookout>" in text  # the one link is the issue's
    assert body["unfurl_links"] is False


def test_discord_escapes_markdown_and_mentions_nobody() -> None:
    body = payload("discord", [item(title=HOSTILE, environment="@here", culprit="`code` ||spoiler||")])
    assert body["allowed_mentions"] == {"parse": []}
    (embed,) = body["embeds"]
    assert embed["title"].startswith(r"\<\!channel\> \<\@U123\> \@everyone \<script\>")
    assert r"\*\*bold\*\* \[x\]\(https\:\/\/evil\.example\)" in embed["title"]
    values = {field["name"]: field["value"] for field in embed["fields"]}
    assert values["Environment"] == r"\@here" and values["Culprit"] == r"\`code\` \|\|spoiler\|\|"
    assert embed["url"] == LINK


def test_an_email_escapes_every_string_and_no_header_can_be_added() -> None:
    message = email_message([item(title=HOSTILE, project='"><img src=x>', reason="<b>why</b>")],
                            "alerts@example.com", "dev@example.com")
    mail = parsed(message)
    assert "Bcc" not in mail and mail["Subject"].startswith('[Lookout] New issue in "><img src=x>: <!channel>')
    assert "\n" not in mail["Subject"] and "\r" not in mail["Subject"]
    _, rich = bodies(message)
    for raw in ("<script>", "<img", "<b>", "<!channel>", '"><'):
        assert raw not in rich
    assert "&lt;script&gt;" in rich and "&quot;&gt;&lt;img src=x&gt;" in rich and "&lt;b&gt;why" in rich
    assert rich.count("<a ") == 1 and f'<a href="{LINK}">' in rich


@pytest.mark.parametrize("link", ["javascript:alert(1)", "/issues/41", "data:text/html,<script>", "https://"])
def test_only_an_http_link_is_linked(link: str) -> None:
    alert = item(link=link)
    _, rich = bodies(email_message([alert], "alerts@example.com", "dev@example.com"))
    assert "<a " not in rich and "href" not in rich
    slack = chat_text("slack", [alert])
    assert "|Open in Lookout>" not in slack
    (embed,) = payload("discord", [alert])["embeds"]
    assert "url" not in embed
    assert payload("json", [alert])["alerts"][0]["issue"]["url"] == link


def test_a_link_cannot_break_out_of_slack_or_html() -> None:
    alert = item(link='https://lookout.example.com/a|b>c<d"e&f issues/41')
    slack = chat_text("slack", [alert])
    assert "<https://lookout.example.com/a%7Cb%3Ec%3Cd%22e%26f%20issues/41|Open in Lookout>" in slack
    _, rich = bodies(email_message([alert], "alerts@example.com", "dev@example.com"))
    assert '<a href="https://lookout.example.com/a%7Cb%3Ec%3Cd%22e%26f%20issues/41">' in rich


@pytest.mark.parametrize("address", ["dev@example.com, eve@evil.example", "dev@example.com\r\nBcc: eve@evil.example",
                                     "not an address", "", "@", "a@"])
def test_an_email_goes_to_one_address_only(address: str) -> None:
    with pytest.raises(ValueError, match="is not an e-mail address"):
        email_message([item()], "alerts@example.com", address)
    with pytest.raises(ValueError, match="is not an e-mail address"):
        email_message([item()], address, "dev@example.com")


def test_long_fields_are_cut() -> None:
    alert = item(title="x" * 10_000, culprit="c" * 10_000, release="r" * 300, environment="e" * 100, project="p" * 101)
    (listed,) = payload("json", [alert])["alerts"]
    assert listed["issue"]["title"] == "x" * 199 + "…" and listed["issue"]["culprit"] == "c" * 199 + "…"
    assert listed["release"] == "r" * 199 + "…" and listed["environment"] == "e" * 63 + "…"
    assert listed["project"] == "p" * 99 + "…"
    subject = parsed(email_message([alert], "alerts@example.com", "dev@example.com"))["Subject"]
    assert len(subject) == 250 and subject.endswith("…")


# ---- every service's limits hold for DIGEST_LIMIT of the longest alerts ----


def units(text: str) -> int:
    """Length as the services count it: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def longest(number: int, char: str, link: str) -> AlertItem:
    """An alert with every string 10 KB of `char` (each escape makes it longer) and the largest count."""
    long = char * 10_000
    return item(number, reason=long, project=long, title=long, level=long, environment=long, release=long,
                culprit=long, event_count=10**30, first_seen=1e300, last_seen=float("nan"), link=link,
                dedupe_key=f"{number:032x}" + char * 10_000)


HOSTILE_CHARS = ["a", "&", "<", "@", "*", "\\", "_", "\U0001f600", "\u00e9"]
LONGEST_LINKS = ["https://lookout.example.com/" + "p" * 472, "/" + "p" * 499]


@pytest.fixture(params=[(c, link) for c in HOSTILE_CHARS for link in LONGEST_LINKS],
                ids=lambda p: f"U+{ord(p[0]):04X}-{p[1][:5]}")
def longest_items(request: pytest.FixtureRequest) -> Any:
    char, link = request.param
    return lambda kind: [longest(n, char, link) for n in range(DIGEST_LIMIT[kind])]


def test_slack_limits_hold(longest_items: Any) -> None:
    body = payload("slack", longest_items("slack"))
    assert units(body["text"]) <= 40_000 and len(body["blocks"]) <= 50
    assert units("".join(strings(body["blocks"]))) <= 40_000
    for block in body["blocks"]:
        if block["type"] == "header":
            assert units(block["text"]["text"]) <= 150
        if "text" in block and block["type"] == "section":
            assert units(block["text"]["text"]) <= 3000
        assert len(block.get("fields", [])) <= 10 and all(units(f["text"]) <= 2000 for f in block.get("fields", []))
        assert len(block.get("elements", [])) <= 10


def test_discord_limits_hold(longest_items: Any) -> None:
    body = payload("discord", longest_items("discord"))
    assert units(body["content"]) <= 2000 and len(body["embeds"]) <= 10
    total = 0
    for embed in body["embeds"]:
        assert units(embed["title"]) <= 256 and units(embed["description"]) <= 4096
        assert units(embed["footer"]["text"]) <= 2048 and len(embed["fields"]) <= 25
        for field in embed["fields"]:
            assert 1 <= units(field["name"]) <= 256 and 1 <= units(field["value"]) <= 1024
        total += units(embed["title"] + embed["description"] + embed["footer"]["text"])
        total += sum(units(field["name"] + field["value"]) for field in embed["fields"])
    assert total <= 6000


def test_json_and_email_stay_small(longest_items: Any) -> None:
    assert len(webhook_request(channel("json"), longest_items("json")).body) < 1024 * 1024
    message = email_message(longest_items("email"), "alerts@example.com", "dev@example.com")
    assert len(message.as_bytes()) < 1024 * 1024
    assert len(parsed(message)["Subject"]) <= 250
