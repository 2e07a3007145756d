"""Run the real ``smallworld`` console script in child processes, and never leave one behind."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import psutil

#: The console script installed beside the Python running the tests.
SMALLWORLD = str(Path(sys.executable).parent / "smallworld")


def service_environment(instance_path: Path, **settings: str) -> dict[str, str]:
    """This environment without any SMALLWORLD_* setting, plus an instance folder and ``settings``."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("SMALLWORLD_")}
    env["SMALLWORLD_INSTANCE_PATH"] = str(instance_path)
    env.update(settings)
    return env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start(args: list[str], env: Mapping[str, str], log: Path) -> subprocess.Popen[bytes]:
    """Start ``smallworld args`` as the leader of a new session, output to ``log``."""
    with log.open("wb") as output:
        return subprocess.Popen(
            [SMALLWORLD, *args],
            env=dict(env),
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def family(process: subprocess.Popen[bytes]) -> list[psutil.Process]:
    """The descendants of ``process``, which must still be running (not yet reaped)."""
    return psutil.Process(process.pid).children(recursive=True)


def stop(process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    """SIGTERM ``process``; SIGKILL it and whatever it started if they are not gone in time."""
    descendants = family(process) if process.poll() is None else []
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    # psutil refuses to signal a pid that was reused by another process since it was listed.
    for survivor in psutil.wait_procs(descendants, timeout=5)[1]:
        survivor.kill()


@contextmanager
def running(args: list[str], env: Mapping[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``smallworld args`` for the duration of the block, then stop it."""
    process = start(args, env, log)
    try:
        yield process
    finally:
        stop(process)
