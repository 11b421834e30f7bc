"""source maps of the app's own builds, kept for symbolication

Revision ID: 0012_source_maps
Revises: 0011_random_local_key
Create Date: 2026-11-24 12:00:00

"""
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

# revision identifiers, used by Alembic.
revision: str = '0012_source_maps'
down_revision: str | Sequence[str] | None = '0011_random_local_key'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table('sourcemap_build',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('build_id', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('created_at', sa.Float(), nullable=False),
    sa.Column('pages', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('build_id')
    )
    op.create_table('sourcemap_file',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('build', sa.Integer(), nullable=False),
    sa.Column('debug_id', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('asset_path', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('sha256', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('source', sa.LargeBinary(), nullable=False),
    sa.Column('sourcemap', sa.LargeBinary(), nullable=False),
    sa.ForeignKeyConstraint(['build'], ['sourcemap_build.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_sourcemap_file_debug_id', 'sourcemap_file', ['debug_id'], unique=False)
    op.create_index('ix_sourcemap_file_asset_path', 'sourcemap_file', ['asset_path'], unique=False)
    op.create_index('ix_sourcemap_file_build', 'sourcemap_file', ['build'], unique=False)


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_index('ix_sourcemap_file_build', table_name='sourcemap_file')
    op.drop_index('ix_sourcemap_file_asset_path', table_name='sourcemap_file')
    op.drop_index('ix_sourcemap_file_debug_id', table_name='sourcemap_file')
    op.drop_table('sourcemap_file')
    op.drop_table('sourcemap_build')
