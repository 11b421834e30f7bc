"""Source maps: the app's own builds get debug IDs and keep their maps server-side (build_step,
library), and browser stack traces are symbolicated with them at ingest, before grouping
(symbolicate). `maps.py` holds the types the parts share."""
