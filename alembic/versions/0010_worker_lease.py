"""worker leases: the forwarder and the inbox feeder run in one worker at a time

Revision ID: 0010_worker_lease
Revises: 0009_inbox_events_in_envelopes
Create Date: 2026-11-23 00:50:00

"""
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

# revision identifiers, used by Alembic.
revision: str = '0010_worker_lease'
down_revision: str | Sequence[str] | None = '0009_inbox_events_in_envelopes'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table('worker_lease',
    sa.Column('name', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('holder', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('until', sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint('name')
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_table('worker_lease')
