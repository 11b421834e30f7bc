"""`python -m app.inbox.tokens`, as before the move: the upload tokens' CLI is app/sourcemaps/tokens.py."""

if __name__ == "__main__":
    import sys

    from app.sourcemaps.tokens import main

    sys.exit(main())
