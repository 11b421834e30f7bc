"""Route paths and the navigation shown in the header."""

HOME = "/"
TRY = "/try"
TRY_SLOW = "/try/slow"
ISSUES = "/issues"
ISSUE = "/issue"  # ?id=N
NOT_FOUND = "404"  # Reflex's slug for the not-found route

# (label, path) in header order; later pages add themselves here.
NAVIGATION: list[tuple[str, str]] = [
    ("Overview", HOME),
    ("Issues", ISSUES),
    ("Try it", TRY),
]
