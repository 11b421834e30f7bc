"""project dev servers: each project's source-map settings (the dev servers its frames may be mapped with)

Revision ID: 0021_project_dev_servers
Revises: 0020_api_tokens
Create Date: 2026-11-27 02:00:00

A fourth JSON part of inbox_project_settings ("{}": no dev server, app/projects/sourcemap_settings.py).
"""
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

# revision identifiers, used by Alembic.
revision: str = '0021_project_dev_servers'
down_revision: str | Sequence[str] | None = '0020_api_tokens'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    with op.batch_alter_table('inbox_project_settings') as batch:
        batch.add_column(sa.Column('sourcemaps', sqlmodel.sql.sqltypes.AutoString(), nullable=False, server_default='{}'))


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table('inbox_project_settings') as batch:
        batch.drop_column('sourcemaps')
