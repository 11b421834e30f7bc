"""`python -m app.inbox.accounts`, as before the move: `python -m app accounts` (app/cli.py)."""

if __name__ == "__main__":
    import sys

    from app.cli import run

    sys.exit(run(["accounts", *sys.argv[1:]]))
