"""api tokens: a console user's tokens for Sentry's web API, with Sentry's scopes

Revision ID: 0020_api_tokens
Revises: 0019_project_quotas
Create Date: 2026-11-27 00:00:00

Only each secret's SHA-256 is kept (app/webapi/tokens.py); user_id ties a token to the console_user
row it was made for, so a user removed (and one added again under the same name) has no working token.
"""
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

# revision identifiers, used by Alembic.
revision: str = '0020_api_tokens'
down_revision: str | Sequence[str] | None = '0019_project_quotas'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table('api_token',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_name', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=True),
    sa.Column('scopes', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
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
    op.create_index('ix_api_token_user_name', 'api_token', ['user_name'], unique=False)


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_index('ix_api_token_user_name', table_name='api_token')
    op.drop_table('api_token')
