"""cron monitors: inbox_monitor (a job that checks in, its schedule and state) and inbox_checkin

Revision ID: 0026_cron_monitors
Revises: 0025_feedback_url_release
Create Date: 2026-11-29 07:30:00

sentry-sdk's `check_in` items were counted as other items and dropped until this revision: there is
nothing older to fill the tables with. The downgrade drops both.
"""
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

# revision identifiers, used by Alembic.
revision: str = '0026_cron_monitors'
down_revision: str | Sequence[str] | None = '0025_feedback_url_release'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TEXT = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        'inbox_monitor',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('project_id', sa.Integer(), nullable=False),
        sa.Column('slug', TEXT(), nullable=False),
        sa.Column('name', TEXT(), nullable=False),
        sa.Column('schedule_type', TEXT(), nullable=False),
        sa.Column('schedule_value', TEXT(), nullable=False),
        sa.Column('schedule_unit', TEXT(), nullable=False),
        sa.Column('checkin_margin_min', sa.Integer(), nullable=False),
        sa.Column('max_runtime_min', sa.Integer(), nullable=False),
        sa.Column('timezone', TEXT(), nullable=False),
        sa.Column('state', TEXT(), nullable=False),
        sa.Column('next_expected_at', sa.Float(), nullable=True),
        sa.Column('last_checkin_at', sa.Float(), nullable=True),
        sa.Column('last_state_change_at', sa.Float(), nullable=True),
        sa.Column('created_at', sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(['project_id'], ['inbox_project.id'], ),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('inbox_monitor', schema=None) as batch_op:
        batch_op.create_index('ix_inbox_monitor_next_expected', ['next_expected_at'], unique=False)
        batch_op.create_index('ux_inbox_monitor_project_slug', ['project_id', 'slug'], unique=True)
    op.create_table(
        'inbox_checkin',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('monitor_id', sa.Integer(), nullable=False),
        sa.Column('check_in_id', TEXT(), nullable=False),
        sa.Column('status', TEXT(), nullable=False),
        sa.Column('duration', sa.Float(), nullable=True),
        sa.Column('received_at', sa.Float(), nullable=False),
        sa.Column('started_at', sa.Float(), nullable=False),
        sa.Column('environment', TEXT(), nullable=False),
        sa.Column('release', TEXT(), nullable=False),
        sa.Column('trace_id', TEXT(), nullable=False),
        sa.ForeignKeyConstraint(['monitor_id'], ['inbox_monitor.id'], ),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('inbox_checkin', schema=None) as batch_op:
        batch_op.create_index('ix_inbox_checkin_monitor_check_in', ['monitor_id', 'check_in_id'], unique=False)
        batch_op.create_index('ix_inbox_checkin_monitor_id', ['monitor_id', 'id'], unique=False)
        batch_op.create_index('ix_inbox_checkin_status_started', ['status', 'started_at'], unique=False)


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_table('inbox_checkin')
    op.drop_table('inbox_monitor')
