"""What the benchmarks share: their processes (`processes`), the servers among them (`servers`), the
Debian tools they need (`tools`), load generation (`load`), Lookout under load (`lookout`), and
figures and goals (`stats`, `report`). Benchmarks run from the repository's root as
`python -m bench.NAME`."""
