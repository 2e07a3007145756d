"""Database tables (SQLModel). Alembic migrations in ``service/migrations`` create them."""

from datetime import datetime

from sqlmodel import Field, SQLModel

from service.db import UTCDateTime


class ServiceStatus(SQLModel, table=True):
    """When something the whole service does last happened, by name.

    The deadline sweep records itself here (``service.status.LAST_DEADLINE_SWEEP``), so
    ``/health`` can show it and the sweep can tell how long the service was down.
    """

    __tablename__ = "service_status"

    name: str = Field(primary_key=True, max_length=64)
    at: datetime = Field(sa_type=UTCDateTime)
