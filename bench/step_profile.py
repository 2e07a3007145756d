"""A step's CPU in process, by function: the service's own cost of ``POST .../actions`` without HTTP or load.

    python bench/step_profile.py [--games 20] [--players 2] [--steps 400] [--limits] [--pages] [--profile OUT.prof]
                                 [--top 40]

Creates ``--games`` games of ``--players`` seats on a fresh PostgreSQL schema (Redis as the broker;
with ``--limits`` the rate limits counted in Redis as in production), then plays ``--steps`` steps through
Flask's test client, one game after the other in turn, each from the previous step's answer (a ``GET
.../legal-actions`` when the game passes to another seat, as ``api_load.py``'s bots do). Prints the
thread CPU time per POST and per GET (median and mean; with ``--pages``, also the turn page drawn for the
awaited seat after each step), and with ``--profile`` writes a cProfile of the steps (not of the set-up)
and prints its top functions by own time and the share of each package. This is what ``api_load.py``'s
"CPU per step" is made of, measured without the wait for a core that a loaded machine adds: use it to
compare two versions of the code one after the other (same command, same machine).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import statistics
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import rules  # noqa: E402
from rules.bots import concrete  # noqa: E402

if TYPE_CHECKING:
    from flask.testing import FlaskClient

POSTGRES = os.environ.get("SMALLWORLD_BENCH_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
REDIS = os.environ.get("SMALLWORLD_BENCH_REDIS_URL", "redis://127.0.0.1:6379/8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--players", type=int, default=2, help="seats per game (2 to 5)")
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--limits", action="store_true", help="rate limits on, counted in Redis")
    parser.add_argument("--profile", metavar="OUT", help="write a cProfile of the steps to OUT and print it")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument(
        "--pages",
        action="store_true",
        help="also draw the awaited seat's turn page after every step (GET .../turn, in a browser session "
        "opened from the seat's link), as a player on the page sees it after each click",
    )
    args = parser.parse_args()
    with bench_schema(limits=args.limits) as schema:
        run(args, schema)


@contextmanager
def bench_schema(*, limits: bool) -> Iterator[str]:
    """A fresh PostgreSQL schema at the head of this tree's migrations, with this process's environment set
    for the service to use it (Redis as the broker; with ``limits`` the rate limits counted in Redis, raised
    out of the way); dropped at the end."""
    import sqlalchemy as sa

    schema = f"bench_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(POSTGRES)
    with admin.connect() as connection:
        connection.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        connection.commit()
    os.environ.update(
        SMALLWORLD_DATABASE_URL=f"{POSTGRES}?options=-csearch_path%3D{schema}",
        SMALLWORLD_BROKER_URL=REDIS,
        SMALLWORLD_INSTANCE_PATH=f"/tmp/{schema}",
        SMALLWORLD_RATELIMIT_ENABLED="true" if limits else "false",
        SMALLWORLD_RATELIMIT_STORAGE_URI=REDIS,
        SMALLWORLD_RATELIMIT_LINKS="1000000 per minute",
        SMALLWORLD_RATELIMIT_NEW_GAMES="1000000 per minute",
        SMALLWORLD_RATELIMIT_STRANGERS_PER_HOST="1000000 per day",
        SMALLWORLD_RATELIMIT_STRANGERS_PER_CLIENT="1000000 per day",
        SMALLWORLD_RATELIMIT_ACTIONS="1000000 per minute",
    )
    try:
        # Its words to stderr: stdout is the results (step_lockstep.py reads it).
        subprocess.run([sys.executable, "-m", "service", "db", "upgrade"], check=True, cwd=ROOT, stdout=sys.stderr)
        yield schema
    finally:
        with admin.connect() as connection:
            connection.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
            connection.commit()
        admin.dispose()


def started_games(client: FlaskClient, schema: str, games: int, players: int) -> dict[int, dict[int, str]]:
    """``games`` games of ``players`` seats created and confirmed through the API (every invitation taken as
    accepted): their seats' turn tokens, by game and seat."""
    from bench.api_load import confirm_tokens, seat_tokens

    first = None
    for g in range(games):
        body = {
            "name": f"profile {g}",
            "players": [{"name": f"P{i}", "email": f"{schema}g{g}p{i}@example.org"} for i in range(players)],
            "settings": {"start_when_all_accepted": False},
        }
        created = client.post("/api/games", json=body)
        assert created.status_code == 201, created.json
        first = first or created.json["id"]
    for token in confirm_tokens(schema, first or 0):
        confirmed = client.post("/api/games/confirm", headers={"Authorization": f"Bearer {token}"})
        assert confirmed.status_code == 200, confirmed.json
    return seat_tokens(schema)


def run(args: argparse.Namespace, schema: str) -> None:
    from service import create_app

    app = create_app()
    client = app.test_client()
    games = started_games(client, schema, args.games, args.players)
    state: dict[int, dict] = {}
    browsers = {}
    if args.pages:  # a browser per seat: its link opens a session cookie, as a player's click does
        for game_id, seats in games.items():
            for number, token in seats.items():
                browser = app.test_client()
                opened = browser.get(f"/play/{token}")
                assert opened.status_code == 302, opened.status_code
                browsers[game_id, number] = browser
    for game_id, seats in games.items():
        view = client.get(f"/api/games/{game_id}", headers={"Authorization": f"Bearer {seats[0]}"}).json
        state[game_id] = {"view": view, "legal": None, "for": None, "rnd": random.Random(game_id)}
    cpu: dict[str, list[float]] = defaultdict(list)
    # CPU time, not wall time: waits on PostgreSQL and Redis are not the service's cost.
    profiler = cProfile.Profile(time.thread_time) if args.profile else None
    order = sorted(games)
    steps = 0
    while steps < args.steps and order:
        for game_id in list(order):
            if steps >= args.steps:
                break
            game = state[game_id]
            if game["view"]["status"] != "active":
                order.remove(game_id)
                continue
            seat = game["view"]["awaiting"][0]
            headers = {"Authorization": f"Bearer {games[game_id][seat]}"}
            if game["legal"] is None or game["for"] != seat:
                game["legal"] = timed(
                    cpu["GET legal-actions"],
                    profiler,
                    client.get,
                    f"/api/games/{game_id}/legal-actions",
                    headers=headers,
                ).json
            action = concrete(rules.Action.from_json(game["rnd"].choice(game["legal"]["actions"])), game["rnd"])
            body = {"version": game["legal"]["version"], "action": action.to_json()}
            answer = timed(
                cpu["POST actions"], profiler, client.post, f"/api/games/{game_id}/actions", json=body, headers=headers
            )
            assert answer.status_code == 200, answer.json
            # Split by what the step did: one that gives the game to another seat queues its turn mail, told
            # "Since your last turn" (issue 21); the common step keeps the same seat on turn.
            passed = answer.json["game"]["awaiting"][:1] != [seat]
            cpu["POST, turn passed" if passed else "POST, same seat"].append(cpu["POST actions"][-1])
            steps += 1
            game["view"], game["legal"], game["for"] = answer.json["game"], answer.json["legal_actions"], seat
            if args.pages and game["view"]["status"] == "active":
                awaited = game["view"]["awaiting"][0]
                drawn = timed(cpu["GET turn page"], profiler, browsers[game_id, awaited].get, f"/games/{game_id}/turn")
                assert drawn.status_code == 200, drawn.status_code
    print(
        f"{steps} steps on {args.games} games, limits {'in Redis' if args.limits else 'off'}; "
        "thread CPU per request, ms:"
    )
    for name, times in sorted(cpu.items()):
        print(
            f"  {name:20} n={len(times):5}  median {statistics.median(times) * 1e3:6.2f}  "
            f"mean {statistics.mean(times) * 1e3:6.2f}"
        )
    per_step = sum(sum(cpu[name]) for name in ("GET legal-actions", "POST actions")) / max(steps, 1)
    print(f"  the API's requests per step: {per_step * 1e3:.2f} ms")
    if profiler is not None:
        profiler.dump_stats(args.profile)
        stats = pstats.Stats(args.profile)
        stats.sort_stats("tottime").print_stats(args.top)
        by_package: dict[str, float] = defaultdict(float)
        total = 0.0
        for (filename, _, _), (_, _, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
            by_package[package_of(filename)] += tottime
            total += tottime
        print("own time by package:")
        for name, seconds in sorted(by_package.items(), key=lambda kv: -kv[1])[:25]:
            print(f"  {name:30} {seconds / total:6.1%}")


def timed(into: list[float], profiler: cProfile.Profile | None, call, *args, **kwargs):  # noqa: ANN001, ANN202
    started = time.thread_time()
    if profiler is not None:
        profiler.enable()
    try:
        return call(*args, **kwargs)
    finally:
        if profiler is not None:
            profiler.disable()
        into.append(time.thread_time() - started)


def package_of(filename: str) -> str:
    if "site-packages/" in filename:
        return filename.split("site-packages/", 1)[1].split("/", 1)[0]
    if filename.startswith(str(ROOT)):
        parts = Path(filename).relative_to(ROOT).parts
        return "/".join(parts[:2]) if len(parts) > 2 else parts[0]
    if filename.startswith("<") or filename == "~":
        return "builtins"
    return "stdlib:" + Path(filename).stem


if __name__ == "__main__":
    main()
