"""Cron monitors: sentry-sdk's `check_in` items, each job's schedule, and the watcher that notices a
missed or overrun job (docs/monitors.md)."""
