"""sentry-cli's upload for Sentry mode (reflex_lookout/sourcemaps/sentry_cli.py): its sentences as the home page
and the log show them, and the token never on its command line. The uploads themselves, with the
real sentry-cli against a second Lookout, are in test_to_sentry.py."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from reflex_lookout.sourcemaps import sentry_cli
from reflex_lookout.sourcemaps.bundle import BundleFile, Manifest
from reflex_lookout.sourcemaps.sentry_cli import Target, cli_sentence

# As sentry-cli 3.8.0 prints them (/work/notes15/experiment/outputs, e_401.out and e_server_down.out).
REFUSED = """  WARN    2026-11-24 15:07:52.471512985 +00:00 Unrecognized auth token format. \
Ensure you copied your token correctly.
error: API request failed

Caused by:
    sentry reported an error: Invalid token (http status: 401)

Stack backtrace:
   0: anyhow::error::<impl core::convert::From<E> for anyhow::Error>::from

Add --log-level=[info|debug] or export SENTRY_LOG_LEVEL=[info|debug] to see more output.
"""
DOWN = """error: API request failed

Caused by:
    0: API request failed
    1: [7] Could not connect to server (Failed to connect to 127.0.0.1:18999 after 0 ms: Could not connect to server)

Add --log-level=[info|debug] or export SENTRY_LOG_LEVEL=[info|debug] to see more output.
"""


@pytest.mark.parametrize(("output", "wanted"), [
    (REFUSED, "API request failed: sentry reported an error: Invalid token (http status: 401)"),
    (DOWN, "API request failed: [7] Could not connect to server (Failed to connect to 127.0.0.1:18999 after 0 ms: "
           "Could not connect to server)"),
    ("error: organization not found\n\nStack backtrace:\n   0: x\n", "organization not found"),
    ("> Bundled 2 files\nerror: Failed to process uploaded files: The bundle is over 100 MiB\n",
     "Failed to process uploaded files: The bundle is over 100 MiB"),
    ("", "sentry-cli failed (exit 2)."),
    ("Segmentation fault\n", "sentry-cli failed (exit 2): Segmentation fault"),
])
def test_sentry_clis_sentence(output: str, wanted: str) -> None:
    assert cli_sentence(output, 2) == wanted


def test_a_sentence_is_bounded() -> None:
    assert len(cli_sentence("error: " + "x" * 100_000, 1)) == sentry_cli.MAX_SENTENCE


def test_only_the_chunks_and_maps_go_the_token_in_the_environment_blanked_out_of_sentences(tmp_path: Path) -> None:
    """A "sentry-cli" that prints what it was given: the token is not among its arguments, and
    where it prints the token, the sentence blanks it out; the directory it is given holds the
    manifest's chunk and map, as served (under the frontend path), and nothing else."""
    token = "ab" * 32
    cli = tmp_path / "sentry-cli"
    cli.write_text('#!/bin/sh\nfor last; do :; done\n'
                   'echo "error: given $* with $SENTRY_AUTH_TOKEN: $(cd "$last" && find . -type f | sort | xargs)" >&2\n'
                   'exit 1\n')
    cli.chmod(0o755)
    directory = tmp_path / "bundle"
    (directory / "assets").mkdir(parents=True)
    (directory / "assets" / "a.js").write_text("a();\n")
    (directory / "assets" / "a.js.map").write_text("{}")
    (directory / "assets" / "style.css.map").write_text("{}")  # a stylesheet's map: no chunk's
    served_under_app = BundleFile(str(uuid.UUID(int=1)), "/app/assets/a.js", "0" * 64, "assets/a.js", "assets/a.js.map")

    ok, sentence = sentry_cli.upload(directory, Manifest("b" * 20, 1.0, (served_under_app,)), Target("", "o", "p", token), cli)

    assert not ok and token not in sentence and " with [token]: " in sentence
    assert sentence.endswith(": ./assets/a.js ./assets/a.js.map")  # the manifest's chunk and map, nothing else
    assert " sourcemaps upload --org o --project p --url-prefix ~/app --no-rewrite --strict " in sentence
    assert not any(directory.glob(".upload-*"))  # the staged copy is gone
