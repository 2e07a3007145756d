"""``make lint`` in the test suite, so CI holds the code to it: ruff's checks and formatting over the whole
tree, and mypy over the packages (``pyproject.toml`` configures them)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    "command",
    [["ruff", "check", "."], ["ruff", "format", "--check", "."], ["mypy", "rules", "service", "worker", "emails"]],
    ids=["ruff", "ruff-format", "mypy"],
)
def test_the_code_passes_the_linters(command: list[str]) -> None:
    # mypy keeps its incremental cache where ``make lint`` does (``.mypy_cache`` in the checkout): it checks
    # again every module whose source, options or dependencies changed, and with an empty cache a run costs
    # about 17 s of CPU against under one. ruff is quick from nothing.
    extra = [] if command[0] == "mypy" else ["--no-cache"]
    result = subprocess.run(
        [sys.executable, "-m", *command, *extra], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
