"""``smallworld demo`` plays a whole game through the real embedded stack and checks its invariants."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

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


@pytest.mark.processes
def test_a_demo_against_a_running_service_reads_its_mail_over_smtp(tmp_path) -> None:
    """``--url`` with ``--smtp``: the service runs on its own (``smallworld serve``, the ``smtp`` backend
    pointed at the port where the demo then receives), and the demo plays it through its links."""
    smtp_port, web_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SMALLWORLD_")}
    env |= {
        "TMPDIR": str(tmp_path),
        "SMALLWORLD_INSTANCE_PATH": str(tmp_path / "instance"),
        "SMALLWORLD_BASE_URL": f"http://127.0.0.1:{web_port}",
        "SMALLWORLD_SWEEP_SECONDS": "1",
        "SMALLWORLD_RATELIMIT_LINKS": "3000 per minute",
        "SMALLWORLD_MAIL_BACKEND": "smtp",
        "SMALLWORLD_SMTP_HOST": "127.0.0.1",
        "SMALLWORLD_SMTP_PORT": str(smtp_port),
    }
    log = (tmp_path / "serve.log").open("wb")
    service = subprocess.Popen(
        [sys.executable, "-m", "service", "serve", "--port", str(web_port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_for_health(f"http://127.0.0.1:{web_port}", service)
        done = subprocess.run(
            [
                *(sys.executable, "-m", "service", "demo", "--players", "2", "--turn-length", "3s", "--seed", "3"),
                *("--url", f"http://127.0.0.1:{web_port}", "--smtp", f"127.0.0.1:{smtp_port}"),
            ],
            env={k: v for k, v in env.items() if not k.startswith("SMALLWORLD_")},
            capture_output=True,
            text=True,
            timeout=240,
        )
    finally:
        service.send_signal(signal.SIGINT)
        try:
            service.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(service.pid, signal.SIGKILL)
            service.wait()
        log.close()
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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_health(url: str, process: subprocess.Popen) -> None:
    deadline = time.time() + 60
    while time.time() < deadline:
        assert process.poll() is None, "the service stopped while starting"
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise AssertionError("the service did not answer /health within 60 s")
