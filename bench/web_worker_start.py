"""What a new web worker costs, spread over the requests it serves before gunicorn replaces it.

    python bench/web_worker_start.py [--runs 3]

Starts gunicorn with deploy/gunicorn.conf.py and one worker on the embedded default (SQLite, in a fresh
instance folder), waits for ``/health`` to answer, and reads the worker's CPU time (user + system): its
start, with the app built, and that one request. Then prints that CPU spread over the requests a worker
serves before gunicorn replaces it (``max_requests``, less half its jitter on average), next to what it was
with the 2,000 requests of the file before 2026-11-28: the share of each request that goes to starting
workers. A step's own CPU is in ``step_profile.py`` and ``api_load.py``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.deploy.stack import wait_until  # noqa: E402
from tests.deploy.test_compose import gunicorn_settings  # noqa: E402
from tests.processes import free_port, service_environment, stop  # noqa: E402


def worker_start_cpu() -> float:
    """Seconds of CPU a new gunicorn worker spends until it has answered ``/health`` once."""
    with tempfile.TemporaryDirectory(prefix="smallworld-bench-") as folder:
        port = free_port()
        env = service_environment(
            Path(folder), WEB_CONCURRENCY="1", GUNICORN_BIND=f"127.0.0.1:{port}", GUNICORN_LOG_LEVEL="warning"
        )
        subprocess.run([sys.executable, "-m", "service", "db", "upgrade"], env=env, check=True, capture_output=True)
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "--config", "deploy/gunicorn.conf.py", "service:create_app()"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_until(lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1), 30, "/health")
            (worker,) = psutil.Process(server.pid).children()
            times = worker.cpu_times()
            return times.user + times.system
        finally:
            stop(server)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    config, _ = gunicorn_settings()
    lives = {
        "deploy/gunicorn.conf.py": config.max_requests + config.max_requests_jitter / 2,
        "before 2026-11-28 (2,000 + 200)": 2000 + 200 / 2,
    }
    print(f"# python bench/web_worker_start.py --runs {args.runs}; load average {os.getloadavg()[0]:.1f}")
    starts = [worker_start_cpu() for _ in range(args.runs)]
    start = statistics.median(starts)
    runs = ", ".join(f"{s * 1000:.0f}" for s in starts)
    print(f"a worker's start: {start * 1000:.0f} ms of CPU (median; runs: {runs})")
    for name, life in lives.items():
        print(f"  {name}: {life:,.0f} requests a worker on average, {start / life * 1000:.3f} ms of CPU a request")


if __name__ == "__main__":
    main()
