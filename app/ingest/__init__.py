"""From bytes to rows: Sentry's ingest endpoints, the feeder that reads the outbox into the inbox,
and the writers (grouping, events, transactions, logs) behind InboxStore."""
