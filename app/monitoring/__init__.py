"""The error-reporting pipeline: settings, tunnel, outbox, inbox, SDK set-up."""
