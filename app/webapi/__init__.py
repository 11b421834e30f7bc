"""Sentry's web API on Lookout (`/api/0/`): API tokens, their scopes, and who a request acts as."""
