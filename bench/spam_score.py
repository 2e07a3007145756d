"""Every kind of mail through SpamAssassin's local rules: its score, the rules that fired, and its size as sent.

Run by hand, never in CI (ARCHITECTURE §6: every kind scores at most 1.0 and weighs at most 30 KB)::

    apt-get install -y spamassassin          # Debian's; no network rules are used
    PYTHONPATH=. .venv/bin/python bench/spam_score.py

Each sample of ``emails/samples.py`` (every kind, and its variants) is rendered with every link its kind
carries and written as delivery writes it (``emails.compose.write``): a signed reply address, the game's
thread and list, the one-click unsubscribe. Then ``spamassassin -L -t`` (local tests only: no DNS
blocklists, no Razor or Pyzor) scores it. Prints one row per sample: its score, its size in bytes, and the
rules that fired (``tests=``). Exits 1 if a sample scores above 1.0 or weighs more than ``MOST_BYTES``; exits 0
with a clear message when ``spamassassin`` is not installed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

from emails.compose import MOST_BYTES, Envelope, list_id, thread_id, write
from emails.messages import GameMessage
from emails.samples import ALL

#: The most a kind may score.
MOST_SCORE = 1.0
_STATUS = re.compile(
    rb"^X-Spam-Status: (?:Yes|No), score=(-?[0-9.]+) .*?tests=(.*?)(?:autolearn=| version=|$)", re.S | re.M
)


def scored(data: bytes) -> tuple[float, str]:
    """SpamAssassin's score of a mail, with its local tests only, and the rules that fired."""
    done = subprocess.run(["spamassassin", "-L", "-t"], input=data, capture_output=True, check=True, timeout=120)
    head = done.stdout.split(b"\r\n\r\n", 1)[0].split(b"\n\n", 1)[0]
    found = _STATUS.search(head)
    if found is None:
        raise RuntimeError(f"no X-Spam-Status in SpamAssassin's answer: {head[:500]!r}")
    rules = " ".join(found.group(2).decode().replace("\r", "").replace("\n", "").replace("\t", "").split(","))
    return float(found.group(1)), rules.strip() or "-"


def main() -> int:
    if shutil.which("spamassassin") is None:
        print("spamassassin is not installed (Debian: apt-get install -y spamassassin): nothing measured")
        return 0
    failed = []
    print(f"{'sample':<30} {'score':>6} {'bytes':>7}  rules")
    for name, sample in sorted(ALL.items()):
        mail = sample.mail
        rendered = sample.render()
        game = mail.game_id if isinstance(mail, GameMessage) else None
        envelope = Envelope(
            message_id="<5f0c2a9d1b7e4c3aa8e61d2f9b0c7e14@smallworld.example>",
            to="bob@example.org",
            to_name="Bob",
            sender="Small World by Mail <smallworld@smallworld.example>",
            date=sample.now,
            thread_id=thread_id(game, sample.now, "smallworld.example") if game is not None else None,
            unsubscribe_url=sample.unsubscribe_url,
            reply_to=sample.reply_address,
            list_id=list_id(game, mail.game_name, "play.smallworld.example") if isinstance(mail, GameMessage) else None,
        )
        data = write(rendered, envelope).data
        score, rules = scored(data)
        print(f"{name:<30} {score:>6.1f} {len(data):>7}  {rules}")
        if score > MOST_SCORE or len(data) > MOST_BYTES:
            failed.append(name)
    if failed:
        print(f"over {MOST_SCORE} or {MOST_BYTES} bytes: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
