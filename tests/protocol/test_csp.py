"""CSP reports read as Relay reads them: the effective directive, the title, the culprit, the tags
and the grouping (the expected values are Relay's own test cases where it has them)."""

from __future__ import annotations

import pytest

from app.protocol.csp import CspReport, InvalidReport, normalize_uri


@pytest.mark.parametrize(("uri", "normalized"), [
    ("", "'self'"), ("self", "'self'"), ("data", "data:"), ("http", "http://"), ("inline", "inline:"),
    ("http://notlocalhost/", "notlocalhost"), ("https://notlocalhost/", "notlocalhost"),
    ("data://notlocalhost/", "data://notlocalhost"), ("http://notlocalhost/lol.css", "notlocalhost"),
    ("http://notlocalhost:8000/lol.css", "notlocalhost:8000"), ("https://notlocalhost:443/", "notlocalhost"),
    ("xyz://notlocalhost/", "xyz://notlocalhost"), ("data:image/png;base64,AAAA", "data:"),
    ("http://[::1]:3000/x", "[::1]:3000"),
])
def test_a_blocked_uri_is_named_by_where_it_points(uri: str, normalized: str) -> None:
    assert normalize_uri(uri) == normalized


@pytest.mark.parametrize(("directive", "blocked", "title"), [
    ("script-src", "http://baddomain.test/test.js?_=1515535030116", "Blocked 'script' from 'baddomain.test'"),
    ("script-src-elem", "inline", "Blocked 'script' from 'inline:'"),
    ("script-src", "inline", "Blocked unsafe inline 'script'"),
    ("script-src", "eval", "Blocked unsafe eval() 'script'"),
    ("script-src", "self", "Blocked unsafe (eval() or inline) 'script'"),
    ("img-src", "https://cdn.example.test:8443/a.png", "Blocked 'image' from 'cdn.example.test:8443'"),
    ("img-src", "", "Blocked inline 'image'"),
    ("style-src-attr", "inline", "Blocked style attribute from 'inline:'"),
    ("style-src-elem", "'self'", "Blocked 'style' or 'link' element"),
    ("form-action", "https://elsewhere.test/post", "Blocked 'form' action to 'elsewhere.test'"),
    ("frame-ancestors", "https://framer.test/", "Blocked 'frame-ancestors' from 'framer.test'"),
    ("base-uri", "self", "Blocked inline 'base-uri'"),
])
def test_titles_follow_relay(directive: str, blocked: str, title: str) -> None:
    assert CspReport.read({"effective-directive": directive, "blocked-uri": blocked}).title() == title


def test_the_effective_directive_comes_from_the_violated_one_when_missing_or_unknown() -> None:
    firefox = CspReport.read({"violated-directive": "img-src 'self'", "blocked-uri": "https://x.test/"})
    assert firefox.directive == "img-src" and firefox.title() == "Blocked 'image' from 'x.test'"
    odd = CspReport.read({"effective-directive": "made-up", "violated-directive": "font-src 'self'"})
    assert odd.directive == "font-src"
    with pytest.raises(InvalidReport, match="names no directive"):
        CspReport.read({"effective-directive": "made-up", "violated-directive": "nothing-known"})


def test_the_reporting_apis_spelling_reads_as_csp2s() -> None:
    body = {"documentURL": "http://127.0.0.1:3000/issues", "blockedURL": "http://127.0.0.2:9/x.png",
            "effectiveDirective": "img-src", "originalPolicy": "img-src 'self'", "disposition": "report",
            "statusCode": 200, "lineNumber": "12", "columnNumber": "x", "sample": ""}
    report = CspReport.read(body)
    assert report.interface() == {
        "effective_directive": "img-src", "blocked_uri": "http://127.0.0.2:9/x.png",
        "document_uri": "http://127.0.0.1:3000/issues", "original_policy": "img-src 'self'", "status_code": 200,
        "line_number": 12, "script_sample": "", "disposition": "report", "violated_directive": "",
    }  # a column that is no number is left out
    assert report.tags() == [["effective-directive", "img-src"], ["blocked-uri", "http://127.0.0.2:9/x.png"],
                             ["blocked-host", "127.0.0.2"]]
    assert report.request() == {"url": "http://127.0.0.1:3000/issues"}


def test_the_culprit_names_the_documents_own_origin_self() -> None:
    report = CspReport.read({
        "document-uri": "https://example.test/foo", "referrer": "https://from.test/",
        "violated-directive": "script-src https://example.test 'unsafe-inline' cdn.test http://other.test",
        "blocked-uri": "http://evil.test/x.js",
    })
    assert report.culprit() == "script-src 'self' 'unsafe-inline' cdn.test http://other.test"
    assert report.request()["headers"] == [["Referer", "https://from.test/"]]


def test_reports_group_by_directive_and_where_the_blocked_resource_came_from() -> None:
    def grouping(directive: str, blocked: str) -> list[str]:
        return CspReport.read({"effective-directive": directive, "blocked-uri": blocked}).grouping()

    assert grouping("img-src", "https://cdn.test/a.png") == grouping("img-src", "https://cdn.test/b.png?v=2")
    assert grouping("img-src", "https://cdn.test/a.png") != grouping("img-src", "https://other.test/a.png")
    assert grouping("img-src", "https://cdn.test/a.png") != grouping("media-src", "https://cdn.test/a.png")
    assert grouping("script-src-elem", "inline") == ["csp", "script-src-elem", "inline:"]


def test_every_field_is_cut_and_stripes_query_is_left_out_of_the_tag() -> None:
    report = CspReport.read({"effective-directive": "connect-src", "script-sample": "x" * 100_000,
                             "blocked-uri": "https://api.stripe.com/v1/tokens?card=4242#f"})
    assert len(report.fields["script_sample"]) == 8192
    assert ["blocked-uri", "https://api.stripe.com/v1/tokens"] in report.tags()
