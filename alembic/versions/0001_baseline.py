"""baseline: empty schema, migrations machinery

Revision ID: 0001_baseline
Revises:
Create Date: 2026-11-22 16:48:11.744244

"""
from collections.abc import Sequence

# revision identifiers, used by Alembic.
revision: str = '0001_baseline'
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    pass


def downgrade() -> None:
    """Downgrade schema."""
    pass
