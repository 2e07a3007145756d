"""Run the real ``smallworld`` console script in child processes, and never leave one behind."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

#: The console script installed beside the Python running the tests.
SMALLWORLD = str(Path(sys.executable).parent / "smallworld")


def service_environment(instance_path: Path, **settings: str) -> dict[str, str]:
    """This environment without any SMALLWORLD_* setting, plus an instance folder and ``settings``."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("SMALLWORLD_")}
    env["SMALLWORLD_INSTANCE_PATH"] = str(instance_path)
    # serve's listener for orders by mail: a port of its own, so services started together never collide.
    env["SMALLWORLD_INBOUND_PORT"] = str(free_port())
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


@dataclass
class OwnRedis:
    """A Redis server of the test's own, on a port of its own: stopping it disturbs no other test."""

    folder: Path
    port: int = field(default_factory=free_port)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        subprocess.run(
            [
                "redis-server", "--daemonize", "yes", "--bind", "127.0.0.1", "--port", str(self.port),
                "--save", "", "--appendonly", "no", "--dir", str(self.folder),
                "--logfile", str(self.folder / "redis.log"), "--pidfile", str(self.folder / "redis.pid"),
            ],
            check=True,
        )  # fmt: skip
        _wait(lambda: _answers(self.port), f"Redis on port {self.port}")

    def stop(self) -> None:
        # No retries: the server closing the connection is the answer (redis-py would try again for seconds).
        with contextlib.suppress(redis.RedisError):
            redis.Redis(port=self.port, retry=Retry(NoBackoff(), 0)).shutdown(nosave=True)
        _wait(lambda: not _answers(self.port), "Redis to stop")


def _answers(port: int) -> bool:
    try:
        return bool(redis.Redis(port=port, socket_connect_timeout=0.2).ping())
    except redis.RedisError:
        return False


def _wait(condition: Callable[[], bool], what: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout} s for {what}")
        time.sleep(0.05)
