"""``smallworld demo`` plays a whole game through the real embedded stack and checks its invariants."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.processes
def test_a_short_demo_finishes_with_every_invariant_held(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SMALLWORLD_")}
    env["TMPDIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "service", "demo", "--players", "2", "--turn-length", "3s", "--seed", "2"],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Game over in" in done.stdout
    assert "Bot 1 ignored its turns 2, 5, 8" in done.stdout
    assert "3 auto-passes followed" in done.stdout
    assert "Final table" in done.stdout
