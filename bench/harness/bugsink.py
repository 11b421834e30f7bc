"""Bugsink's ingest rate, as bench/inbox_ingest.py measures it: Bugsink 2.6.1 (the `bugsink` package,
pinned with its dependencies in bench/bugsink-requirements.txt, in a venv of its own under
bench/.bugsink-venv, made on first use), its envelope endpoint through Django's test client in one
process, with the `local` configuration template (`bugsink-create-conf`), which digests each event
immediately, on SQLite files in a temp dir."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.harness.processes import ROOT

BUGSINK_REQUIREMENTS = ROOT / "bench" / "bugsink-requirements.txt"  # bugsink 2.6.1 and its dependencies, pinned
BUGSINK_VENV = ROOT / "bench" / ".bugsink-venv"
# Runs inside Bugsink's venv, its config dir on PYTHONPATH: argv = envelopes file (a JSON list of
# [base64 body, Content-Encoding]).
BUGSINK_SCRIPT = r"""
import json, os, sys, time
os.environ["DJANGO_SETTINGS_MODULE"] = "bugsink_conf"  # its conf dir is on PYTHONPATH
import django; django.setup()
from django.conf import settings; settings.ALLOWED_HOSTS = ["*"]
from django.core.management import call_command
call_command("migrate", verbosity=0); call_command("migrate", database="snappea", verbosity=0)
from projects.models import Project
from events.models import Event
from django.test import Client
project = Project.objects.create(name="bench")
import base64
bodies = [(base64.b64decode(b), encoding) for b, encoding in json.load(open(sys.argv[1]))]
auth = f"Sentry sentry_version=7, sentry_key={project.sentry_key}, sentry_client=bench/1"
client = Client()
start, cpu = time.perf_counter(), time.process_time()
for body, encoding in bodies:
    coded = {"HTTP_CONTENT_ENCODING": encoding} if encoding else {}
    answer = client.post(f"/api/{project.id}/envelope/", data=body, content_type="application/x-sentry-envelope",
                         HTTP_X_SENTRY_AUTH=auth, **coded)
    assert answer.status_code == 200, answer.content[:300]
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
print(json.dumps({"events": len(bodies), "seconds": seconds, "cpu": cpu, "stored": Event.objects.count()}))
"""


@dataclass(frozen=True)
class BugsinkRun:
    envelopes: int  # posted, each answered 200
    seconds: float  # from the first post to the last answer
    stored: int  # events Bugsink stored
    cpu_seconds: float  # the CPU its process used meanwhile

    @property
    def per_second(self) -> float:
        return self.envelopes / self.seconds


def pinned_version() -> str:
    """The Bugsink version bench/bugsink-requirements.txt pins."""
    for line in BUGSINK_REQUIREMENTS.read_text().splitlines():
        if line.startswith("bugsink=="):
            return line.removeprefix("bugsink==").strip()
    return "?"


def python() -> Path:
    """Bugsink's venv's interpreter, the venv made first if missing."""
    found = BUGSINK_VENV / "bin" / "python"
    if not found.exists():
        print(f"  installing Bugsink into {BUGSINK_VENV} (once) ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(BUGSINK_VENV)], check=True)
        subprocess.run([str(found), "-m", "pip", "install", "--quiet", "-r", str(BUGSINK_REQUIREMENTS)], check=True)
    return found


def run_bugsink(bodies: Sequence[tuple[bytes, str]], workdir: Path) -> BugsinkRun:
    """Post each (body, Content-Encoding) to a fresh Bugsink's envelope endpoint, in order, in one
    process (its config and databases under `workdir`/bugsink); every answer must be 200."""
    interpreter = python()
    conf = workdir / "bugsink"
    conf.mkdir()
    subprocess.run([str(BUGSINK_VENV / "bin" / "bugsink-create-conf"), "--template=local", "-o",
                    str(conf / "bugsink_conf.py")], check=True, cwd=conf, stdout=subprocess.DEVNULL)
    data = workdir / "envelopes.json"
    data.write_text(json.dumps([[base64.b64encode(body).decode(), encoding] for body, encoding in bodies]))
    done = subprocess.run([str(interpreter), "-c", BUGSINK_SCRIPT, str(data), str(conf)], cwd=conf,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(conf)})
    if done.returncode != 0:
        raise RuntimeError(f"Bugsink's run failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return BugsinkRun(int(result["events"]), float(result["seconds"]), int(result["stored"]), float(result["cpu"]))
