"""The old path of the projects' command line (now app/projects/registry.py), kept so that
`python -m app.inbox.projects …` still works."""

from app.projects.registry import main

if __name__ == "__main__":
    raise SystemExit(main())
