"""What the plugin's tests share (plugin/tests/): a real upstream on loopback, envelopes, a host app's
attributes, the outbox's engines, waiting helpers. Lookout's own tests (tests/) import them from here
too, never the other way round: nothing here imports `app` or `tests`."""
