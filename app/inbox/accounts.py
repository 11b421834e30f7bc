"""`python -m app.inbox.accounts`, as before the move: the console accounts' CLI is app/console/accounts.py."""

if __name__ == "__main__":
    import sys

    from app.console.accounts import main

    sys.exit(main())
