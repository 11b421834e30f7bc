"""The background work of a backend process: supervised tasks that restart when they fail, and the
leases that keep one worker at a time on a job."""
