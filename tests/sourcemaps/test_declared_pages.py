"""The Python pages another app's modules declare in their map's sourcesContent (the line
`pages.page_marker` writes), and what is no declaration."""

from __future__ import annotations

import json

from app.sourcemaps.declared_pages import MAX_DECLARATION, declared_pages
from reflex_lookout.sourcemaps.pages import PAGE_MARKER, page_marker
from tests.sourcemaps.dev_servers import OTHER_PAGE


def map_of(sources: list[object], contents: list[object]) -> bytes:
    return json.dumps({"version": 3, "sources": sources, "sourcesContent": contents, "mappings": ""}).encode()


def test_each_source_that_declares_its_page_is_named_by_its_project_path() -> None:
    other = OTHER_PAGE.__class__(module="shop.admin", function="<module>", file="shop/admin.py", line=0)
    found = declared_pages(map_of(
        ["_index.jsx", "../../app_components/shop/admin.jsx", "../../node_modules/x.js"],
        [f"import x;\n{page_marker(OTHER_PAGE)}\nfunction Component() {{}}\n", f"{page_marker(other)}\r\n", "no page\n"],
    ), "/app/routes/_index.jsx", "dev")
    assert found == {".web/app/routes/_index.jsx": OTHER_PAGE, ".web/app_components/shop/admin.jsx": other}


def test_what_is_no_declaration_is_left_out() -> None:
    marker = page_marker(OTHER_PAGE)
    assert declared_pages(map_of(["a.jsx"], ["function a() {}\n"]), "/a.jsx", "dev") == {}  # no marker: no parse
    assert declared_pages(b"{broken " + PAGE_MARKER.encode(), "/a.jsx", "dev") == {}
    assert declared_pages(map_of(["a.jsx"], [None]), "/a.jsx", "dev") == {}
    wrong = [f"x = 1; {marker}\n",  # not a line of its own
             PAGE_MARKER + '{"module": "m", "function": "f", "file": "f.py", "line": "7"}\n',  # the shape is PageSource's
             PAGE_MARKER + "{not json}\n",
             PAGE_MARKER + '{"module": "' + "m" * MAX_DECLARATION + '", "function": "f", "file": "f.py", "line": 7}\n']
    assert declared_pages(map_of(["a.jsx"] * len(wrong), wrong), "/a.jsx", "dev") == {}
    assert declared_pages(json.dumps({"sources": "a.jsx", "sourcesContent": [marker]}).encode(), "/a.jsx", "dev") == {}
