"""project quotas: each project's events a minute and an hour, and the counts of their windows

Revision ID: 0019_project_quotas
Revises: 0018_project_settings
Create Date: 2026-11-26 22:00:00

The quotas are a third JSON part of inbox_project_settings ("{}": no limit, app/projects/settings_store.py);
inbox_quota_count holds what every worker counted in each window (app/ingest/quotas.py).
"""
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

# revision identifiers, used by Alembic.
revision: str = '0019_project_quotas'
down_revision: str | Sequence[str] | None = '0018_project_settings'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    with op.batch_alter_table('inbox_project_settings') as batch:
        batch.add_column(sa.Column('quotas', sqlmodel.sql.sqltypes.AutoString(), nullable=False, server_default='{}'))
    op.create_table('inbox_quota_count',
    sa.Column('project_id', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('seconds', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('slot', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('count', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('project_id', 'seconds', 'slot')
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_table('inbox_quota_count')
    with op.batch_alter_table('inbox_project_settings') as batch:
        batch.drop_column('quotas')
