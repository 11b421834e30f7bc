"""user feedback's page URL and release, and an index for the /feedback page's list per project

Revision ID: 0025_feedback_url_release
Revises: 0024_tag_queue_per_pair
Create Date: 2026-11-29 09:00:00

Each piece of feedback keeps the page it was sent from (the widget's `contexts.feedback.url`, else
the item's `request.url`) and the release the item names. Feedback stored before this revision keeps
"" for both (an older row holds no more of the item); the downgrade drops them.
"""
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

# revision identifiers, used by Alembic.
revision: str = '0025_feedback_url_release'
down_revision: str | Sequence[str] | None = '0024_tag_queue_per_pair'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TEXT = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    """Upgrade schema."""
    with op.batch_alter_table('inbox_feedback', schema=None) as batch_op:
        batch_op.add_column(sa.Column('url', TEXT(), nullable=False, server_default=''))
        batch_op.add_column(sa.Column('release', TEXT(), nullable=False, server_default=''))
        batch_op.create_index('ix_inbox_feedback_project_id', ['project_id', 'id'], unique=False)


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table('inbox_feedback', schema=None) as batch_op:
        batch_op.drop_index('ix_inbox_feedback_project_id')
        batch_op.drop_column('release')
        batch_op.drop_column('url')
