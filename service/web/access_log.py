"""Access logs without signed links (ARCHITECTURE §7): every web server of the service logs requests through this.

A log is read by more people than the players (operators, a log service, a support ticket), so no line keeps
the token of a secret link kind: :func:`service.domain.links.redacted_path` cuts it out, from the list of
link kinds (``service.domain.links.KINDS``), so a new kind cannot be forgotten here. Three servers log
requests:

- gunicorn in production (``deploy/gunicorn.conf.py``) and in ``smallworld serve``
  (``service.web.gunicorn_serve``): both use :class:`RedactingLogger` and :data:`ACCESS_LOG_FORMAT`;
- werkzeug's development server (``smallworld run``): :class:`RedactingFilter` on its logger, put there by
  :func:`init_app`.

The ``Authorization`` header (the JSON API's bearer token, a turn token) is never logged.
"""

from __future__ import annotations

import functools
import logging
import re
from typing import TYPE_CHECKING, Any

from gunicorn.glogging import Logger

from service.domain.links import redacted_path

if TYPE_CHECKING:
    from flask import Flask

#: The access log's line: client, request line, status, bytes, milliseconds, user agent. No referrer (a page's
#: address may be a signed link; ``Referrer-Policy: no-referrer`` makes browsers send none anyway).
ACCESS_LOG_FORMAT = '%(h)s "%(m)s %(U)s%(q)s %(H)s" %(s)s %(B)s %(M)sms "%(a)s"'

#: A path in free text: at the start, or after a space, a quote or a bracket, with or without its scheme and
#: host (werkzeug's line, a referrer).
_PATH_IN_TEXT = re.compile(r"""(?:(?<=[\s"'(<\[])|^)(?:[a-zA-Z][\w+.-]*://[^/\s"'<>]*)?(/[^\s"'<>]*)""")


def redacted_text(text: str) -> str:
    """``text`` with every path in it redacted (:func:`redacted_path`).

    >>> redacted_text('127.0.0.1 - - [7/Dec/2026] "GET /sign-in/eyJpIjoxfQ.a.b HTTP/1.1" 200 -')
    '127.0.0.1 - - [7/Dec/2026] "GET /sign-in/… HTTP/1.1" 200 -'
    >>> redacted_text("https://example.org/choices/eyJwIjoxfQ.sig")
    'https://example.org/choices/…'
    """
    return _PATH_IN_TEXT.sub(lambda found: found[0][: found.start(1) - found.start(0)] + redacted_path(found[1]), text)


@functools.lru_cache(maxsize=4)
def names_header_or_environ(access_log_format: str) -> bool:
    """Whether ``access_log_format`` names a request or response header or an environ value.

    >>> names_header_or_environ(ACCESS_LOG_FORMAT), names_header_or_environ('%(h)s "%({x-request-id}i)s"')
    (False, True)
    """
    return re.search(r"%\(\{[^}]*\}[ioe]\)", access_log_format) is not None


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
    """gunicorn's logger, with signed tokens cut out of the request line, the path and the referrer it logs.

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
            atoms["U"] = redacted_path(atoms["U"])
        if isinstance(atoms.get("r"), str):  # "GET /play/<token> HTTP/1.1"
            method, _, rest = atoms["r"].partition(" ")
            atoms["r"] = f"{method} {redacted_path(rest)}"
        if isinstance(atoms.get("f"), str):  # the referrer: a whole URL
            atoms["f"] = redacted_text(atoms["f"])
        return atoms


class RedactingFilter(logging.Filter):
    """A logging filter that cuts signed tokens out of a record's message (werkzeug's request lines)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cut = redacted_text(message)
        if cut != message:
            record.msg, record.args = cut, None
        return True


def init_app(app: Flask) -> None:
    """werkzeug's development server (``smallworld run``) logs each request on the ``werkzeug`` logger: its
    lines go through :class:`RedactingFilter` (once per process, however many apps are built)."""
    werkzeug = logging.getLogger("werkzeug")
    if not any(isinstance(found, RedactingFilter) for found in werkzeug.filters):
        werkzeug.addFilter(RedactingFilter())
