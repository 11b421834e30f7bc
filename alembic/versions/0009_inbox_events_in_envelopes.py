"""inbox: events stay in their envelope's outbox row; read rows are marked in inbox_read

Revision ID: 0009_inbox_events_in_envelopes
Revises: 0008_inbox_feedback_counts
Create Date: 2026-11-23 00:45:00

"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = '0009_inbox_events_in_envelopes'
down_revision: str | Sequence[str] | None = '0008_inbox_feedback_counts'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table('inbox_read',
    sa.Column('outbox_id', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('read_at', sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint('outbox_id')
    )
    with op.batch_alter_table('inbox_event', schema=None) as batch_op:
        batch_op.add_column(sa.Column('envelope_id', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('item_index', sa.Integer(), nullable=True))
        batch_op.create_index('ix_inbox_event_envelope', ['envelope_id'], unique=False)
    # Rows read before this revision were marked in place.
    op.execute("INSERT INTO inbox_read (outbox_id, read_at) SELECT id, received_at FROM outbox WHERE status = 'inboxed'")
    op.execute("UPDATE outbox SET status = 'local' WHERE status = 'inboxed'")


def downgrade() -> None:
    """Downgrade schema."""
    op.execute("UPDATE outbox SET status = 'inboxed' WHERE id IN (SELECT outbox_id FROM inbox_read)")
    with op.batch_alter_table('inbox_event', schema=None) as batch_op:
        batch_op.drop_index('ix_inbox_event_envelope')
        batch_op.drop_column('item_index')
        batch_op.drop_column('envelope_id')
    op.drop_table('inbox_read')
