"""Fixtures of the page tests: a live server for the browser, Debian's Chromium driven by Playwright.

The browser is ``/usr/bin/chromium`` (``apt-get install chromium``; ``.ci/run`` installs it), never a
browser downloaded by ``playwright install``. Without it the browser tests are skipped, or fail when
``SMALLWORLD_REQUIRE_SERVICES=1`` (CI).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SERVICE_SETTINGS, service_unavailable

from .live import LiveServer, live_server

CHROMIUM = os.environ.get("SMALLWORLD_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

#: Screenshots taken by the tests (ignored by git).
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """pytest-playwright's launch options, with Debian's Chromium."""
    if not os.access(CHROMIUM, os.X_OK):
        service_unavailable(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The app served over HTTP on a free port, with its own instance folder (one per test module)."""
    with pytest.MonkeyPatch.context() as env:
        for name in SERVICE_SETTINGS:  # the developer's own settings stay out (as in tests/conftest.py)
            env.delenv(name, raising=False)
        with live_server(tmp_path_factory.mktemp("live-instance")) as server:
            yield server


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
