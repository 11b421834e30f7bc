"""The /alerts page as compiled: every string from outside is a text child, never HTML, and the
element ids the browser tests (tests/e2e/test_alerts.py) use are there."""

from __future__ import annotations

from app.pages import alerts


def test_the_page_renders_every_string_from_outside_as_text_and_keeps_the_element_ids() -> None:
    compiled = str(alerts.page())
    assert "dangerouslySetInnerHTML" not in compiled
    for element in ("alerts-channels", "alert-channel-", "channel-kind", "channel-target", "channel-secret",
                    "channel-project", "channel-add", "channel-remove-", "channel-toggle-", "channel-test-",
                    "channel-error", "channel-secret-once", "rules-project", "rule-new-issue", "rule-regression",
                    "rule-spike", "rule-spike-events", "rule-spike-minutes", "rule-quiet-minutes", "rules-save",
                    "alerts-readonly"):
        assert f'"{element}' in compiled, element


def test_the_choices_are_plain_selects_whose_options_a_script_picks_by_value() -> None:
    compiled = str(alerts.page())
    for element in ("channel-kind", "channel-project", "rules-project"):
        opened = compiled.rindex("jsx(", 0, compiled.index(f'id:"{element}"'))
        assert compiled.startswith('jsx("select"', opened), element
