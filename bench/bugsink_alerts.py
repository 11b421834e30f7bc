"""Bugsink as the alert benchmark's peer (bench/alert_latency.py): its venv (bench/.bugsink-venv, from
bench/bugsink-requirements.txt, made on first use), a `local` configuration with the databases in a
folder of the run's, migrated once per run, and a project whose new issues alert a Slack-compatible
webhook, served by gunicorn, with its task runner (snappea) or with eager tasks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from bench.harness.processes import ROOT, Processes
from bench.harness.servers import HOST, free_port, wait_ready

BUGSINK_REQUIREMENTS = ROOT / "bench" / "bugsink-requirements.txt"
BUGSINK_VENV = ROOT / "bench" / ".bugsink-venv"

# Runs in Bugsink's venv, its conf dir on PYTHONPATH. With no argument: migrate. With one: a project
# alerting to that Slack URL; prints the project's id and key.
BUGSINK_SETUP = r"""
import json, os, sys
os.environ["DJANGO_SETTINGS_MODULE"] = "bugsink_conf"
import django; django.setup()
if len(sys.argv) < 2:
    from django.core.management import call_command
    call_command("migrate", verbosity=0); call_command("migrate", database="snappea", verbosity=0)
    sys.exit()
from projects.models import Project
from alerts.models import MessagingServiceConfig
project = Project.objects.create(name="bench", alert_on_new_issue=True)
MessagingServiceConfig.objects.create(project=project, display_name="bench", kind="slack",
                                      config=json.dumps({"webhook_url": sys.argv[1]}))
print(json.dumps({"id": project.id, "key": str(project.sentry_key)}))
"""

# Appended to the `local` template's output; {dir}, {eager}, {port} filled in.
BUGSINK_CONF = """
DATABASES["default"]["NAME"] = "{dir}/db.sqlite3"
DATABASES["snappea"]["NAME"] = "{dir}/snappea.sqlite3"
SNAPPEA = {{"TASK_ALWAYS_EAGER": {eager}, "NUM_WORKERS": 4, "PID_FILE": None, "WAKEUP_CALLS_DIR": "{dir}/wakeup"}}
BUGSINK.update({{
    "BASE_URL": "http://127.0.0.1:{port}",
    "INGEST_STORE_BASE_DIR": "{dir}/ingestion",
    "PHONEHOME": False,
    "ALERTS_WEBHOOK_ALLOW_LIST": ["127.0.0.1"],
    "ALERTS_WEBHOOK_DENY_NON_GLOBAL": False,
}})
"""


def bugsink_python() -> Path:
    python = BUGSINK_VENV / "bin" / "python"
    if not python.exists():
        print(f"  installing Bugsink into {BUGSINK_VENV} (once) ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(BUGSINK_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "-r", str(BUGSINK_REQUIREMENTS)], check=True)
    return python


def bugsink_version() -> str:
    found = sorted(BUGSINK_VENV.glob("lib/python*/site-packages/bugsink-*.dist-info"))
    return found[-1].name.removeprefix("bugsink-").removesuffix(".dist-info") if found else "(not installed yet)"


def bugsink_conf(conf: Path, eager: bool, port: int) -> dict[str, str]:
    """A `local` configuration in `conf` (databases there); the environment Bugsink's commands need."""
    conf.mkdir()
    subprocess.run([str(BUGSINK_VENV / "bin" / "bugsink-create-conf"), "--template=local", "-o",
                    str(conf / "bugsink_conf.py")], check=True, cwd=conf, stdout=subprocess.DEVNULL)
    with (conf / "bugsink_conf.py").open("a") as out:
        out.write(BUGSINK_CONF.format(dir=conf, eager=eager, port=port))
    return {"PYTHONPATH": str(conf), "DJANGO_SETTINGS_MODULE": "bugsink_conf"}


def bugsink_setup(env: dict[str, str], *argv: str) -> str:
    done = subprocess.run([str(bugsink_python()), "-c", BUGSINK_SETUP, *argv], capture_output=True, text=True,
                          env={**os.environ, **env})
    if done.returncode != 0:
        raise RuntimeError(f"Bugsink's set-up failed:\n{done.stderr[-3000:]}")
    return done.stdout


def migrated_bugsink(cache: Path) -> Path:
    """Bugsink's two databases, migrated once per run in `cache` (a copy goes to each server)."""
    conf = cache / "bugsink-migrated"
    if not conf.exists():
        bugsink_setup(bugsink_conf(conf, eager=True, port=0))
    return conf


def start(processes: Processes, workdir: Path, cache: Path, slack_url: str, eager: bool, workers: int) -> str:
    """Bugsink serving a project that alerts `slack_url`; the project's `/store/` URL with its key."""
    migrated, port, conf = migrated_bugsink(cache), free_port(), workdir / "bugsink"
    env = bugsink_conf(conf, eager, port)
    for name in ("db.sqlite3", "snappea.sqlite3"):
        shutil.copyfile(migrated / name, conf / name)
    project = json.loads(bugsink_setup(env, slack_url).strip().splitlines()[-1])
    processes.start("bugsink", [str(BUGSINK_VENV / "bin" / "gunicorn"), "--bind", f"{HOST}:{port}", "--workers",
                                str(workers), "--timeout", "60", "bugsink.wsgi"], env)
    if not eager:
        processes.start("snappea", [str(BUGSINK_VENV / "bin" / "bugsink-runsnappea")], env)
    wait_ready(processes, "bugsink", port, "/health/ready")
    return f"http://{HOST}:{port}/api/{project['id']}/store/?sentry_key={project['key']}"
