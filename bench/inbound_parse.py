"""What reading one hostile mail costs, against a normal reply, under the inbound path's limits
(``service.domain.inbound.InboundSettings``).

    PYTHONPATH=. .venv/bin/python bench/inbound_parse.py [--runs 3] [--uncapped]

One two-player game on SQLite in a temporary folder; each mail is handed to ``inbound.receive`` (the domain
operation both the SMTP listener and ``POST /inbound/mail`` call) addressed to the first seat's reply address,
with a new ``Message-ID`` each time. The mails:

- a normal reply (``help`` on top, a signature, the quoted turn mail): the reference;
- 10,000 and 20,000 blank lines before ``help`` (the reply parser's time grows with the square of the lines);
- ``"On "`` repeated on one line (20,000 characters, then as large as the size limit allows), and as many lines
  of 200 characters of it (quadratic in a line's length);
- an HTML reply of ``<style`` openers (a lazy regular expression would be quadratic);
- 20,000 flat MIME parts (720 KB), and as many parts as the limit allows, each of 9 KB;
- MIME nested 1,000 deep (``message/rfc822`` in ``message/rfc822``), and as deep as the limit allows;
- a ``To`` header of 40,000 addresses.

Prints, per mail, its size and two CPU times of the thread that reads it, in milliseconds, each the least and
the most of ``--runs`` runs: the reading alone (the stages of ``receive`` that depend on the mail's content:
the count of its parts on the raw bytes, its header block, the parsing, the reply's text, the orders) and
the whole of ``receive`` (with the database: the seat's limits, the record, the orders, the answer queued);
what became of the mail, and its reading's ratio to the reference's. Then the ratio of the 20,000-line
mail's reading to the 10,000-line one's (target at most 2.5) and the worst mail under the size limit, by
the most of its whole ``receive`` (target under 100 ms).
``--uncapped`` reads with the reply limits lifted (the text cap of before, 20,000 characters; no line
limits; parts and depth unlimited): what the limits save (slow: tens of seconds a mail).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

from sqlmodel import select

from rules import orders as grammar
from service import create_app
from service.domain import inbound
from service.domain.links import current_links, current_reply_addresses
from service.domain.models import Player, Seat
from service.infra.db import get_engine, get_session, upgrade_database
from tests.api.conftest import bearer, create_game, read_outbox, token_of

DOMAIN = "play.bench.example"
QUOTED = "\n".join("> " + line for line in ["It is your turn in Bench.", "", "  pick 1", "  pick 2"] * 20)


def plain(address: str, text: str) -> bytes:
    message = EmailMessage()
    message["From"] = "p0@bench.example"
    message["To"] = address
    message["Subject"] = "Re: Your turn"
    message["Message-ID"] = make_msgid(domain="bench.example")
    message.set_content(text, cte="8bit" if max(map(len, text.splitlines() or [""])) < 900 else "base64")
    return message.as_bytes()


def html(address: str, markup: str) -> bytes:
    message = EmailMessage()
    message["From"] = "p0@bench.example"
    message["To"] = address
    message["Subject"] = "Re: Your turn"
    message["Message-ID"] = make_msgid(domain="bench.example")
    message.set_content(markup, subtype="html", cte="base64")
    return message.as_bytes()


def wide(address: str, parts: int, size: int) -> bytes:
    head = (
        f"From: p0@bench.example\r\nTo: {address}\r\nSubject: Re: wide\r\nMessage-ID: {make_msgid()}\r\n"
        'MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n'
    )
    part = "--b\r\nContent-Type: text/plain\r\n\r\n" + "x" * size + "\r\n"
    return (head + "--b\r\nContent-Type: text/plain\r\n\r\nhelp\r\n" + part * (parts - 1) + "--b--\r\n").encode()


def deep(address: str, depth: int) -> bytes:
    head = f"From: p0@bench.example\r\nTo: {address}\r\nSubject: Re: deep\r\nMessage-ID: {make_msgid()}\r\n"
    nested = "Content-Type: message/rfc822\r\n\r\n" * (depth - 1) + "Content-Type: text/plain\r\n\r\nhelp\r\n"
    return (head + "MIME-Version: 1.0\r\n" + nested).encode()


def many_recipients(address: str, count: int) -> bytes:
    head = f"From: p0@bench.example\r\nTo: {', '.join(f'x{n}@bench.example' for n in range(count))}, {address}\r\n"
    return (head + f"Subject: Re: many\r\nMessage-ID: {make_msgid()}\r\n\r\nhelp\r\n").encode()


def mails(address: str, limit: int) -> dict[str, Callable[[], bytes]]:
    normal = f"help\n\n-- \nAnn\nSent from my phone\n\nOn Tue, 3 Mar 2026, Small World wrote:\n{QUOTED}\n"
    on_line = ("On " * 67)[:200]
    return {
        "a normal reply (reference)": lambda: plain(address, normal),
        "10,000 blank lines": lambda: plain(address, "\n" * 10_000 + "help\n"),
        "20,000 blank lines": lambda: plain(address, "\n" * 20_000 + "help\n"),
        '"On " x 20,000 characters, one line': lambda: plain(address, ("On " * 6_667)[:20_000] + "\n"),
        '"On " up to the size limit, one line': lambda: plain(address, ("On " * (limit // 4))[: limit * 7 // 10]),
        '"On " lines of 200 characters': lambda: plain(address, (on_line + "\n") * (limit // 201 * 7 // 10)),
        "HTML of <style openers": lambda: html(address, "<style" * (limit // 6 * 7 // 10)),
        "20,000 flat MIME parts (720 KB)": lambda: wide(address, 20_000, 0),
        "100 MIME parts of 9 KB (the limit)": lambda: wide(address, 100, 9_000),
        "MIME nested 1,000 deep": lambda: deep(address, 1_000),
        "MIME nested 10 deep (the limit)": lambda: deep(address, 11),
        "a To header of 40,000 addresses": lambda: many_recipients(address, 40_000),
    }


def reading(raw: bytes, settings: inbound.InboundSettings) -> float:
    """The CPU milliseconds of the stages of ``inbound.receive`` that read the mail's content, in its order."""
    started = time.thread_time()
    try:
        if inbound.mime_shape_refusal(raw, settings) is None:
            inbound.parse_head(raw)
            message = inbound.parse_message(raw, settings)
            grammar.parse(inbound.reply_text(message, settings))
    except inbound.Refused:
        pass
    return (time.thread_time() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--uncapped", action="store_true", help="the reply limits lifted: what they save")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-inbound-parse-"))
    app = create_app({"INSTANCE_PATH": str(folder), "RATELIMIT_ENABLED": False, "INBOUND_DOMAIN": DOMAIN})
    upgrade_database(get_engine(app))
    client = app.test_client()
    body = {"name": "Bench", "players": [{"name": f"P{i}", "email": f"p{i}@bench.example"} for i in range(2)]}
    game_id = create_game(client, body).get_json()["id"]
    for mail in read_outbox(app, "invitation"):
        client.post("/api/invitations/accept", headers=bearer(token_of(mail.context["invite_url"])))
    [turn] = read_outbox(app, "your_turn")
    settings = replace(
        inbound.InboundSettings.from_config(app.config), answers_per_hour=10**6, mails_per_seat_per_hour=10**6
    )
    if args.uncapped:
        settings = replace(
            settings, reply_chars=20_000, reply_lines=10**9, long_line=10**9, max_parts=10**9, max_depth=10**9
        )
        settings = replace(settings, cpu_seconds=10**9)
    with app.app_context():
        seat = get_session().exec(select(Seat).where(Seat.game_id == game_id, Seat.seat == 0)).one()
        player = get_session().get(Player, seat.player_id)
        assert player is not None
        address = app.extensions["smallworld.reply_addresses"].for_step(
            game_id, 0, seat.secret, turn.step_key, serial=player.links_serial
        )

    def read(raw: bytes) -> tuple[float, str]:
        with app.app_context():
            started = time.thread_time()
            [outcome] = inbound.receive(
                get_session(),
                raw,
                links=current_links(),
                replies=current_reply_addresses(),
                settings=settings,
                via="bench",
                recipients=[address],
            )
            return (time.thread_time() - started) * 1000, f"{outcome.kind}" + (
                f" ({outcome.refusal})" if outcome.refusal else ""
            )

    print(f"limits: {settings}")
    print(f"{'mail':40} {'bytes':>9} {'reading ms':>13} {'receive ms':>13} {'x ref':>6}  became", flush=True)
    results: dict[str, tuple[int, list[float], list[float], str]] = {}
    for name, make in mails(address, settings.max_bytes).items():
        read_ms, receive_ms, became = [], [], ""
        size = 0
        for _ in range(args.runs):
            raw = make()
            size = len(raw)
            read_ms.append(reading(raw, settings))
            spent, became = read(raw)
            receive_ms.append(spent)
        results[name] = (size, read_ms, receive_ms, became)
        reference = min(next(iter(results.values()))[1])
        both = f"{min(read_ms):6.1f}-{max(read_ms):<6.1f} {min(receive_ms):6.1f}-{max(receive_ms):<6.1f}"
        print(f"{name:40} {size:9,} {both} {min(read_ms) / reference:6.1f}  {became}", flush=True)
    ratio = min(results["20,000 blank lines"][1]) / min(results["10,000 blank lines"][1])
    under = {name: r for name, r in results.items() if r[0] <= settings.max_bytes}
    worst_name, worst = max(under.items(), key=lambda item: max(item[1][2]))
    print(f"reading 20,000 / 10,000 blank lines: {ratio:.2f} (target at most 2.5)")
    print(
        f"worst mail under the size limit: {worst_name}, receive {max(worst[2]):.1f} ms at most, its reading "
        f"{max(worst[1]):.1f} ms (target under 100 ms)"
    )


if __name__ == "__main__":
    main()
