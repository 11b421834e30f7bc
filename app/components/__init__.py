"""Components shared by several pages."""
