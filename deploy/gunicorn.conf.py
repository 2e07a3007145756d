"""gunicorn settings for the web processes: ``gunicorn --config deploy/gunicorn.conf.py 'service:create_app()'``.

Every value can be changed from the environment without editing this file (the variables below, all
optional). The service's own settings are the ``SMALLWORLD_*`` variables (README, "Configuration").

- ``GUNICORN_BIND`` (``0.0.0.0:8000``): address and port.
- ``WEB_CONCURRENCY`` (2 × CPUs + 1, at most 8): worker processes on this host.
- ``GUNICORN_THREADS`` (4): threads per worker process. A request mostly waits for PostgreSQL, so a few
  threads per process serve more players with less memory; each thread uses at most one database
  connection, within SQLAlchemy's pool of 5 (+10 overflow) per process.
- ``GUNICORN_TIMEOUT`` (30): seconds before a stuck worker is killed and replaced.
- ``GUNICORN_LOG_LEVEL`` (``info``).

Access log lines never carry a signed link: the token of every secret link kind (``/play/…``, ``/sign-in/…``,
``/calendar/…``: ``service.domain.links.KINDS``) is replaced by ``…`` (a log is read by more people than the
players), and the ``Authorization`` header is not logged (``service.web.access_log``).
"""

from __future__ import annotations

import multiprocessing
import os

from service.infra.logfmt import gunicorn_logconfig
from service.web.access_log import ACCESS_LOG_FORMAT, RedactingLogger

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", min(multiprocessing.cpu_count() * 2 + 1, 8)))
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", 4))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", 30))
graceful_timeout = 30
keepalive = 5

# Each worker builds its own app, so no database connection is ever shared across a fork.
preload_app = False
# Replace each worker after a while, a guard against slow leaks; the jitter keeps them from all restarting
# at once. A new worker builds its app, about 1 s of CPU (bench/README.md, "A web worker's start"): spread
# over 2,000 requests that was 0.46 ms a request, a tenth of a step's own CPU at full load; over 20,000 it
# is 0.05 ms, and a worker still lives about 3.5 minutes at full load (about 100 requests a second each).
max_requests = 20000
max_requests_jitter = 2000

# Containers: the workers' heartbeat files on a RAM disk, not on the container's overlay filesystem.
if os.path.isdir("/dev/shm"):
    worker_tmp_dir = "/dev/shm"

proc_name = "smallworld-web"
# gunicorn's runtime control socket (gunicornc) is not used; off, so several masters on one host never share it.
control_socket_disable = True
accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")
access_log_format = ACCESS_LOG_FORMAT
# gunicorn's own lines, its access log and the app's: one line format with the workers and beat (time in UTC,
# level, web[pid], logger, message, game), repeated warnings collapsed (service/infra/logfmt.py).
logconfig_dict = gunicorn_logconfig("web")

# Signed links are cut out of every line (service.web.access_log, from the list of link kinds).
logger_class = RedactingLogger
