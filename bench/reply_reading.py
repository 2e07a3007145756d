"""What reading a reply as people write it costs: every entry of the reply corpus (tests/reply_corpus.py: the
shapes of Gmail, Outlook, Apple Mail, Thunderbird, K-9 and FairEmail, top- and bottom-posted, HTML-only, in four
languages), each a reply with three orders to the sample turn mail (``emails.samples``), read as
``service.domain.inbound`` reads it: parsed, its own text found (``reply_text``), its orders read.

    PYTHONPATH=. .venv/bin/python bench/reply_reading.py [--runs 5] [--top 8]

Prints the number of entries per client, then the ``--top`` largest entries and the slowest: size in bytes and
the thread CPU time of the reading in milliseconds (the least of ``--runs`` runs), top- against bottom-posted
alike; then a bottom-posted reply under a quote 20 times a turn mail's (about 50,000 characters): its quote is
dropped by the linear pass before the bounded reply parser, so it costs about what a short one does.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from email.message import EmailMessage

from emails.samples import REPLY_ADDRESS, SAMPLES
from rules import orders as grammar
from service.domain.inbound import InboundSettings, parse_message, reply_text
from tests.reply_corpus import CORPUS, Original

ORDERS = "conquer 3 5\nredeploy 3:2 5:1\nend"


def original() -> Original:
    rendered = SAMPLES["your_turn"].render()
    return Original(rendered.text, rendered.html, "Small World", REPLY_ADDRESS, rendered.subject, "<t@x>", "b@x")


def reading_ms(raw: bytes, runs: int) -> tuple[float, list[str]]:
    best, read = float("inf"), []
    settings = InboundSettings()
    for _ in range(runs):
        started = time.thread_time()
        read = [o.text for o in grammar.parse(reply_text(parse_message(raw, settings), settings)).orders]
        best = min(best, time.thread_time() - started)
    return best * 1000, read


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--top", type=int, default=8)
    args = parser.parse_args()
    mail = original()
    print("entries per client:", dict(sorted(Counter(shape.client for shape in CORPUS).items())))
    rows = []
    for shape in CORPUS:
        raw = shape.write(mail, ORDERS).as_bytes()
        ms, read = reading_ms(raw, args.runs)
        assert read == ORDERS.splitlines(), (shape.name, read)
        rows.append((len(raw), ms, shape.name))
    print(
        f"{len(rows)} entries, all read exactly; reading ms: least {min(r[1] for r in rows):.2f}, "
        f"most {max(r[1] for r in rows):.2f}"
    )
    print("largest:")
    for size, ms, name in sorted(rows, reverse=True)[: args.top]:
        print(f"  {name:40} {size:7,} bytes {ms:6.2f} ms")
    print("slowest:")
    for size, ms, name in sorted(rows, key=lambda row: -row[1])[: args.top]:
        print(f"  {name:40} {size:7,} bytes {ms:6.2f} ms")
    quote = "\n".join("> " + line for line in ((mail.text + "\n") * 20).splitlines())
    long = EmailMessage()
    long["From"] = "b@x"
    long.set_content(f"On Tue, 3 Mar 2026 at 10:12, Small World wrote:\n{quote}\n\n{ORDERS}\n")
    raw = long.as_bytes()
    ms, read = reading_ms(raw, args.runs)
    assert read == ORDERS.splitlines(), read
    print(f"bottom-posted under a quote of {len(quote):,} characters: {len(raw):,} bytes {ms:.2f} ms")


if __name__ == "__main__":
    main()
