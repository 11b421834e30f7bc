"""Lookout's own background markers (housekeeping). The supervisor and the leases are the plugin's:
reflex_lookout/background.py."""
