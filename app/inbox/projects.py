"""`python -m app.inbox.projects`, as before the move: `python -m app projects` (app/cli.py)."""

if __name__ == "__main__":
    import sys

    from app.cli import run

    sys.exit(run(["projects", *sys.argv[1:]]))
