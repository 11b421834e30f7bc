"""A built front end served the way `reflex run --env prod` serves it: Reflex's own
PrecompressedStaticFiles (the build's .gz files, `index.html` for directories) in a Starlette app,
run under granian by bench/page_cost.py. The directory comes from LOOKOUT_BENCH_SITE."""

from __future__ import annotations

import os

from reflex.utils.precompressed_staticfiles import PrecompressedStaticFiles
from starlette.applications import Starlette
from starlette.routing import Mount

app = Starlette(routes=[Mount("/", app=PrecompressedStaticFiles(
    directory=os.environ["LOOKOUT_BENCH_SITE"], html=True, encodings=["gzip"],
))])
