"""What the benchmarks share: their processes (`processes`), the servers among them (`servers`), the
Debian tools they need (`tools`), load generation (`load`; `mixload` for many distinct requests),
Lookout under load (`lookout`), a realistic mix of SDK envelopes (`mix`), Bugsink as a peer
(`bugsink`), where a server's CPU goes (`profile`), and figures and goals (`stats`, `report`).
Benchmarks run from the repository's root as `python -m bench.NAME`."""
