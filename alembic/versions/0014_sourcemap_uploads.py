"""source maps uploaded with sentry-cli: upload tokens, chunks, and uploads as builds of a project

Revision ID: 0014_sourcemap_uploads
Revises: 0013_alerts
Create Date: 2026-11-24 16:00:00

"""
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

# revision identifiers, used by Alembic.
revision: str = '0014_sourcemap_uploads'
down_revision: str | Sequence[str] | None = '0013_alerts'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table('upload_token',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('label', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('prefix', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('token_sha256', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('created_at', sa.Float(), nullable=False),
    sa.Column('created_by', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('last_used_at', sa.Float(), nullable=True),
    sa.Column('revoked_at', sa.Float(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('token_sha256')
    )
    op.create_table('upload_chunk',
    sa.Column('project_id', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('sha1', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('size', sa.Integer(), nullable=False),
    sa.Column('data', sa.LargeBinary(), nullable=False),
    sa.Column('created_at', sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint('project_id', 'sha1')
    )
    with op.batch_alter_table('sourcemap_build', schema=None) as batch_op:
        batch_op.add_column(sa.Column('project_id', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('bytes', sa.Integer(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('token_id', sa.Integer(), nullable=True))
        batch_op.create_index('ix_sourcemap_build_project', ['project_id'], unique=False)


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table('sourcemap_build', schema=None) as batch_op:
        batch_op.drop_index('ix_sourcemap_build_project')
        batch_op.drop_column('token_id')
        batch_op.drop_column('bytes')
        batch_op.drop_column('project_id')
    op.drop_table('upload_chunk')
    op.drop_table('upload_token')
