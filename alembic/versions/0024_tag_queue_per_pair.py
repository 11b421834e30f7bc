"""tag queue rows as {"key\\nvalue": [count, first, last]} instead of a list of [key, value, ...]

Revision ID: 0024_tag_queue_per_pair
Revises: 0023_tag_queue
Create Date: 2026-11-29 03:50:00

The ingest transaction now stores an issue's batch counts as the dict it gathers them in, keyed by
"key\\nvalue" (app/inbox/tag_index.py, `TagCounts`), and the tag counter sums them in the database
(app/ingest/tag_counter.py). Rows queued in the earlier form are rewritten, and back on downgrade.
"""
import json
from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = '0024_tag_queue_per_pair'
down_revision: str | Sequence[str] | None = '0023_tag_queue'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _rewrite(change: Callable[[Any], Any]) -> None:
    connection = op.get_bind()
    for row_id, counts in connection.execute(sa.text("SELECT id, counts FROM inbox_tag_queue")).all():
        connection.execute(sa.text("UPDATE inbox_tag_queue SET counts = :counts WHERE id = :id"),
                           {"id": row_id, "counts": json.dumps(change(json.loads(counts)), separators=(",", ":"))})


def upgrade() -> None:
    """Upgrade schema."""
    _rewrite(lambda listed: {f"{key}\n{value}": [count, first, last] for key, value, count, first, last in listed})


def downgrade() -> None:
    """Downgrade schema."""
    _rewrite(lambda paired: [[*pair.split("\n", 1), *counted] for pair, counted in paired.items()])
