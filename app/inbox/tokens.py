"""`python -m app.inbox.tokens`, as before the move: `python -m app tokens` (app/cli.py)."""

if __name__ == "__main__":
    import sys

    from app.cli import run

    sys.exit(run(["tokens", *sys.argv[1:]]))
