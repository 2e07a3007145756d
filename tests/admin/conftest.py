"""Admin acts run against the same apps as the JSON API tests (SQLite, and PostgreSQL with Redis)."""

from tests.api.conftest import api, api_app, outbox  # noqa: F401  (fixtures)
