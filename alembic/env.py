"""Alembic environment for Lookout.

The app (`app/db.py`) and the tests hand in an open connection through `config.attributes`;
`reflex db makemigrations` / `reflex db migrate` drive alembic with their own connection.
The plain `alembic` command falls back to the URL in rxconfig.
"""

from logging.config import fileConfig

from alembic import context
from sqlalchemy import create_engine, pool

from app.models import METADATAS

config = context.config
target_metadata = list(METADATAS)  # Lookout's models and the monitoring plugin's tables


def run_with(connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    run_with(connection)
else:
    from rxconfig import config as rx_config

    if config.config_file_name is not None:
        fileConfig(config.config_file_name, disable_existing_loggers=False)
    if rx_config.db_url is None:  # rxconfig.py always names one
        raise RuntimeError("rxconfig.py names no database (db_url)")
    with create_engine(rx_config.db_url, poolclass=pool.NullPool).connect() as conn:
        run_with(conn)
        conn.commit()
