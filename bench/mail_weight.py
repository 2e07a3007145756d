"""What a player receives by mail over a whole game played by replies: bytes per player, per kind of mail.

Run by hand, never in CI (ARCHITECTURE §8: every mail at most 30 KB)::

    PYTHONPATH=. .venv/bin/python bench/mail_weight.py

One three-player game on SQLite in a temporary folder, dealt from the seed of ``tests/test_orders_by_mail.py``
and played as that test plays it: each player reads the mails a real SMTP server (aiosmtpd) receives and
answers every step by replying with orders chosen from what the mail lists (``POST /inbound/mail``), until
the final tables. Prints, per player, the mails and bytes received (as the SMTP server got them), and per kind
(the mail's template, from its ``Message-ID``'s outbox row) the count, how many carried the board picture,
the total, largest and mean size.

With ``--pictures``, it prints instead the board picture's bytes and pixel size: the turn mail sample's board
(``emails/samples.py``) and, for each board, a crowded specimen (every region held, with markers: the
palette's own specimen, ``emails.board.png``).

To compare with another version of the code (e.g. ``main``) on the same machine::

    git archive main | tar -x -C /tmp/weight-main && cp bench/mail_weight.py /tmp/weight-main/bench/
    (cd /tmp/weight-main && PYTHONPATH=. /path/to/this/tree/.venv/bin/python bench/mail_weight.py)
"""

from __future__ import annotations

import argparse
import random
import secrets
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace

from sqlalchemy import event
from sqlalchemy.orm import Session as OrmSession
from sqlmodel import select

import rules
from emails.board import png
from emails.board.public import PublicBoard
from emails.samples import SAMPLES
from service import create_app
from service.domain import lobby
from service.domain.models import OutboxMail
from service.infra.db import get_engine, get_session, upgrade_database
from tests.conftest import _announce_now
from tests.mail_players import MailTable, mail_settings, post_mail, reply_to
from tests.smtp import Received, SMTPServer
from tests.test_orders_by_mail import CHOICES, PLAYERS, SEED, choose, orders_in


def play(folder: Path) -> tuple[list[Received], dict[str, str], list[str]]:
    """The mails of a whole game by replies: what the SMTP server received, each mail's kind by its
    ``Message-ID``, and the players' addresses."""
    smtp = SMTPServer()
    smtp.start()
    try:
        app = create_app(
            {
                "TESTING": True,
                "RATELIMIT_ENABLED": False,
                "INSTANCE_PATH": str(folder / "instance"),
                "DATABASE_URL": f"sqlite:///{folder / 'weight.db'}",
                **mail_settings(smtp),
            }
        )
        upgrade_database(get_engine(app))
        # The same deal as the test of a whole game by mail (tests/conftest.py's deal_games_from).
        dealt = random.Random(f"game seed {SEED}")
        lobby.secrets = SimpleNamespace(  # type: ignore[assignment]
            token_hex=lambda n: f"{dealt.getrandbits(8 * n):0{2 * n}x}",
            token_urlsafe=secrets.token_urlsafe,
            compare_digest=secrets.compare_digest,
        )
        # Each step announced (its turn mails) as soon as it commits, as the tests do (a worker's job in production).
        event.listen(OrmSession, "after_commit", _announce_now, insert=True)
        table = MailTable(app, smtp, players=PLAYERS)
        table.create(redeploy="ask")
        rnd = random.Random(CHOICES)
        latest: dict[int, Received] = {}

        def deliver() -> None:
            for mail in table.deliver():
                if mail.rcpt_tos[0] in table.emails and mail.header("Reply-To") and orders_in(mail):
                    latest[table.seat_of(mail)] = mail

        deliver()
        for _ in range(1500):
            game = table.game()
            if game.status == "ending":
                table.tally()
                continue
            if game.status == "finished":
                break
            state = rules.read_state(game.state or {})
            seat = min(rules.awaiting(state))
            if seat not in latest:
                deliver()
            text = choose(orders_in(latest[seat]), rnd)
            answered = post_mail(app, reply_to(latest[seat], text))
            assert answered.status_code == 202, answered.get_json()
            deliver()
        deliver()
        assert table.game().status == "finished", "the game did not end"
        with app.app_context():
            kinds = {m.message_id: m.template for m in get_session().exec(select(OutboxMail)).all()}
        return smtp.mailbox.all(), kinds, table.emails
    finally:
        smtp.stop()


def picture_sizes() -> None:
    """The board picture's bytes and pixel size, for the turn mail sample's board and each board's specimen."""
    print(f"{'board':<28} {'bytes':>7} {'pixels':>9}")
    boards = [("your_turn sample", PublicBoard.from_mail(SAMPLES["your_turn"].context["board"]))]
    boards += [(f"{name} specimen", png._specimen(name)) for name in rules.BOARD_NAMES]
    for name, board in boards:
        drawn = png.draw(board)
        print(f"{name:<28} {len(drawn.data):>7} {drawn.width:>4}x{drawn.height}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pictures", action="store_true", help="the board picture's bytes and pixel size only")
    if parser.parse_args().pictures:
        picture_sizes()
        return
    with tempfile.TemporaryDirectory() as folder:
        received, kinds, players = play(Path(folder))
    per_player: dict[str, list[int]] = defaultdict(list)
    per_kind: dict[str, list[int]] = defaultdict(list)
    pictures: dict[str, int] = defaultdict(int)
    for mail in received:
        size = len(mail.content)
        for address in mail.rcpt_tos:
            per_player[address].append(size)
        kind = kinds.get(str(mail.header("Message-ID")), "?")
        per_kind[kind].append(size)
        pictures[kind] += any(part.get_content_type() == "image/png" for part in mail.message.walk())
    print(f"{'player':<20} {'mails':>6} {'bytes':>10}")
    for address in players:
        sizes = per_player[address]
        print(f"{address:<20} {len(sizes):>6} {sum(sizes):>10}")
    totals = [sum(per_player[address]) for address in players]
    print(f"{'mean per player':<20} {'':>6} {statistics.mean(totals):>10.0f}")
    print()
    print(f"{'kind':<18} {'mails':>6} {'pictures':>8} {'bytes':>10} {'largest':>8} {'mean':>8}")
    for kind, sizes in sorted(per_kind.items()):
        row = f"{kind:<18} {len(sizes):>6} {pictures[kind]:>8} {sum(sizes):>10} {max(sizes):>8}"
        print(f"{row} {statistics.mean(sizes):>8.0f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
