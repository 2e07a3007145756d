"""Alembic environment: migrations run on the engine ``service.infra.db.alembic_config`` hands over.

Run them with ``smallworld db upgrade``; write a new one with ``smallworld db revision -m ...``.
"""

from typing import Any, Literal

from alembic import context
from alembic.autogenerate.api import AutogenContext
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Column, DateTime, String
from sqlalchemy.types import TypeEngine
from sqlmodel import SQLModel

from service.infra.db import EnumString, UTCDateTime

# The tables are on SQLModel's metadata once the domain's models are imported, which every way in does first
# (``smallworld db`` builds the app, and the app imports the domain). The infrastructure never imports the
# domain itself (the import contracts in pyproject.toml).
target_metadata = SQLModel.metadata


def render_item(type_: str, obj: Any, autogen_context: AutogenContext) -> str | Literal[False]:
    # Migrations name the plain column type, so they never depend on the Python class that
    # converts values (which may move or change).
    if type_ == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    if type_ == "type" and isinstance(obj, EnumString):
        return f"sa.String(length={obj.length})"
    return False


def compare_type(
    context: MigrationContext,
    inspected_column: Column[Any],
    metadata_column: Column[Any],
    inspected_type: TypeEngine[Any],
    metadata_type: TypeEngine[Any],
) -> bool | None:
    if isinstance(metadata_type, UTCDateTime):
        return not isinstance(inspected_type, DateTime)
    if isinstance(metadata_type, EnumString):
        return not (isinstance(inspected_type, String) and inspected_type.length == metadata_type.length)
    return None


engine = context.config.attributes["engine"]
with engine.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,  # SQLite alters tables by copying them
        render_item=render_item,
        compare_type=compare_type,
    )
    with context.begin_transaction():
        context.run_migrations()
    connection.commit()
