"""`.web/package.json` back on one line (app/package_json.py), and the committed copy in that form."""

from __future__ import annotations

import json
from pathlib import Path

from app.package_json import keep_compact

ROOT = Path(__file__).resolve().parents[1]


def test_a_pretty_printed_package_json_is_written_back_on_one_line_with_the_same_content(tmp_path: Path) -> None:
    committed = (ROOT / "reflex.lock" / "package.json").read_text()
    (tmp_path / "package.json").write_text(json.dumps(json.loads(committed), indent=2) + "\n")  # as bun writes it
    assert keep_compact(tmp_path)
    assert (tmp_path / "package.json").read_text() == committed
    assert not keep_compact(tmp_path)  # already as Reflex writes it


def test_a_missing_or_broken_file_is_left_to_reflex(tmp_path: Path) -> None:
    assert not keep_compact(tmp_path)
    (tmp_path / "package.json").write_text('{"name": ')
    assert not keep_compact(tmp_path) and (tmp_path / "package.json").read_text() == '{"name": '


def test_the_committed_copy_is_in_the_form_reflex_writes() -> None:
    committed = (ROOT / "reflex.lock" / "package.json").read_text()
    assert committed == json.dumps(json.loads(committed))
