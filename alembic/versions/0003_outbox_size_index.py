"""outbox: an index covering the depth and size sums

Revision ID: 0003_outbox_size_index
Revises: 0002_outbox
Create Date: 2026-11-22 19:20:00

"""
from collections.abc import Sequence

from alembic import op

revision: str = '0003_outbox_size_index'
down_revision: str | Sequence[str] | None = '0002_outbox'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.create_index('ix_outbox_status_size', ['status', 'size'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_index('ix_outbox_status_size')
