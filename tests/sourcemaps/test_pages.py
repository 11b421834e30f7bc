"""The route-module → Python page map, on the real app and on what Reflex generates."""

from __future__ import annotations

import inspect
import json

import app.app  # the pages are registered on import
from app.pages import home, try_errors
from reflex_lookout.sourcemaps import pages
from reflex_lookout.sourcemaps.pages import PageSource, page_source, page_sources, route_module


def test_the_try_page_names_its_python_function() -> None:
    found = page_sources(app.app.app)
    line = inspect.getsourcelines(try_errors.page)[1]
    assert found[".web/app/routes/[try]._index.jsx"] == PageSource(
        module="app.pages.try_errors", function="page", file="app/pages/try_errors.py", line=line
    )
    assert found[".web/app/routes/[try].[slow]._index.jsx"].function == "slow_page"
    assert found[".web/app/routes/_index.jsx"].file == "app/pages/home.py"
    assert found[".web/app/routes/_index.jsx"].line == inspect.getsourcelines(home.page)[1]


def test_component_modules_name_their_page_or_the_module_when_it_has_several() -> None:
    found = page_sources(app.app.app)
    assert found[".web/app_components/app/pages/home.jsx"] == found[".web/app/routes/_index.jsx"]
    assert found[".web/app_components/app/pages/try_errors.jsx"] == PageSource(
        module="app.pages.try_errors", function="<module>", file="app/pages/try_errors.py", line=0
    )
    assert ".web/app_components/app/components/layout.jsx" not in found  # shared components: no page


def test_route_modules_are_named_as_reflex_names_them() -> None:
    assert route_module("index") == ".web/app/routes/_index.jsx"
    assert route_module("try/slow") == ".web/app/routes/[try].[slow]._index.jsx"
    assert route_module("404") == ".web/app/routes/[404]._index.jsx"
    assert route_module("post/[id]") == ".web/app/routes/[post].$[id]._index.jsx"


def test_only_functions_of_the_project_have_a_source() -> None:
    assert page_source(json.dumps) is None  # a function outside the project
    assert page_source(len) is None  # not a Python function
    assert page_source("a component") is None


def test_the_map_survives_json_and_bad_entries_are_left_out() -> None:
    found = page_sources(app.app.app)
    assert pages.from_json(json.loads(json.dumps(pages.to_json(found)))) == found
    assert pages.from_json({"a": {"module": "m", "function": "f", "file": "f.py", "line": "1"}, "b": 3}) == {}
    assert pages.from_json([1, 2]) == {}
