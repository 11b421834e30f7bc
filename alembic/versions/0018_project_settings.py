"""project settings: each project's inbound filters and PII scrubbing options

Revision ID: 0018_project_settings
Revises: 0017_trace_log_filters
Create Date: 2026-11-27 22:00:00

A project without a row has the defaults (app/projects/settings_store.py); what the filters drop is
counted in inbox_count (kind "filtered"), which needs no change.
"""
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

# revision identifiers, used by Alembic.
revision: str = '0018_project_settings'
down_revision: str | Sequence[str] | None = '0017_trace_log_filters'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TEXT = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table('inbox_project_settings',
    sa.Column('project_id', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('filters', TEXT(), nullable=False),
    sa.Column('scrubbing', TEXT(), nullable=False),
    sa.Column('updated_at', sa.Float(), nullable=False),
    sa.Column('updated_by', TEXT(), nullable=False),
    sa.ForeignKeyConstraint(['project_id'], ['inbox_project.id'], ),
    sa.PrimaryKeyConstraint('project_id')
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_table('inbox_project_settings')
