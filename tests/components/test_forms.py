"""The console's selects: one component (`native_select`, or its style on a select of fixed options)
on every page, plain <select>s that scripts and the browser tests pick by value, drawn like the Radix
controls beside them; and, inside a form, named, so Reflex 0.11 still submits them (Reflex 0.10 warns
at every compile about a control submitted by its `id`)."""

from __future__ import annotations

import re

import pytest
import reflex as rx
from reflex_components_core.el.elements import forms as reflex_forms

from app.components import forms
from app.pages import alerts, issue, issues, tokens
from app.pages.alerts_state import AlertsState

PAGES = {"issues": issues.page, "alerts": alerts.page, "tokens": tokens.page, "issue": issue.page}
DRAWN = '["boxShadow"] : "inset 0 0 0 1px var(--gray-a7)"'


@pytest.mark.parametrize("name", sorted(PAGES))
def test_every_select_of_a_console_page_is_drawn_like_the_radix_controls(name: str) -> None:
    compiled = str(PAGES[name]())
    selects = [m.start() for m in re.finditer(r'jsx\("select",', compiled)]
    assert selects, name
    for at in selects:
        props = compiled[at:compiled.index("onChange:", at)]
        assert DRAWN in props and '["height"] : "var(--space-' in props, props[:300]


def test_a_native_select_is_named_like_its_id() -> None:
    compiled = str(forms.native_select(["a", "b"], rx.Var.create("a"), AlertsState.set_kind, "some-choice"))
    assert 'id:"some-choice",name:"some-choice"' in compiled


def test_the_issues_page_submits_no_control_by_its_id(monkeypatch: pytest.MonkeyPatch) -> None:
    warned: list[str] = []
    monkeypatch.setattr(reflex_forms.console, "deprecate", lambda **kwargs: warned.append(kwargs["feature_name"]))
    compiled = str(issues.page())
    assert not [w for w in warned if "by its `id`" in w], warned
    assert 'id:"issues-sort",name:"issues-sort"' in compiled and 'id:"issues-project",name:"issues-project"' in compiled
    assert 'name:"query"' in compiled  # what `IssuesState.search` reads from the form, unchanged
