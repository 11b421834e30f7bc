"""Source maps of a Reflex app's production build: debug IDs injected by sentry-cli, the maps taken out of
what is served (kept in `.web/lookout-sourcemaps/`) and uploaded to a Lookout or to Sentry
(docs/source-maps.md; design §9 of docs/design/reflex-plugin.md)."""
