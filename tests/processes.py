"""Run the real ``smallworld`` console script in child processes, and never leave one behind.

The fixtures stop what they started when a test ends; a test run killed (``SIGKILL``, a CI timeout, a
closed terminal) runs no fixture's end. So every process a test run starts carries the run's mark in its
environment (``RUN_MARK``: the test process that started it, by pid and start time), and so does what it
starts in turn (gunicorn's workers, Celery's pool, a ``redis-server`` that daemonized itself). A reaper
process of the test process's own (:func:`guard_children`) waits for that process to end, however it ends,
and then kills every process carrying its mark. And each run, as it starts, kills those of runs that are
certainly over (their test process is gone), should a reaper have been killed too.
"""

from __future__ import annotations

import contextlib
import os
import signal
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


#: The environment variable naming the test process that started a process (``pid:start time``): not a
#: ``SMALLWORLD_*`` variable, which :func:`service_environment` leaves out.
RUN_MARK = "TEST_RUN_OF_SMALLWORLD"

#: The write end of the pipe the reaper reads, open for as long as this process lives (never written).
_reaper: subprocess.Popen[bytes] | None = None


def guard_children() -> None:
    """Mark this process's environment for every process it starts from now on, start its reaper, and kill the
    processes left by test runs that are over. Once per test process (``pytest_configure``)."""
    global _reaper
    if _reaper is not None:
        return
    kill_marked(_owner_gone)
    mark = _mark_of(psutil.Process())
    os.environ[RUN_MARK] = mark
    reaper_env = {name: value for name, value in os.environ.items() if name != RUN_MARK}
    # A session of its own: a signal to the test's process group (Ctrl-C, a CI runner's) leaves it be. Its stdin
    # is this process's pipe: end of file when this process ends, however.
    _reaper = subprocess.Popen(
        [sys.executable, "-I", __file__, "--reap", mark],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=reaper_env,
        start_new_session=True,
    )


def _mark_of(process: psutil.Process) -> str:
    return f"{process.pid}:{process.create_time():.2f}"


def _owner_gone(mark: str) -> bool:
    """Whether the test process named by ``mark`` is over (no process of that pid and start time)."""
    pid, _, _started = mark.partition(":")
    try:
        return _mark_of(psutil.Process(int(pid))) != mark
    except (psutil.NoSuchProcess, ValueError):
        return True


def kill_marked(condition: Callable[[str], bool]) -> list[int]:
    """``SIGKILL`` every process whose environment holds a run mark for which ``condition`` is true; their pids."""
    marked: list[psutil.Process] = []
    for process in psutil.process_iter():
        try:
            mark = process.environ().get(RUN_MARK)
        except (psutil.Error, OSError):  # gone meanwhile, or not ours to read
            continue
        if mark and process.pid != os.getpid() and condition(mark):
            marked.append(process)
    for process in marked:
        with contextlib.suppress(psutil.Error):
            process.send_signal(signal.SIGKILL)
    psutil.wait_procs(marked, timeout=5)
    return [process.pid for process in marked]


def _reap(mark: str) -> None:
    """The reaper: wait for the end of the test process (end of file on stdin), then kill what it left."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while sys.stdin.buffer.read(4096):
        pass
    kill_marked(lambda found: found == mark)


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


if __name__ == "__main__" and sys.argv[1:2] == ["--reap"]:
    _reap(sys.argv[2])
