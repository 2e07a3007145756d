"""``smallworld demo`` plays a whole game through the real embedded stack and checks its invariants."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import pytest

from service.cli.demo_game import EmbeddedStack, free_port


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


@pytest.mark.processes
def test_a_demo_against_a_running_service_reads_its_mail_over_smtp(tmp_path, monkeypatch) -> None:
    """``--url`` with ``--smtp``: the service runs on its own (``smallworld serve``, the ``smtp`` backend
    pointed at the port where the demo then receives), and the demo plays it through its links."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the service's instance folder
    smtp_port = free_port()
    with EmbeddedStack(sweep_seconds=1, smtp=("127.0.0.1", smtp_port)) as service:
        done = subprocess.run(
            [
                *(sys.executable, "-m", "service", "demo", "--players", "2", "--turn-length", "3s", "--seed", "3"),
                *("--url", service.url, "--smtp", f"127.0.0.1:{smtp_port}"),
            ],
            env={k: v for k, v in os.environ.items() if not k.startswith("SMALLWORLD_")},
            capture_output=True,
            text=True,
            timeout=240,
        )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"Receiving the mail over SMTP on 127.0.0.1:{smtp_port}" in done.stdout
    assert "Service started" not in done.stdout, "it played the running service, not one of its own"
    assert "Bot 1 ignored its turns 2, 5, 8" in done.stdout and "3 auto-passes followed" in done.stdout
    assert "Final table" in done.stdout


def test_a_demo_against_a_running_service_must_be_told_where_its_mail_goes() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "service", "demo", "--url", "http://127.0.0.1:9"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "give either --mail-dir" in done.stderr and "--smtp HOST:PORT" in done.stderr
    assert "Traceback" not in done.stderr
