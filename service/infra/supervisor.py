"""Run a few long-lived child processes together and stop them together.

Used by ``smallworld serve``. Each child gets its own process group, so a Ctrl-C in the
terminal reaches only the supervisor, which then stops the children in order: SIGTERM to each
child (gunicorn and Celery stop their own workers cleanly on it), and after a grace period
SIGKILL to each child's whole process group, which also takes any grandchild left behind.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import FrameType

#: Seconds the children get to stop after SIGTERM before their process groups are killed.
STOP_GRACE = 20.0


@dataclass(frozen=True)
class ChildProcess:
    """A command to run under supervision, with a name for messages."""

    name: str
    argv: Sequence[str]


def supervise(children: Sequence[ChildProcess], env: Mapping[str, str], stop_grace: float = STOP_GRACE) -> int:
    """Start ``children`` and wait until SIGINT/SIGTERM arrives or one of them exits; stop all.

    Returns 0 when stopped by a signal, 1 when a child exited on its own (the others are then
    stopped too: half a service is worse than none). A second signal while stopping skips the
    grace period.
    """
    signals: list[int] = []

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        signals.append(signum)

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    running: list[tuple[ChildProcess, subprocess.Popen[bytes]]] = []
    try:
        for child in children:
            process = subprocess.Popen(child.argv, env=dict(env), start_new_session=True)
            running.append((child, process))
        while not signals:
            for child, process in running:
                status = _exit_status(process)
                if status is not None:
                    print(f"{child.name} exited (status {status}); stopping the others.", file=sys.stderr)
                    return 1
            time.sleep(0.2)
        return 0
    finally:
        _stop(running, stop_grace, signals)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _stop(
    running: Sequence[tuple[ChildProcess, subprocess.Popen[bytes]]],
    stop_grace: float,
    signals: list[int],
) -> None:
    signals_before = len(signals)
    for _child, process in running:
        if _exit_status(process) is None:
            process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + stop_grace
    while time.monotonic() < deadline and len(signals) <= signals_before:
        if all(_exit_status(process) is not None for _child, process in running):
            break
        time.sleep(0.1)
    for _child, process in running:
        # Each child is still unreaped here (see _exit_status), so its pid, which is also its
        # process group id, cannot have been reused by an unrelated process.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _exit_status(process: subprocess.Popen[bytes]) -> int | None:
    """The exit status (or killing signal) of ``process``, ``None`` while it runs.

    Looks without reaping (``WNOWAIT``): the pid stays taken until :func:`_stop` is done with
    the process group.
    """
    result = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    return None if result is None else result.si_status
