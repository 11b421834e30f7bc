"""The /settings page as compiled: every string from outside is a text child, never HTML, and each
filter and option has its control and its element id."""

from __future__ import annotations

from app.pages import project_settings
from app.projects.filter_options import LABELS


def test_the_page_renders_every_string_from_outside_as_text_and_has_every_control() -> None:
    compiled = str(project_settings.page())
    assert "dangerouslySetInnerHTML" not in compiled
    dashed = [name.replace("_", "-") for name in LABELS]
    controls = [f"filter-dropped-{name}" for name in dashed] + [
        "filter-browser-extensions", "filter-legacy-browsers", "filter-health-checks", "settings-error-messages",
        "settings-client-ips", "settings-releases", "settings-sensitive-fields", "settings-safe-fields",
        "scrub-scrub-data", "scrub-scrub-defaults", "scrub-scrub-ip-addresses", "filters-save", "scrubbing-save",
        "settings-project", "settings-readonly", "settings-error"]
    for element in controls:
        assert f'"{element}' in compiled, element
