"""The client's address behind proxies on this machine, from every X-Forwarded-For line."""

from __future__ import annotations

from reflex_lookout.protocol.clients import MAX_FORWARDED, all_loopback, client_address, forwarded_chain


def test_a_long_line_keeps_its_end_where_the_proxy_wrote() -> None:
    # The client pads its own X-Forwarded-For with loopback addresses; the proxy appends the address
    # it was reached from to the same line (nginx's $proxy_add_x_forwarded_for, Vite's xfwd).
    invented = "  " + "127.0.0.1," * 400
    chain = forwarded_chain([invented + " 203.0.113.9"])
    assert chain[-1] == "203.0.113.9" and len(chain) <= MAX_FORWARDED
    assert not all_loopback("127.0.0.1", chain)
    assert client_address("127.0.0.1", chain, 1) == "203.0.113.9"
    assert all(part == "127.0.0.1" for part in chain[:-1])  # no address cut in two


def test_every_line_counts_and_the_last_lines_are_the_proxies() -> None:
    chain = forwarded_chain(["127.0.0.1", "203.0.113.9"])  # HAProxy adds a line of its own
    assert chain == ["127.0.0.1", "203.0.113.9"] and not all_loopback("127.0.0.1", chain)
    assert client_address("127.0.0.1", chain, 1) == "203.0.113.9"
    assert client_address("203.0.113.9", ["127.0.0.1"], 1) == "203.0.113.9"  # only proxies here are believed
