"""`python -m app.inbox.tokens`: the upload tokens' commands as before the move (app/sourcemaps/tokens.py)
and the API tokens' `api`, `api-list` and `api-revoke` (app/webapi/cli.py)."""

if __name__ == "__main__":
    import sys

    from app.webapi import cli

    if sys.argv[1:2] and sys.argv[1] in cli.COMMANDS:
        sys.exit(cli.main(sys.argv[1:]))
    from app.sourcemaps.tokens import main

    sys.exit(main())
