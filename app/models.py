"""Every sqlmodel table. Alembic's autogenerate compares the migrations against this metadata."""

from sqlmodel import SQLModel

metadata = SQLModel.metadata
