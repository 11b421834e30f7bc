"""The error boundary's page: the console's navigation and a sentence saying the error was
reported, in plain elements (the boundary is outside Radix Themes' wrap), with links that load their
page afresh (a client-side navigation would leave the boundary showing this page)."""

from __future__ import annotations

from app import routes
from app.components import error_boundary


def test_the_error_page_has_the_consoles_navigation_and_says_the_error_was_reported() -> None:
    compiled = str(error_boundary.fallback())
    for _, path in routes.NAVIGATION:
        assert f'reloadDocument:true,to:"{path}"' in compiled, path
    for element in ("error-fallback-title", "error-fallback-reported", "error-fallback-retry", "error-fallback-home",
                    "error-fallback-issues", "lookout-plain-header"):
        assert f'id:"{element}"' in compiled, element
    assert "The error has been reported" in compiled
    assert "RadixThemes" not in compiled  # outside the theme, its components would be unstyled


def test_every_link_of_the_error_page_loads_its_page_afresh() -> None:
    compiled = str(error_boundary.fallback())
    links = compiled.split("jsx(ReactRouterLink,")[1:]
    assert len(links) == len(routes.NAVIGATION) + 3  # the product name, the navigation, Overview and Issues
    assert all("reloadDocument:true" in link[:link.index("to:")] for link in links)  # (props in name order)
