"""console user ids never reused: AUTOINCREMENT on SQLite, and the tokens of removed users revoked

Revision ID: 0022_console_user_ids
Revises: 0021_project_dev_servers
Create Date: 2026-11-27 03:00:00

An API token names the console_user row it was made for (0020). Without AUTOINCREMENT, SQLite gave a
removed newest user's id to the next user added, so removing "max" and adding a new "max" brought the
old token back with its scopes. From here on removing a user revokes their tokens
(app/console/accounts.py) and an id is never handed out again:

- every token whose user is gone is revoked now: no console_user row with its id and name, or only
  one added after the token was made (a reused id: the token already came back to life);
- on SQLite, console_user is copied into a table with AUTOINCREMENT (rows and ids kept), and its
  counter (sqlite_sequence) starts past every id a token names, so an id removed before this
  migration is not handed out again either;
- on PostgreSQL, whose sequence never goes back, it is moved past every id a token names too (a
  database copied from SQLite by app/copy_database.py starts past the highest id copied, not past a
  removed one).

The downgrade takes AUTOINCREMENT away again; the tokens revoked stay revoked.
"""
import time
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = '0022_console_user_ids'
down_revision: str | Sequence[str] | None = '0021_project_dev_servers'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

REVOKE_ORPHANS = sa.text(
    "UPDATE api_token SET revoked_at = :now WHERE revoked_at IS NULL AND user_id IS NOT NULL AND NOT EXISTS ("
    " SELECT 1 FROM console_user WHERE console_user.id = api_token.user_id"
    " AND console_user.name = api_token.user_name AND console_user.created_at <= api_token.created_at)"
)
HIGHEST_TOKEN_USER = "(SELECT COALESCE(MAX(user_id), 0) FROM api_token)"


def upgrade() -> None:
    """Upgrade schema."""
    bind = op.get_bind()
    bind.execute(REVOKE_ORPHANS, {"now": time.time()})
    if bind.dialect.name == "sqlite":
        with op.batch_alter_table('console_user', recreate='always', table_kwargs={'sqlite_autoincrement': True}):
            pass  # copied as it is, into a table whose ids only go up
        op.execute("INSERT INTO sqlite_sequence (name, seq) SELECT 'console_user', 0 "
                   "WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'console_user')")
        op.execute(f"UPDATE sqlite_sequence SET seq = MAX(seq, {HIGHEST_TOKEN_USER}) WHERE name = 'console_user'")
    elif bind.dialect.name == "postgresql":
        # nextval: at least every id handed out (one more is skipped, which harms nothing)
        op.execute("SELECT setval(pg_get_serial_sequence('console_user', 'id'), GREATEST("
                   f"nextval(pg_get_serial_sequence('console_user', 'id')), {HIGHEST_TOKEN_USER}))")


def downgrade() -> None:
    """Downgrade schema."""
    if op.get_bind().dialect.name == "sqlite":
        with op.batch_alter_table('console_user', recreate='always', table_kwargs={'sqlite_autoincrement': False}):
            pass
