"""release health: inbox_session (single sessions by sid, aggregates' groups by minute and user)

Revision ID: 0027_release_sessions
Revises: 0026_cron_monitors
Create Date: 2026-11-29 09:20:00

Before this revision sessions were only counted by release, environment and status in inbox_count,
without their ids: single sessions cannot be told apart from their updates there, so nothing older
fills this table. The downgrade drops it.
"""
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

# revision identifiers, used by Alembic.
revision: str = '0027_release_sessions'
down_revision: str | Sequence[str] | None = '0026_cron_monitors'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TEXT = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        'inbox_session',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('project_id', sa.Integer(), nullable=False),
        sa.Column('release', TEXT(), nullable=False),
        sa.Column('environment', TEXT(), nullable=False),
        sa.Column('key', TEXT(), nullable=False),
        sa.Column('did', TEXT(), nullable=False),
        sa.Column('started', sa.Float(), nullable=False),
        sa.Column('updated_at', sa.Float(), nullable=False),
        sa.Column('sessions', sa.Integer(), nullable=False),
        sa.Column('errored', sa.Integer(), nullable=False),
        sa.Column('abnormal', sa.Integer(), nullable=False),
        sa.Column('crashed', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['project_id'], ['inbox_project.id'], ),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('inbox_session', schema=None) as batch_op:
        batch_op.create_index('ix_inbox_session_project_started', ['project_id', 'started'], unique=False)
        batch_op.create_index('ix_inbox_session_release_started', ['project_id', 'release', 'started'], unique=False)
        batch_op.create_index('ux_inbox_session_key', ['project_id', 'release', 'environment', 'key'], unique=True)


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_table('inbox_session')
