"""Who counts as this machine: loopback all the way, a local Host, and no other site's Origin."""

from __future__ import annotations

import pytest

from app.console import access
from app.console.access import Caller, Site

SITE = Site.build("http://localhost:3000", 3000, "https://lookout.example.com")


@pytest.mark.parametrize(("caller", "local"), [
    (Caller("127.0.0.1", host="localhost:8000"), True),  # a script on this machine
    (Caller("::1", host="[::1]:8000"), True),
    (Caller("127.0.0.1", host="127.0.0.1:3000", origin="http://127.0.0.1:3000"), True),  # a page, same origin
    (Caller("127.0.0.1", host="app.localhost"), True),
    (Caller("127.0.0.1", host="localhost.:8000"), True),
    (Caller("127.0.0.1", host="LocalHost:8000", origin="http://localhost:3000"), True),  # dev: Vite's page, to :8000
    (Caller("127.0.0.1", host="localhost:8000", origin="http://127.0.0.1:3000"), True),
    (Caller("127.0.0.1", ("127.0.0.1",), host="lookout.example.com", origin="https://lookout.example.com"), True),
    # DNS rebinding: evil.example resolves to 127.0.0.1, and its page is "same origin".
    (Caller("127.0.0.1", host="evil.example:8000", origin="http://evil.example:8000"), False),
    (Caller("127.0.0.1", host="evil.example:8000"), False),
    (Caller("127.0.0.1", host="127.0.0.1.evil.example"), False),
    (Caller("127.0.0.1", host="localhost.evil.example"), False),
    (Caller("127.0.0.1", host="evil-localhost:8000"), False),  # a name of its own, not a subdomain of localhost
    (Caller("127.0.0.1", host="evillocalhost"), False),
    (Caller("127.0.0.1", host=""), False),
    (Caller("127.0.0.1", host="localhost:eighty"), False),
    # Another site's page in a browser on this machine.
    (Caller("127.0.0.1", host="localhost:8000", origin="https://evil.example"), False),
    (Caller("127.0.0.1", host="localhost:8000", origin="null"), False),  # a sandboxed frame, a file
    (Caller("127.0.0.1", host="localhost:8000", origin="http://localhost:5173"), False),  # another local app
    (Caller("127.0.0.1", host="localhost:3000", origin="https://localhost:3000.evil.example"), False),
    # A header sent twice is read joined (as Reflex does), and matches nothing.
    (Caller("127.0.0.1", host="localhost:8000, evil.example"), False),
    (Caller("127.0.0.1", host="localhost:8000", origin="http://localhost:3000, https://evil.example"), False),
    (Caller("127.0.0.1", host="localhost:8000", origin="http://localhost:3000" + "x" * 2000), False),
    # Not loopback all the way.
    (Caller("203.0.113.9", host="localhost:8000"), False),
    (Caller("127.0.0.1", ("203.0.113.9",), host="localhost:3000"), False),
    (Caller("127.0.0.1", ("203.0.113.9", "127.0.0.1"), host="localhost:3000"), False),
])
def test_this_machine_is_loopback_with_a_local_host_and_its_own_origin(caller: Caller, local: bool) -> None:
    assert access.this_machine(caller, SITE) is local


def test_without_a_public_url_its_host_is_no_name_of_this_machines() -> None:
    site = Site.build("http://localhost:3000", 3000, "")
    assert not access.this_machine(Caller("127.0.0.1", host="lookout.example.com"), site)
    assert access.foreign_origin(Caller("127.0.0.1", host="localhost:3000", origin="https://lookout.example.com"), site)


def test_every_header_line_is_read_as_reflex_joins_them() -> None:
    scope = {"client": ("127.0.0.1", 5000), "headers": [
        (b"host", b"localhost:8000"), (b"x-forwarded-for", b"127.0.0.1"), (b"x-forwarded-for", b"203.0.113.9"),
        (b"origin", b"http://localhost:3000"), (b"cookie", b"a=b"),
    ]}
    caller = Caller.from_scope(scope)
    assert caller == Caller("127.0.0.1", ("127.0.0.1", "203.0.113.9"), "localhost:8000", "http://localhost:3000")
    assert caller == Caller.from_headers("127.0.0.1", {
        "host": "localhost:8000", "x-forwarded-for": "127.0.0.1, 203.0.113.9", "origin": "http://localhost:3000",
    })
    assert not access.this_machine(caller, SITE)  # the client's own line said 127.0.0.1; the proxy's did not
    assert Caller.from_headers("127.0.0.1", {"origin": ""}).origin is None  # Reflex drops empty headers


@pytest.mark.parametrize(("peer", "forwarded_for", "proto", "hops", "https"), [
    ("127.0.0.1", ("203.0.113.9",), "https", 1, True),  # nginx on this machine, TLS outside
    ("127.0.0.1", ("203.0.113.9",), "http", 1, False),
    ("127.0.0.1", ("203.0.113.9",), "https", 0, False),  # no proxy believed
    ("203.0.113.9", (), "https", 1, False),  # a client elsewhere, claiming it
    ("127.0.0.1", ("203.0.113.9", "127.0.0.1"), "https, http", 2, True),  # two proxies here; the outer saw https
    ("127.0.0.1", ("203.0.113.9", "198.51.100.7"), "https, http", 2, False),  # the outer one is not on this machine
])
def test_https_is_believed_from_proxies_on_this_machine_only(
    peer: str, forwarded_for: tuple[str, ...], proto: str, hops: int, https: bool,
) -> None:
    assert access.forwarded_https(Caller(peer, forwarded_for, forwarded_proto=proto), hops) is https


def test_the_sites_names_come_from_reflex_and_the_public_url() -> None:
    assert {"http://localhost:3000", "http://127.0.0.1:3000", "http://[::1]:3000"} <= SITE.frontend_origins
    assert (SITE.public_origin, SITE.public_host) == ("https://lookout.example.com", "lookout.example.com")
    assert "http://localhost:3000" in access.this_site().frontend_origins  # rxconfig: Reflex's default deploy_url


def test_a_console_state_reads_the_rule_from_its_websockets_own_headers() -> None:
    from reflex.state import State

    import app.app  # noqa: F401 (registers the pages' states)
    from app.console import state as console

    def caller(headers: dict[str, str]) -> Caller:
        root = State(_reflex_internal_init=True)
        root.router_data = root._update_router_vars(
            {"ip": "127.0.0.1", "headers": headers, "pathname": "/issues", "asPath": "/issues", "query": {}, "token": "t"}, {})
        return Caller.from_router(root.router)

    assert console.viewer_of(caller({"host": "localhost:8000", "origin": "http://localhost:3000"}), "") is console.THIS_MACHINE
    assert console.viewer_of(caller({"host": "localhost:8000", "origin": "https://evil.example"}), "") is None
    assert console.viewer_of(caller({"host": "evil.example:8000", "origin": "http://evil.example:8000"}), "") is None
    proxied = caller({"host": "localhost:3000", "x-forwarded-for": "127.0.0.1, 203.0.113.9"})
    assert proxied.forwarded_for == ("127.0.0.1", "203.0.113.9") and console.viewer_of(proxied, "") is None
