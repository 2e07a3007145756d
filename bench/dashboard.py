"""My games (``/me``) for an address with 200 games, on PostgreSQL: server time per page.

    .venv/bin/python bench/dashboard.py [--games 200] [--others 5000] [--requests 100] [--runs 5]
                                        [--postgres postgresql+psycopg://postgres@127.0.0.1:5432/test]

Issue 19's target: "a dashboard with 200 games for one address renders in < 100 ms server time on
PostgreSQL". Measured as STYLE.md asks, next to a reference in the same run: the home page, a bare page of the
same app on the same stack (a template and the one query that asks whether the browser is signed in).

1. **Data.** A fresh schema (dropped at the end, also on Ctrl-C), the migrations, then ``--games`` games of
   one address as a busy player has them: a third running and waiting for it, a third running and waiting for
   another seat, some paused, some inviting (a few still to accept), the rest finished with their final
   table; 2–5 seats each, every running game with a real rules state (so the rows are as wide as on a real
   site, though the page never reads them). Beside them ``--others`` games of other addresses, so the
   address's rows are found among many. Then VACUUM ANALYZE, which autovacuum does on a real site.
2. **Timing.** The app in this process (``service.create_app``, PostgreSQL, rate limits off), a browser
   session signed in as the address (a ``sign_ins`` row, as the sign-in link makes one), and ``--requests``
   requests of ``/me`` then of ``/`` per run, timed around the WSGI call (the server's whole work: routing,
   session, queries, signing 200 links, rendering), ``--runs`` runs: median and p95 per run, the median of
   those; and this process's CPU time of each, which a machine busy with other work inflates far less than
   the wall time. The statements one ``/me`` sends are counted, and their time in PostgreSQL measured
   (``EXPLAIN ANALYZE`` of each, as sent).

Prints a table and the command line that reproduces it; exits 1 if a page did not list every game.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import shlex
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import create_engine, event, make_url, text
from sqlmodel import col

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import rules  # noqa: E402
from service import create_app  # noqa: E402
from service.domain.models import Game, Player, Seat, SignIn  # noqa: E402
from service.infra.db import get_engine, upgrade_database  # noqa: E402

ADDRESS = "busy.player@example.org"
NOW = datetime.now(UTC)


@contextmanager
def schema(url: str) -> Iterator[str]:
    engine = create_engine(url)
    name = f"bench_dashboard_{uuid.uuid4().hex[:10]}"
    with engine.connect() as connection:
        connection.execute(text(f'CREATE SCHEMA "{name}"'))
        connection.commit()
    try:
        yield (
            make_url(url).update_query_dict({"options": f"-csearch_path={name}"}).render_as_string(hide_password=False)
        )
    finally:
        with engine.connect() as connection:
            connection.execute(text(f'DROP SCHEMA "{name}" CASCADE'))
            connection.commit()
        engine.dispose()


def states() -> dict[int, dict[str, Any]]:
    """A real state per player count, a few turns in, played by the random bot."""
    from rules.bots import random_player

    found = {}
    for players in (2, 3, 4, 5):
        state = rules.new_game(players, seed=f"bench-{players}")
        rnd = random.Random(players)
        while state.turn < 4 and not state.over:
            state = rules.apply(state, random_player(state, rnd))
        found[players] = state.to_json()
    return found


def fill(engine: sa.Engine, games: int, others: int) -> None:
    rnd = random.Random(19)
    by_players = states()
    with engine.begin() as connection:
        people = [ADDRESS] + [f"player{n}@example.org" for n in range(400)]
        connection.execute(
            sa.insert(Player),
            [
                {"email": e, "display_name": e.split("@")[0], "time_zone": "Europe/Paris", "created_at": NOW}
                for e in people
            ],
        )
        ids = {email: pid or 0 for email, pid in connection.execute(sa.select(col(Player.email), col(Player.id)))}
        game_rows, seat_rows = [], []
        plans = []
        for n in range(games + others):
            mine = n < games
            players = rnd.choice((2, 3, 4, 5))
            kind = rnd.choices(("waiting", "theirs", "paused", "inviting", "finished"), weights=(30, 30, 5, 10, 25))[0]
            my_seat = rnd.randrange(players) if mine else None
            plans.append((n, mine, players, kind, my_seat))
            status = {"waiting": "active", "theirs": "active"}.get(kind, kind)
            on_turn = my_seat if kind == "waiting" and my_seat is not None else rnd.randrange(players)
            if kind == "theirs" and my_seat is not None and players > 1:
                on_turn = (my_seat + 1) % players
            running = status in ("active", "paused")
            result = None
            if status == "finished":
                order = list(range(players))
                rnd.shuffle(order)
                result = [
                    {"player": s, "coins": 90 - 7 * i, "tokens_on_board": 10, "place": i + 1, "tie_break": False,
                     "name": f"Seat {s}"}
                    for i, s in enumerate(order)
                ]  # fmt: skip
            game_rows.append(
                {
                    "name": f"Game {n}",
                    "status": status,
                    "settings": {},
                    "state": by_players[players] if status != "inviting" else None,
                    "version": 40,
                    "seed": secrets.token_hex(16),
                    "admin_secret": secrets.token_urlsafe(24),
                    "host_email": ADDRESS if mine and n % 5 == 0 else "host@example.org",
                    "step_key": f"{rnd.randint(1, 8)}:{on_turn}:-" if running else None,
                    "created_at": NOW - timedelta(days=rnd.randint(1, 300)),
                    "confirmed_at": NOW - timedelta(days=1),
                    "deadline_at": NOW + timedelta(hours=rnd.randint(1, 200)) if status == "active" else None,
                    "paused_remaining": 3600 * 20 if status == "paused" else None,
                    "finished_at": NOW - timedelta(days=rnd.randint(1, 200)) if status == "finished" else None,
                    "result": result,
                    "public": False,
                    "watch_serial": 0,
                }
            )
        game_ids = [row[0] for row in connection.execute(sa.insert(Game).returning(col(Game.id)), game_rows).all()]
        for (n, _mine, players, kind, my_seat), game_id in zip(plans, game_ids, strict=True):
            others_here = rnd.sample(people[1:], players)
            for seat in range(players):
                email = ADDRESS if seat == my_seat else others_here[seat]
                accepted = not (kind == "inviting" and seat == my_seat and n % 2 == 0)
                seat_rows.append(
                    {
                        "game_id": game_id,
                        "player_id": ids[email],
                        "seat": seat,
                        "display_name": f"Seat {seat}",
                        "secret": secrets.token_urlsafe(16),
                        "accepted_at": NOW - timedelta(days=2) if accepted else None,
                        "removed": False,
                        "vacation_used_seconds": 0,
                    }
                )
        connection.execute(sa.insert(Seat), seat_rows)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text("VACUUM ANALYZE"))


def timed(client: Any, path: str, requests: int, cpu: list[float] | None = None) -> tuple[list[float], str]:
    """``requests`` requests of ``path``: the wall time of each (ms); ``cpu`` gets this process's CPU time of each
    (ms), which a machine busy with other work does not inflate as it does the wall time."""
    samples = []
    body = ""
    for _ in range(requests):
        started, started_cpu = time.perf_counter(), time.process_time()
        response = client.get(path)
        samples.append((time.perf_counter() - started) * 1000)
        if cpu is not None:
            cpu.append((time.process_time() - started_cpu) * 1000)
        assert response.status_code == 200, (path, response.status_code)
        body = response.get_data(as_text=True)
    return samples, body


def p95(samples: list[float]) -> float:
    return sorted(samples)[max(0, int(len(samples) * 0.95) - 1)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--postgres", default="postgresql+psycopg://postgres@127.0.0.1:5432/test")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--others", type=int, default=5000)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    with schema(args.postgres) as url, tempfile.TemporaryDirectory() as instance:
        app = create_app(
            {
                "DATABASE_URL": url,
                "INSTANCE_PATH": instance,
                "RATELIMIT_ENABLED": False,
                "BASE_URL": "https://smallworld.example",
            }
        )
        engine = get_engine(app)
        upgrade_database(engine)
        loaded = time.perf_counter()
        fill(engine, args.games, args.others)
        loaded = time.perf_counter() - loaded
        with engine.begin() as connection:
            sign_in_id = connection.execute(
                sa.insert(SignIn).returning(col(SignIn.id)),
                {"email": ADDRESS, "link_secret": "x", "session_secret": "bench", "created_at": NOW, "used_at": NOW},
            ).scalar_one()
        client = app.test_client()
        with client.session_transaction() as session:
            session["address"] = {"id": sign_in_id, "k": "bench"}

        statements: list[tuple[str, Any]] = []

        def count(conn: Any, cursor: Any, statement: str, parameters: Any, *rest: Any) -> None:
            statements.append((statement, parameters))

        timed(client, "/me", 5)  # warm up: templates compiled, connections open
        timed(client, "/", 5)
        event.listen(engine, "before_cursor_execute", count)
        _, page = timed(client, "/me", 1)
        event.remove(engine, "before_cursor_execute", count)
        listed = page.count('class="my-game my-game-')
        # What the database spends on them: each statement of one /me, EXPLAIN ANALYZEd as it was sent.
        database_ms = 0.0
        with engine.connect() as connection:
            for statement, parameters in statements:
                found = connection.exec_driver_sql(f"EXPLAIN (ANALYZE, FORMAT JSON) {statement}", parameters).scalar()
                plan = found if isinstance(found, list) else json.loads(str(found))
                database_ms += plan[0]["Planning Time"] + plan[0]["Execution Time"]
        runs = []
        for _ in range(args.runs):
            me_cpu: list[float] = []
            home_cpu: list[float] = []
            me, _ = timed(client, "/me", args.requests, me_cpu)
            home, _ = timed(client, "/", args.requests, home_cpu)
            runs.append(
                (
                    statistics.median(me),
                    p95(me),
                    statistics.median(home),
                    p95(home),
                    statistics.median(me_cpu),
                    statistics.median(home_cpu),
                )
            )

    me_median = statistics.median(r[0] for r in runs)
    me_p95 = statistics.median(r[1] for r in runs)
    home_median = statistics.median(r[2] for r in runs)
    home_p95 = statistics.median(r[3] for r in runs)
    me_cpu_median = statistics.median(r[4] for r in runs)
    home_cpu_median = statistics.median(r[5] for r in runs)
    print(f"data: {args.games} games of one address among {args.games + args.others}, loaded in {loaded:.1f} s")
    print(
        f"/me lists {listed} games, {len(statements)} SQL statements ({database_ms:.2f} ms planning and executing "
        f"them in PostgreSQL), {len(page) / 1024:.0f} KB of HTML"
    )
    print("| page | median | p95 | runs (median ms) |")
    print("| --- | --- | --- | --- |")
    me_runs = " / ".join(f"{r[0]:.1f}" for r in runs)
    home_runs = " / ".join(f"{r[2]:.1f}" for r in runs)
    print(f"| /me ({args.games} games) | {me_median:.1f} ms | {me_p95:.1f} ms | {me_runs} |")
    print(f"| / (reference) | {home_median:.1f} ms | {home_p95:.1f} ms | {home_runs} |")
    print(f"| /me, this process's CPU | {me_cpu_median:.1f} ms | | {' / '.join(f'{r[4]:.1f}' for r in runs)} |")
    print(f"| /, this process's CPU | {home_cpu_median:.1f} ms | | {' / '.join(f'{r[5]:.1f}' for r in runs)} |")
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average at the end: {load} on {os.cpu_count()} cores")
    work = me_cpu_median + database_ms
    print(f"ratio /me : / = {me_median / home_median:.1f}x wall, {me_cpu_median / home_cpu_median:.1f}x CPU")
    print(
        f"target < 100 ms server time: the server's work (CPU {me_cpu_median:.1f} ms + PostgreSQL {database_ms:.1f} ms)"
        f" = {work:.1f} ms: {'met' if work < 100 else 'NOT met'}; wall p95 {me_p95:.1f} ms on this machine "
        f"({'under' if me_p95 < 100 else 'over'} 100 ms at a load average of {os.getloadavg()[0]:.1f})"
    )
    print("command:", shlex.join([sys.executable, *sys.argv]))
    figures = {
        "me_median_ms": round(me_median, 2),
        "me_p95_ms": round(me_p95, 2),
        "me_cpu_ms": round(me_cpu_median, 2),
        "home_cpu_ms": round(home_cpu_median, 2),
        "database_ms": round(database_ms, 2),
        "home_median_ms": round(home_median, 2),
        "games": listed,
    }
    print(json.dumps(figures))
    return 0 if listed == args.games else 1


if __name__ == "__main__":
    sys.exit(main())
