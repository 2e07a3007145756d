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

Access log lines never carry a signed link: the token in ``/play/…``, ``/invite/…``, ``/admin/…`` and
``/unsubscribe/…`` is replaced by ``…`` (a log is read by more people than the players), and the
``Authorization`` header is not logged.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import re
from typing import Any

from gunicorn.glogging import Logger

from service.infra.logfmt import gunicorn_logconfig

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
access_log_format = '%(h)s "%(m)s %(U)s%(q)s %(H)s" %(s)s %(B)s %(M)sms "%(a)s"'
# gunicorn's own lines, its access log and the app's: one line format with the workers and beat (time in UTC,
# level, web[pid], logger, message, game), repeated warnings collapsed (service/infra/logfmt.py).
logconfig_dict = gunicorn_logconfig("web")

#: A signed link in a path: the purpose, then the token (itsdangerous: payload.timestamp.signature).
SIGNED_PATH = re.compile(r"^(/(?:play|invite|admin/login|admin|unsubscribe))/[\w-]+\.[\w-]+\.[\w-]+(?=$|[/?\s])")


@functools.lru_cache(maxsize=4)
def names_header_or_environ(access_log_format: str) -> bool:
    """Whether ``access_log_format`` names a request or response header or an environ value.

    >>> names_header_or_environ(access_log_format), names_header_or_environ('%(h)s "%({x-request-id}i)s"')
    (False, True)
    """
    return re.search(r"%\(\{[^}]*\}[ioe]\)", access_log_format) is not None


def redacted(path: str) -> str:
    """``path`` without its signed token, if it has one.

    >>> redacted("/play/eyJnIjoxfQ.abc.d-_f")
    '/play/…'
    >>> redacted("/admin/login/eyJ.x.y")
    '/admin/login/…'
    >>> redacted("/api/games/3")
    '/api/games/3'
    >>> redacted("/admin/games/3")
    '/admin/games/3'
    """
    return SIGNED_PATH.sub(r"\1/…", path)


#: What gunicorn's atoms other than the headers' and the environ's (``{…}i``, ``{…}o``, ``{…}e``) read of the
#: environ.
PLAIN_ATOMS_ENVIRON = (
    "REMOTE_ADDR",
    "REQUEST_METHOD",
    "RAW_URI",
    "SERVER_PROTOCOL",
    "PATH_INFO",
    "QUERY_STRING",
    "HTTP_REFERER",
    "HTTP_USER_AGENT",
    "HTTP_AUTHORIZATION",  # %(u)s: the user of Basic authentication
)


class _Answer:
    """A response as gunicorn's atoms read it, without its headers."""

    headers = ()

    def __init__(self, resp: Any) -> None:
        self.status = resp.status
        self.sent = getattr(resp, "sent", None)


class RedactingLogger(Logger):
    """gunicorn's logger, with signed tokens cut out of the request line and path it logs.

    gunicorn makes an atom of every request header, response header and environ value of every request
    (some fifty), whatever the format uses; unless the format names one of those (``%({name}i)s`` …), only
    the others are made: this format's line is the same, at half the cost (30 µs a request).
    """

    def atoms(self, resp: Any, req: Any, environ: Any, request_time: Any) -> dict[str, Any]:
        if not names_header_or_environ(self.cfg.access_log_format):
            resp, req = _Answer(resp), ()
            environ = {name: environ[name] for name in PLAIN_ATOMS_ENVIRON if name in environ}
        atoms: dict[str, Any] = super().atoms(resp, req, environ, request_time)
        if isinstance(atoms.get("U"), str):
            atoms["U"] = redacted(atoms["U"])
        if isinstance(atoms.get("r"), str):  # "GET /play/<token> HTTP/1.1"
            method, _, rest = atoms["r"].partition(" ")
            atoms["r"] = f"{method} {redacted(rest)}"
        return atoms


logger_class = RedactingLogger
