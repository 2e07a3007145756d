"""The server's own time per request, from gunicorn's access log: what a client's round trip holds besides
its own waits.

gunicorn writes a line per request in ``FORMAT`` (``--access-logformat``): the method, the path, the status
and the time from the request read to the answer written, in µs (``%(D)s``). :func:`served_ms` finds those
lines, alone in a file (``bench/api_load.py``) or inside the deployment's own log lines, which put a time,
the process and the logger before the message (``tests/deploy/capacity.py``: gunicorn with
deploy/gunicorn.conf.py, whose access lines go to its output).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: gunicorn's ``--access-logformat`` for the benches.
FORMAT = "%(m)s %(U)s %(s)s %(D)sus"

_SERVED = re.compile(r"(?:^|\s)([A-Z]+) (/\S*) (\d{3}) (\d+)us(?=\s|$)")


def served_ms(
    lines: Iterable[str], method: str | None = None, path_end: str = "", status: int | None = None
) -> list[float]:
    """The server's time (ms) of each request of ``lines`` whose method is ``method`` and whose path ends
    with ``path_end`` (and whose status is ``status``; each only if given), in the order logged.

    >>> served_ms(["POST /api/games/3/actions 200 12345us", "GET /api/games/3 200 800us"], "POST", "/actions")
    [12.345]
    >>> line = '2026-11-27T22:23:01.002Z INFO web[42] gunicorn.access: POST /api/games/3/actions 409 2100us game=3'
    >>> served_ms([line], "POST", "/actions"), served_ms([line], "POST", "/actions", status=200)
    ([2.1], [])
    >>> served_ms(["POST /api/games/3/actions 200 12345us", "GET /api/games/3 200 800us", "starting"])
    [12.345, 0.8]
    """
    found = []
    for line in lines:
        match = _SERVED.search(line)
        if match is None or method not in (None, match[1]) or not match[2].endswith(path_end):
            continue
        if status is None or int(match[3]) == status:
            found.append(int(match[4]) / 1000)
    return found
