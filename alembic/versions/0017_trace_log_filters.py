"""trace and log filters: the environment and release of each transaction and log line, so /traces
and /logs filter by them (and by project)

Revision ID: 0017_trace_log_filters
Revises: 0016_event_trace
Create Date: 2026-11-27 10:00:00

Transactions and log lines stored before this revision keep "" (theirs is in their JSON; no pass
reads it back): they show when no environment or release is chosen, until retention removes them.
"""
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

# revision identifiers, used by Alembic.
revision: str = '0017_trace_log_filters'
down_revision: str | Sequence[str] | None = '0016_event_trace'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TEXT = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    """Upgrade schema."""
    with op.batch_alter_table('inbox_transaction', schema=None) as batch_op:
        batch_op.add_column(sa.Column('environment', TEXT(), nullable=False, server_default=''))
        batch_op.add_column(sa.Column('release', TEXT(), nullable=False, server_default=''))
        batch_op.create_index('ix_inbox_transaction_project', ['project_id', 'id'], unique=False)
        batch_op.create_index('ix_inbox_transaction_environment', ['environment', 'id'], unique=False)
        batch_op.create_index('ix_inbox_transaction_release', ['release', 'id'], unique=False)
    with op.batch_alter_table('inbox_log', schema=None) as batch_op:
        batch_op.add_column(sa.Column('environment', TEXT(), nullable=False, server_default=''))
        batch_op.add_column(sa.Column('release', TEXT(), nullable=False, server_default=''))
        batch_op.create_index('ix_inbox_log_environment', ['environment', 'id'], unique=False)
        batch_op.create_index('ix_inbox_log_release', ['release', 'id'], unique=False)


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table('inbox_log', schema=None) as batch_op:
        batch_op.drop_index('ix_inbox_log_release')
        batch_op.drop_index('ix_inbox_log_environment')
        batch_op.drop_column('release')
        batch_op.drop_column('environment')
    with op.batch_alter_table('inbox_transaction', schema=None) as batch_op:
        batch_op.drop_index('ix_inbox_transaction_release')
        batch_op.drop_index('ix_inbox_transaction_environment')
        batch_op.drop_index('ix_inbox_transaction_project')
        batch_op.drop_column('release')
        batch_op.drop_column('environment')
