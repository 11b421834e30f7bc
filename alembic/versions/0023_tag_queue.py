"""tag counts queued by the ingest transaction, added into the tag index by a background pass

Revision ID: 0023_tag_queue
Revises: 0022_console_user_ids
Create Date: 2026-11-29 00:30:00

The ingest transaction no longer adds an event's tags into `inbox_issue_tag` itself: it stores a
batch's counts per issue in `inbox_tag_queue`, and the tag counter (app/ingest/tag_counter.py) adds
them into the index soon after, deleting each queue row in the transaction that adds it. The
downgrade adds what is still queued into the index before it drops the queue, so nothing counted is
lost either way.
"""
import json
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

# revision identifiers, used by Alembic.
revision: str = '0023_tag_queue'
down_revision: str | Sequence[str] | None = '0022_console_user_ids'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TEXT = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table('inbox_tag_queue',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('issue_id', sa.Integer(), nullable=False),
    sa.Column('counts', TEXT(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('inbox_tag_queue', schema=None) as batch_op:
        batch_op.create_index('ix_inbox_tag_queue_issue', ['issue_id'], unique=False)


def downgrade() -> None:
    """Downgrade schema: what is still queued is added into the index first."""
    connection = op.get_bind()
    issues = {row[0] for row in connection.execute(sa.text("SELECT id FROM inbox_issue"))}
    for issue_id, counts in connection.execute(sa.text("SELECT issue_id, counts FROM inbox_tag_queue ORDER BY id")).all():
        if issue_id not in issues:
            continue
        for key, value, count, first, last in json.loads(counts):
            found = {"issue_id": issue_id, "key": key, "value": value, "count": count, "first": first, "last": last}
            updated = connection.execute(sa.text(
                "UPDATE inbox_issue_tag SET count = count + :count,"
                " first_seen = CASE WHEN first_seen < :first THEN first_seen ELSE :first END,"
                " last_seen = CASE WHEN last_seen > :last THEN last_seen ELSE :last END"
                " WHERE issue_id = :issue_id AND key = :key AND value = :value"), found).rowcount
            if not updated:
                connection.execute(sa.text(
                    "INSERT INTO inbox_issue_tag (issue_id, key, value, count, first_seen, last_seen)"
                    " VALUES (:issue_id, :key, :value, :count, :first, :last)"), found)
    with op.batch_alter_table('inbox_tag_queue', schema=None) as batch_op:
        batch_op.drop_index('ix_inbox_tag_queue_issue')
    op.drop_table('inbox_tag_queue')
