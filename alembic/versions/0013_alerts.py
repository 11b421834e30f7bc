"""alerts: rules, channels, due alerts and their deliveries

Revision ID: 0013_alerts
Revises: 0012_source_maps
Create Date: 2026-11-24 12:00:00

"""
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

# revision identifiers, used by Alembic.
revision: str = '0013_alerts'
down_revision: str | Sequence[str] | None = '0012_source_maps'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table('alert',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('dedupe_key', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('issue_id', sa.Integer(), nullable=False),
    sa.Column('rule', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('reason', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('created_at', sa.Float(), nullable=False),
    sa.Column('channel_id', sa.Integer(), nullable=True),
    sa.Column('fanned_out', sa.Boolean(), nullable=False),
    sa.Column('title', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('culprit', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('level', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('environment', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('release', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('first_seen', sa.Float(), nullable=False),
    sa.Column('last_seen', sa.Float(), nullable=False),
    sa.Column('event_count', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('dedupe_key')
    )
    with op.batch_alter_table('alert', schema=None) as batch_op:
        batch_op.create_index('ix_alert_fanned', ['fanned_out', 'id'], unique=False)
        batch_op.create_index('ix_alert_issue_rule_created', ['issue_id', 'rule', 'created_at'], unique=False)

    op.create_table('alert_channel',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=True),
    sa.Column('kind', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('target', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('secret', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('origin', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('enabled', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.Float(), nullable=False),
    sa.Column('last_delivery_at', sa.Float(), nullable=True),
    sa.Column('last_error', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('last_error_at', sa.Float(), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('alert_delivery',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('alert_id', sa.Integer(), nullable=False),
    sa.Column('channel_id', sa.Integer(), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('next_attempt_at', sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('alert_delivery', schema=None) as batch_op:
        batch_op.create_index('ix_alert_delivery_channel_due', ['channel_id', 'next_attempt_at'], unique=False)

    op.create_table('alert_rules',
    sa.Column('project_id', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('new_issue', sa.Boolean(), nullable=False),
    sa.Column('regression', sa.Boolean(), nullable=False),
    sa.Column('spike', sa.Boolean(), nullable=False),
    sa.Column('spike_events', sa.Integer(), nullable=False),
    sa.Column('spike_minutes', sa.Integer(), nullable=False),
    sa.Column('quiet_minutes', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('project_id')
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_table('alert_rules')
    with op.batch_alter_table('alert_delivery', schema=None) as batch_op:
        batch_op.drop_index('ix_alert_delivery_channel_due')

    op.drop_table('alert_delivery')
    op.drop_table('alert_channel')
    with op.batch_alter_table('alert', schema=None) as batch_op:
        batch_op.drop_index('ix_alert_issue_rule_created')
        batch_op.drop_index('ix_alert_fanned')

    op.drop_table('alert')
