"""Admin acts run against the same apps as the JSON API tests (SQLite, and PostgreSQL with Redis)."""

from tests.admin.browsing import admin_app  # noqa: F401, E402  (fixture)
from tests.api.conftest import api, api_app, outbox  # noqa: F401  (fixtures)
