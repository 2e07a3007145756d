"""Access logs without signed links (``service.web.access_log``, ``service.domain.links.KINDS``): every route that
takes a token is a secret link kind's, and the logs of every web server the service runs (production's gunicorn,
``smallworld serve``'s, ``smallworld run``'s werkzeug) keep no token of any kind."""

from __future__ import annotations

import contextlib
import doctest
import logging
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from flask import Flask

from service.domain import links
from service.domain.links import KINDS, SECRET_PATHS, LinkMaker, signer_for
from service.web import access_log
from tests.processes import SMALLWORLD, free_port, service_environment, start, stop

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def test_the_doctests() -> None:
    assert doctest.testmod(links).failed == 0
    assert doctest.testmod(access_log).failed == 0


def test_every_route_that_takes_a_token_is_a_secret_link_kinds(app: Flask) -> None:
    """A new route with a token and no link kind (or a kind not said to be secret) fails here, before a log
    keeps its tokens."""
    taking_tokens = [
        rule.rule
        for rule in app.url_map.iter_rules()
        if any("token" in argument or "secret" in argument or "key" in argument for argument in rule.arguments)
    ]
    assert taking_tokens, "the app's routes take tokens"
    uncovered = [rule for rule in taking_tokens if not any(rule.startswith(path) for path in SECRET_PATHS)]
    assert uncovered == []
    # And every secret kind's path is a route: the list says where the tokens really are.
    assert all(any(rule.startswith(path) for rule in taking_tokens) for path in SECRET_PATHS)


def example_paths() -> dict[str, str]:
    """A path of every secret link kind with a real token in it, and the token."""
    maker = LinkMaker(signer_for("a key of the test's own"), "http://example.org")
    found = {}
    for kind in KINDS:
        assert kind.secret
        token = maker.signer.sign(kind.purpose, {"g": 1, "s": 0, "k": f"secret-of-{kind.purpose}"})
        for rule in kind.paths:
            path = rule.replace("<int:game_id>", "1").replace("<token>", token)
            found[path + (".ics" if kind.purpose == links.CALENDAR else "")] = token
    return found


def test_a_request_line_of_every_kind_is_logged_without_its_token() -> None:
    for path, token in example_paths().items():
        for line in (f'"GET {path} HTTP/1.1"', f'"POST {path}?x=1 HTTP/1.1"', f"https://example.org{path}"):
            cut = access_log.redacted_text(line)
            assert token not in cut and token.split(".")[0] not in cut, cut
            assert "…" in cut
    # %-escaped, as a client may send it: werkzeug routes it all the same.
    assert access_log.redacted_text("GET /pl%61y/eyJnIjoxfQ.a.b HTTP/1.1") == "GET /play/… HTTP/1.1"


def test_werkzeugs_request_lines_go_through_the_filter(app: Flask, caplog: pytest.LogCaptureFixture) -> None:
    """``smallworld run``'s development server logs each request on the ``werkzeug`` logger."""
    path, token = next(iter(example_paths().items()))
    with caplog.at_level(logging.INFO, logger="werkzeug"):
        logging.getLogger("werkzeug").info('%s - - "%s" %s %s', "127.0.0.1", f"GET {path} HTTP/1.1", "200", "-")
    assert caplog.records and token not in caplog.text and "…" in caplog.text


def _request_every_kind(port: int) -> list[str]:
    tokens = []
    for path, token in example_paths().items():
        tokens.append(token)
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}{path}", headers={"Referer": f"http://127.0.0.1:{port}{path}"}
        )
        try:
            urllib.request.urlopen(request, timeout=20).close()
        except urllib.error.HTTPError as refused:  # the test's tokens are signed with another key: refused
            assert refused.code in (403, 404, 410, 429), (path, refused.code)  # 429: bad links from one client
    quoted = "/pl%61y/" + tokens[0]
    with contextlib.suppress(urllib.error.HTTPError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}{quoted}", timeout=20).close()
    return tokens


def _wait_for(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                return
        except OSError:
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)


def _assert_no_token(log: Path, tokens: list[str], port: int) -> None:
    text = log.read_text()
    for token in tokens:
        assert token not in text and token.split(".")[0] not in text, text
    # The requests were logged (so the test saw the access log, not an empty file).
    assert "/play/…" in text and "/sign-in/…" in text and "/games/1/watch/…" in text, text


@pytest.mark.processes
@pytest.mark.parametrize("server", ["production", "serve", "run"])
def test_no_log_of_any_web_server_keeps_a_token_of_any_kind(server: str, tmp_path: Path) -> None:
    port = free_port()
    env = service_environment(tmp_path / "instance", GUNICORN_BIND=f"127.0.0.1:{port}", WEB_CONCURRENCY="1")
    log = tmp_path / "web.log"
    if server == "production":
        subprocess.run([SMALLWORLD, "db", "upgrade"], env=env, check=True, capture_output=True)
        with log.open("wb") as output:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "gunicorn",
                    "--config",
                    str(DEPLOY / "gunicorn.conf.py"),
                    "service:create_app()",
                ],  # noqa: E501
                env=env,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
    elif server == "serve":
        process = start(["serve", "--port", str(port)], env, log)
    else:
        subprocess.run([SMALLWORLD, "db", "upgrade"], env=env, check=True, capture_output=True)
        process = start(["run", "--port", str(port), "--no-reload", "--no-debugger"], env, log)
    try:
        _wait_for(port, process, log)
        tokens = _request_every_kind(port)
        time.sleep(0.5)  # the last lines written out (no assertion waits on the clock)
    finally:
        stop(process)
    _assert_no_token(log, tokens, port)
