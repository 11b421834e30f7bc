"""Every body form of Sentry's security endpoint, read into events; bounds and refusals."""

from __future__ import annotations

import json

import pytest

from app.protocol.security_reports import MAX_REPORTS, ReportError, check_content_type, read

CSP2 = {"csp-report": {"document-uri": "http://app.test/page", "violated-directive": "img-src 'self'",
                       "effective-directive": "img-src", "blocked-uri": "http://cdn.test/a.png"}}
VIOLATION = {"type": "csp-violation", "url": "http://app.test/page", "age": 3, "user_agent": "Chrome",
             "body": {"documentURL": "http://app.test/page", "blockedURL": "inline",
                      "effectiveDirective": "script-src-elem", "disposition": "report"}}
EXPECT_CT = {"expect-ct-report": {"date-time": "2014-04-06T13:00:50Z", "hostname": "www.example.test", "port": 443,
                                  "effective-expiration-date": "2014-05-01T12:40:50Z", "scts": []}}
HPKP = {"date-time": "2014-04-06T13:00:50Z", "hostname": "www.example.test", "port": 443, "include-subdomains": False,
        "known-pins": ['pin-sha256="d6qzRu9zOECb90Uez27xWltNsj0e1Md7GkYYkVoZWmM="']}


def body(value: object) -> bytes:
    return json.dumps(value).encode()


def test_a_csp_level_2_report_is_one_event() -> None:
    [event] = read(body(CSP2))
    assert event["logentry"] == {"formatted": "Blocked 'image' from 'cdn.test'"}
    assert event["culprit"] == "img-src 'self'" and event["logger"] == "csp"
    assert event["csp"]["blocked_uri"] == "http://cdn.test/a.png"
    assert event["fingerprint"] == ["csp", "img-src", "cdn.test"]
    assert event["request"] == {"url": "http://app.test/page"}


def test_a_reporting_api_batch_keeps_its_csp_violations_and_skips_other_types() -> None:
    events = read(body([VIOLATION, {"type": "deprecation", "body": {"id": "x"}}, VIOLATION]))
    assert [e["logentry"]["formatted"] for e in events] == ["Blocked 'script' from 'inline:'"] * 2
    assert events[0]["event_id"] != events[1]["event_id"]
    assert read(body([{"type": "intervention", "body": {}}])) == []
    [single] = read(body(VIOLATION))  # one Reporting API report, not in an array
    assert single["csp"]["disposition"] == "report"


def test_expect_ct_expect_staple_and_hpkp_are_titled_by_host() -> None:
    [ct] = read(body(EXPECT_CT))
    assert ct["logentry"]["formatted"] == "Expect-CT failed for 'www.example.test'"
    assert ct["culprit"] == "www.example.test" and ct["tags"] == [["hostname", "www.example.test"], ["port", "443"]]
    assert ct["expectct"]["effective_expiration_date"] == "2014-05-01T12:40:50Z"
    [staple] = read(body({"expect-staple-report": {"hostname": "www.example.test"}}))
    assert staple["logentry"]["formatted"] == "Expect-Staple failed for 'www.example.test'"
    [pins] = read(body(HPKP))
    assert pins["logentry"]["formatted"] == "Public key pinning validation failed for 'www.example.test'"
    assert pins["culprit"] == "" and ["include-subdomains", "false"] in pins["tags"]
    assert pins["hpkp"]["known_pins"] == HPKP["known-pins"] and pins["fingerprint"] == ["hpkp", "www.example.test"]


@pytest.mark.parametrize(("sent", "status", "complaint"), [
    (b"{not json", 400, "not readable"),
    (b'"a string"', 400, "a JSON object, or a JSON array"),
    (body({"hello": 1}), 400, "no security report Lookout reads"),
    (body({"csp-report": "text"}), 400, "csp-report must be a JSON object"),
    (body({"csp-report": {"effective-directive": "nonsense"}}), 400, "names no directive"),
    (body([VIOLATION, {"type": "csp-violation", "body": {"effectiveDirective": "x"}}]), 400, "Report 2 of the batch"),
    (body([VIOLATION, 3]), 400, "Report 2 of the batch: A report must be a JSON object"),
    (body({"expect-ct-report": {"port": 443}}), 400, "names no hostname"),
    (body({"hostname": "h", "known-pins": "pin"}), 400, "known-pins must be a list"),
    (body([VIOLATION] * (MAX_REPORTS + 1)), 413, f"the limit is {MAX_REPORTS}"),
    (b"[" * 200 + b"]" * 200, 400, "nested more than"),
], ids=["not-json", "not-an-object", "unknown-shape", "csp-report-text", "no-directive", "bad-in-batch",
        "not-an-object-in-batch", "no-hostname", "pins-not-a-list", "batch-too-long", "too-deep"])
def test_a_bad_body_gets_a_sentence(sent: bytes, status: int, complaint: str) -> None:
    with pytest.raises(ReportError) as refused:
        read(sent)
    assert refused.value.status == status and complaint in refused.value.message


def test_a_full_batch_is_read() -> None:
    assert len(read(body([VIOLATION] * MAX_REPORTS))) == MAX_REPORTS


@pytest.mark.parametrize("header", ["application/csp-report", "application/reports+json", "application/json; charset=utf-8",
                                    "Application/Expect-CT-Report+JSON", "application/expect-staple-report"])
def test_the_security_media_types_are_taken(header: str) -> None:
    check_content_type(header)


@pytest.mark.parametrize("header", ["", "text/plain", "application/x-www-form-urlencoded"])
def test_other_media_types_are_refused(header: str) -> None:
    with pytest.raises(ReportError, match="Content-Type is") as refused:
        check_content_type(header)
    assert refused.value.status == 415
