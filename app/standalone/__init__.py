"""Entry points beside app/app.py: the pipeline as bare ASGI apps (no Reflex, no pages), wired by
app/wiring.py like the Reflex backend, for tests and benchmarks that run it in processes of their own."""
