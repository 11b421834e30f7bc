"""event trace: the trace an error event happened in, so a trace page lists its errors and log lines

Revision ID: 0016_event_trace
Revises: 0015_triage
Create Date: 2026-11-26 19:00:00

Events stored before this revision keep "" (their trace is in their JSON; no pass reads it back).
"""
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

# revision identifiers, used by Alembic.
revision: str = '0016_event_trace'
down_revision: str | Sequence[str] | None = '0015_triage'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    with op.batch_alter_table('inbox_event', schema=None) as batch_op:
        batch_op.add_column(sa.Column('trace_id', sqlmodel.sql.sqltypes.AutoString(), nullable=False, server_default=''))
        batch_op.create_index('ix_inbox_event_trace', ['trace_id'], unique=False)
    with op.batch_alter_table('inbox_log', schema=None) as batch_op:
        batch_op.create_index('ix_inbox_log_trace', ['trace_id'], unique=False)


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table('inbox_log', schema=None) as batch_op:
        batch_op.drop_index('ix_inbox_log_trace')
    with op.batch_alter_table('inbox_event', schema=None) as batch_op:
        batch_op.drop_index('ix_inbox_event_trace')
        batch_op.drop_column('trace_id')
