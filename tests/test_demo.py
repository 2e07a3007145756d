"""``smallworld demo`` plays a whole game through the real embedded stack and checks its invariants."""

from __future__ import annotations

import http.server
import json
import os
import smtplib
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from email.message import EmailMessage
from typing import Any

import pytest

from service.cli.demo_game import (
    Bot,
    DemoFailed,
    EmbeddedStack,
    Http,
    Mailbox,
    SmtpMailbox,
    _table,
    await_mail,
    free_port,
)


@pytest.mark.processes
def test_a_short_demo_finishes_with_every_invariant_held(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SMALLWORLD_")}
    env["TMPDIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "service", "demo", "--players", "2", "--turn-length", "3s", "--seed", "2"],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Game over in" in done.stdout
    assert "Bot 1 ignored its turns 2, 5, 8" in done.stdout
    assert "3 auto-passes followed" in done.stdout
    assert "Final table" in done.stdout


@pytest.mark.processes
def test_a_demo_against_a_running_service_reads_its_mail_over_smtp(tmp_path, monkeypatch) -> None:
    """``--url`` with ``--smtp``: the service runs on its own (``smallworld serve``, the ``smtp`` backend
    pointed at the port where the demo then receives), and the demo plays it through its links."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the service's instance folder
    smtp_port = free_port()
    with EmbeddedStack(sweep_seconds=1, smtp=("127.0.0.1", smtp_port)) as service:
        done = subprocess.run(
            [
                *(sys.executable, "-m", "service", "demo", "--players", "2", "--turn-length", "3s", "--seed", "3"),
                *("--url", service.url, "--smtp", f"127.0.0.1:{smtp_port}"),
            ],
            env={k: v for k, v in os.environ.items() if not k.startswith("SMALLWORLD_")},
            capture_output=True,
            text=True,
            timeout=240,
        )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"Receiving the mail over SMTP on 127.0.0.1:{smtp_port}" in done.stdout
    assert "Service started" not in done.stdout, "it played the running service, not one of its own"
    assert "Bot 1 ignored its turns 2, 5, 8" in done.stdout and "3 auto-passes followed" in done.stdout
    assert "Final table" in done.stdout


def test_a_demo_against_a_running_service_must_be_told_where_its_mail_goes() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "service", "demo", "--url", "http://127.0.0.1:9"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "give either --mail-dir" in done.stderr and "--smtp HOST:PORT" in done.stderr
    assert "Traceback" not in done.stderr


# -- the bots' HTTP client: patient with what the service says is temporary ---------------------------------
class Scripted(http.server.BaseHTTPRequestHandler):
    """Answers each request with the next of ``answers``: (status, headers) or "drop" (close, no answer)."""

    answers: list[Any] = []
    seen: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.seen.append(self.path)
        answer = self.answers.pop(0) if self.answers else (200, {})
        if answer == "drop":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        status, headers = answer
        body = json.dumps({"status": "active"} if status == 200 else {"error": "not now"}).encode()
        self.send_response(status)
        for name, value in {"Content-Type": "application/json", **headers}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def scripted() -> Iterator[tuple[str, type[Scripted]]]:
    handler = type("Handler", (Scripted,), {"answers": [], "seen": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


def test_the_bots_wait_out_a_database_restart_a_rate_limit_and_a_dropped_connection(scripted: Any) -> None:
    url, handler = scripted
    handler.answers = [(503, {"Retry-After": "0"}), (429, {"Retry-After": "0"}), "drop", (200, {})]
    client = Http(url, patience=10)
    status, view = client.call("GET", "/api/games/1")
    assert (status, view, client.retried) == (200, {"status": "active"}, 3)
    assert handler.seen == ["/api/games/1"] * 4


def test_the_bots_give_up_on_a_service_that_stays_unavailable_within_their_patience(scripted: Any) -> None:
    url, handler = scripted
    handler.answers = [(503, {"Retry-After": "1"})] * 20
    started = time.monotonic()
    with pytest.raises(DemoFailed, match="still answered 503 Service Unavailable after 3 tries"):
        Http(url, patience=2.5).call("GET", "/api/games/1")
    assert time.monotonic() - started < 3


def test_a_503_without_retry_after_and_other_errors_are_answers_not_retried(scripted: Any) -> None:
    url, handler = scripted
    handler.answers = [(503, {}), (500, {})]
    client = Http(url, patience=10)
    assert client.call("GET", "/health")[0] == 503
    assert client.call("GET", "/api/games/1") == (500, {"error": "not now"})
    assert client.retried == 0


def test_the_bots_wait_for_a_service_that_is_not_listening_yet() -> None:
    port = free_port()
    client = Http(f"http://127.0.0.1:{port}", patience=10)
    handler = type("Handler", (Scripted,), {"answers": [], "seen": []})
    server: list[http.server.ThreadingHTTPServer] = []

    def start_late() -> None:
        time.sleep(0.6)
        server.append(http.server.ThreadingHTTPServer(("127.0.0.1", port), handler))
        server[0].serve_forever()

    threading.Thread(target=start_late, daemon=True).start()
    try:
        assert client.call("GET", "/api/games/1")[0] == 200
        assert client.retried >= 1
    finally:
        server[0].shutdown()
        server[0].server_close()


@pytest.mark.processes
def test_two_demos_sharing_one_mail_folder_each_count_only_their_own_games_mail(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the service's instance folder
    with EmbeddedStack(sweep_seconds=1) as service:
        command = [sys.executable, "-m", "service", "demo", "--players", "2", "--turn-length", "3s"]
        where = ["--url", service.url, "--mail-dir", str(service.mail_dir)]
        env = {k: v for k, v in os.environ.items() if not k.startswith("SMALLWORLD_")}
        demos = [
            subprocess.Popen(
                [*command, "--seed", str(seed), *where], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
            )
            for seed in (2, 4)
        ]
        outputs = [demo.communicate(timeout=300)[0].decode() for demo in demos]
    for demo, output in zip(demos, outputs, strict=True):
        assert demo.returncode == 0, output[-3000:]
        assert "Bot 1 ignored its turns 2, 5, 8" in output and "3 auto-passes followed" in output


def _mail_file(folder, name: str, subject: str, game: int) -> None:
    message = EmailMessage()
    message["To"], message["Subject"], message["Message-ID"] = "bot1@demo.example.org", subject, f"<{name}@x>"
    message["References"] = f"<game-{game}.20261128021913000000@localhost>"
    message.set_content("Your turn was played for you.")
    folder.mkdir(parents=True, exist_ok=True)
    # As the file backend writes (emails/delivery.py): under a hidden name, then renamed. Written in place, a
    # mailbox reading the folder meanwhile could take the file while it is still empty, and never read it again.
    writing = folder / f".writing-{name}.eml"
    writing.write_bytes(message.as_bytes())
    writing.rename(folder / f"{name}.eml")


def test_the_final_check_waits_for_the_mail_of_the_last_auto_pass_that_arrives_after_the_final_tables(
    tmp_path,
) -> None:
    # Seen in ten minutes of many games: a game's last step was an auto-pass, the tally's "is over" mails went
    # out by one delivery while another was still sending the auto-pass's mail; the check counted too early.
    mailbox = Mailbox(tmp_path / "mail")
    _mail_file(mailbox.folder, "over", "Demo game 7 is over: Bot 0 wins", game=7)
    mailbox.new()
    late = threading.Timer(0.5, _mail_file, (mailbox.folder, "passed", "Demo game 7: your turn was played for you", 7))
    late.start()
    try:
        mails = await_mail(mailbox, 7, lambda mails: any("played for you" in m.subject for m in mails), seconds=20)
    finally:
        late.cancel()
    assert sorted(m.subject for m in mails) == [
        "Demo game 7 is over: Bot 0 wins",
        "Demo game 7: your turn was played for you",
    ]


def test_the_final_check_gives_up_waiting_for_a_mail_that_never_comes_and_another_games_mail_does_not_count(
    tmp_path,
) -> None:
    mailbox = Mailbox(tmp_path / "mail")
    _mail_file(mailbox.folder, "other", "Demo game 8: your turn was played for you", game=8)
    started = time.monotonic()
    mails = await_mail(mailbox, 7, lambda mails: any("played for you" in m.subject for m in mails), seconds=0.5)
    assert mails == []  # the check that follows fails, naming the missing mail
    assert 0.5 <= time.monotonic() - started < 10


def _mail_bytes(name: str, subject: str, game: int, text: str = "Your turn was played for you.") -> bytes:
    message = EmailMessage()
    message["From"], message["To"] = "smallworld@example.org", "bot1@demo.example.org"
    message["Subject"], message["Message-ID"] = subject, f"<{name}@x>"
    message["References"] = f"<game-{game}.20261128021913000000@localhost>"
    message.set_content(text)
    return message.as_bytes()


def test_a_mail_received_again_with_its_message_id_is_one_delivery_reported_apart_and_must_be_the_same_bytes() -> None:
    # At least once (ARCHITECTURE §6): a worker killed after the SMTP server took a mail, before recording it, makes
    # another send it again, the same bytes. The demo counts it once and says so; the same Message-ID with other
    # bytes fails it. Before, any repeated Message-ID failed the demo ("mails sent twice").
    turn = _mail_bytes("passed", "Demo game 7: your turn was played for you", 7)
    with SmtpMailbox() as mailbox, smtplib.SMTP(mailbox.host, mailbox.port) as smtp:
        for data in (turn, turn):
            smtp.sendmail("smallworld@example.org", ["bot1@demo.example.org"], data)
        [mail] = mailbox.new()  # the server takes each mail before it answers: both are in
        assert mail.message_id == "<passed@x>" and len(mailbox.all) == 1
        assert [m.message_id for m in mailbox.copies] == ["<passed@x>"] and mailbox.changed_copies(7) == []
        lines: list[str] = []
        final = {"seats": [{"seat": 0, "name": "Bot 0"}], "seed": 1, "result": []}
        _table(lines.append, final, 3.0, mailbox, [Bot(0, "Bot 0", "bot0@demo.example.org", lazy=True)], 7)
        assert "1 mails arrived again, the same bytes with the same Message-ID: one delivery each." in lines
        assert lines[0].endswith(", 1 mails.")
        changed = _mail_bytes("passed", "Demo game 7: your turn was played for you", 7, text="Signed anew.")
        smtp.sendmail("smallworld@example.org", ["bot1@demo.example.org"], changed)
        assert mailbox.new() == []
        assert mailbox.changed_copies(7) == ["<passed@x>"] and mailbox.changed_copies(8) == []
