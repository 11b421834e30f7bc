"""Stored events as the console shows them: display rows for an event (tags, contexts, breadcrumbs,
waterfalls) and its stack, beside the pages that use them."""
