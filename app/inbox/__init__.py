"""The embedded inbox, the reading side: reading and readers, issue states, retention, eviction and the
storage budget, projects, the inbox API, and the tables the writers (app/ingest/) fill."""
