"""the embedded inbox's own project gets a random key instead of the public "lookout"

Until now the local DSN of every install was http://lookout@localhost/1, a key anyone could read in
the source. Project 1 keeps its events and issues and gets a random key; the local rows waiting in
the outbox are moved to the new DSN so that the inbox still reads them (the feeder takes the project
from the row's DSN). Left alone when LOOKOUT_LOCAL_DSN is set: the operator chose that DSN, key
included. The pages carry the new key once the app is built again (every `reflex run` does).

Revision ID: 0011_random_local_key
Revises: 0010_worker_lease
Create Date: 2026-11-24 10:00:00

"""
import os
import secrets
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = '0011_random_local_key'
down_revision: str | Sequence[str] | None = '0010_worker_lease'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_KEY = "lookout"
OLD_DSN = "http://lookout@localhost/1"


def upgrade() -> None:
    """Upgrade data."""
    if os.environ.get("LOOKOUT_LOCAL_DSN", "").strip():
        return
    connection = op.get_bind()
    key = secrets.token_hex(16)
    changed = connection.execute(
        sa.text("UPDATE inbox_project SET public_key = :key WHERE id = 1 AND public_key = :old"),
        {"key": key, "old": OLD_KEY},
    ).rowcount
    if changed:
        connection.execute(
            sa.text("UPDATE outbox SET dsn = :new WHERE dsn = :old AND status = 'local'"),
            {"new": f"http://{key}@localhost/1", "old": OLD_DSN},
        )


def downgrade() -> None:
    """Nothing to undo: the random key stays (the fixed one was the problem)."""
