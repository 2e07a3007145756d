"""Action round trip under load: gunicorn + PostgreSQL + Redis on this machine.

    python bench/api_load.py [--players 50] [--seconds 60] [--workers 4] [--think 1.0] [--runs 1] [--limits]
                             [--legal-get] [--games-per-player N] [--profile DIR]

Starts gunicorn (``--workers`` sync workers; the machine's two cores are the budget for everything,
this client included), on a fresh PostgreSQL schema with Redis as the broker. Creates 2-player games and
runs ``--players`` bot players at once, each playing whichever seat its game waits for: think (``--think``
seconds on average, exponentially distributed; 0 for a stress test), submit a random legal action, repeat.
What the seat may do next comes with the step's answer (``legal_actions``) when the same seat acts again;
when the game passes to the other seat, that player reads ``GET .../legal-actions`` once, as a player
opening their link would. ``--legal-get`` plays as clients did before the answer carried them: a GET of
the legal actions before every step. When a game ends, its player goes on with a new one from a pool
created before the run (``--games-per-player``, by default 4 at think 0 so that no player runs out
within the window, else 1); the table says how many games ended and whether a player ran out.

The round trip timed is the action submission (HTTP → validate with the rules → commit with the outbox
rows), as a player's click would make it, and the server's own time for the same requests (gunicorn's
access log). Prints p50/p95/p99 latency and actions/s per run (``--runs``, each on new games against the
same server), the gunicorn workers' CPU time per step (user + system, every request of the run counted:
steadier than wall times on a shared machine), the load average around each run, and with several runs
their medians.

Each run is followed, on the same server and with the same players and think time, by a run against the
floor (``bench/floor.py``, mounted at ``/floor`` in the same gunicorn): a step that only locks the game's
row, inserts the event, updates the game and commits. The ratios of our figures to the floor's, run by run,
are the targets of ARCHITECTURE §8 (``--no-floor`` runs our side only). ``--profile DIR`` profiles the gunicorn
workers under the load (pyinstrument, every request they serve; the figures of such a run are not
comparable to others).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import queue
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402

import rules  # noqa: E402
from bench import floor  # noqa: E402
from bench.access_log import FORMAT, served_ms  # noqa: E402
from rules.bots import concrete  # noqa: E402

POSTGRES = os.environ.get("SMALLWORLD_BENCH_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
REDIS = os.environ.get("SMALLWORLD_BENCH_REDIS_URL", "redis://127.0.0.1:6379/8")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Client:
    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def call(self, method: str, path: str, body: object = None, token: str | None = None) -> tuple[int, dict]:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        payload = json.dumps(body) if body is not None else None
        self.connection.request(method, path, body=payload, headers=headers)
        response = self.connection.getresponse()
        data = response.read()
        return response.status, json.loads(data) if data else {}


def confirm_tokens(schema: str, first: int) -> list[str]:
    """The hosts' confirmation tokens of the games from ``first`` on, read from the outbox."""
    import sqlalchemy as sa

    engine = sa.create_engine(POSTGRES, connect_args={"options": f"-csearch_path={schema}"})
    with engine.connect() as connection:
        rows = connection.execute(
            sa.text("SELECT context FROM outbox WHERE template = 'confirm_game' AND game_id >= :first ORDER BY id"),
            {"first": first},
        ).all()
    engine.dispose()
    return [(c if isinstance(c, dict) else json.loads(c))["confirm_url"].rsplit("/", 1)[-1] for (c,) in rows]


def seat_tokens(schema: str) -> dict[int, dict[int, str]]:
    """The seats' turn tokens, as their mails carry them: minted from the seats when a mail is sent (ARCHITECTURE
    §6), with the key the server signs with."""
    import sqlalchemy as sa

    from service.domain.links import LinkMaker, Signer
    from service.infra.config import DEFAULT_SECRET_KEY

    links = LinkMaker(Signer([os.environ.get("SMALLWORLD_SECRET_KEY") or DEFAULT_SECRET_KEY]), "")
    engine = sa.create_engine(POSTGRES, connect_args={"options": f"-csearch_path={schema}"})
    with engine.connect() as connection:
        rows = connection.execute(
            sa.text(
                "SELECT s.game_id, s.seat, s.secret, p.links_serial FROM seats s JOIN players p ON p.id = s.player_id"
                " WHERE NOT s.removed ORDER BY s.game_id, s.seat"
            )
        ).all()
    engine.dispose()
    tokens: dict[int, dict[int, str]] = {}
    for game_id, seat, secret, serial in rows:
        tokens.setdefault(game_id, {})[seat] = links.turn_token(game_id, seat, secret, serial=serial)
    return tokens


@dataclass
class Tally:
    """What a run's players did, besides the timed steps."""

    latencies: list[float] = field(default_factory=list)
    errors: list = field(default_factory=list)
    #: Reads of the legal actions (``GET .../legal-actions``).
    reads: int = 0
    #: Games played to their end during the run, and players left without a game before the window ended.
    ended: int = 0
    starved: int = 0


def player(port: int, games: queue.Queue, stop: float, think: float, legal_get: bool, tally: Tally) -> None:
    """Plays both seats of a game from ``games``, then of the next one when it ends: the awaited seat
    acts. The step's answer says who is awaited next and, when it is the same seat, what it may do."""
    client = Client(port)
    while time.time() < stop:
        try:
            game_id, seats = games.get_nowait()
        except queue.Empty:
            tally.starved += 1
            return
        play_game(client, game_id, seats, stop, think, legal_get, tally)


def play_game(
    client: Client, game_id: int, seats: dict[int, str], stop: float, think: float, legal_get: bool, tally: Tally
) -> None:
    rnd = random.Random(game_id)
    status, view = client.call("GET", f"/api/games/{game_id}", token=seats[0])
    legal, legal_for = None, None
    while time.time() < stop and status == 200 and view["status"] == "active":
        seat = view["awaiting"][0]
        token = seats[seat]
        if legal is None or legal_for != seat or legal_get:
            _, legal = client.call("GET", f"/api/games/{game_id}/legal-actions", token=token)
            tally.reads += 1
        action = concrete(rules.Action.from_json(rnd.choice(legal["actions"])), rnd).to_json()
        if think:
            time.sleep(rnd.expovariate(1 / think))
        started = time.perf_counter()
        status, body = client.call(
            "POST", f"/api/games/{game_id}/actions", {"version": legal["version"], "action": action}, token
        )
        tally.latencies.append(time.perf_counter() - started)
        if status != 200:
            tally.errors.append((status, body))
            status, view = client.call("GET", f"/api/games/{game_id}", token=token)
            legal = None
        else:
            view, legal, legal_for = body["game"], body.get("legal_actions"), seat
    if status == 200 and view["status"] != "active":
        tally.ended += 1


def floor_player(port: int, game_id: int, stop: float, think: float, latencies: list, errors: list) -> None:
    """Steps of the floor on one game's row, with the same think time as ``player``."""
    client = Client(port)
    rnd = random.Random(game_id)
    step = {"type": "conquer", "player": 0, "region": 7}
    while time.time() < stop:
        if think:
            time.sleep(rnd.expovariate(1 / think))
        started = time.perf_counter()
        status, body = client.call("POST", f"/floor/games/{game_id}/actions", step)
        latencies.append(time.perf_counter() - started)
        if status != 200:
            errors.append((status, body))
            return


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--think", type=float, default=1.0, help="mean seconds a player thinks before a step")
    parser.add_argument("--runs", type=int, default=1, help="load runs against the same server (medians shown)")
    parser.add_argument("--no-floor", action="store_true", help="skip the floor's runs")
    parser.add_argument(
        "--limits",
        action="store_true",
        help="with the rate limiter on, counting in Redis as in production (per-address limits raised: this "
        "one client plays every seat; the per-seat step limit as configured, except at think 0 where a seat "
        "steps faster than any person: raised too, still counted)",
    )
    parser.add_argument(
        "--legal-get",
        action="store_true",
        help="read the legal actions with a GET before every step, as clients did before the step's answer "
        "carried them (for comparison)",
    )
    parser.add_argument(
        "--games-per-player",
        type=int,
        default=None,
        help="games created per player and run, played one after the other (default: 4 at think 0, else 1)",
    )
    parser.add_argument(
        "--profile",
        metavar="DIR",
        help="profile the gunicorn workers (pyinstrument, every request): a profile per worker in DIR at the end",
    )
    args = parser.parse_args()
    if args.games_per_player is None:
        args.games_per_player = 1 if args.think >= 0.5 else 4
    import sqlalchemy as sa

    schema = f"bench_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(POSTGRES)
    with admin.connect() as connection:
        connection.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        connection.commit()
    port = free_port()
    env = dict(
        os.environ,
        SMALLWORLD_DATABASE_URL=f"{POSTGRES}?options=-csearch_path%3D{schema}",
        SMALLWORLD_BROKER_URL=REDIS,
        SMALLWORLD_INSTANCE_PATH=f"/tmp/{schema}",
        # One client address plays every seat here: per-address limits would measure the limiter.
        SMALLWORLD_RATELIMIT_ENABLED="false",
    )
    if args.limits:
        env.update(
            SMALLWORLD_RATELIMIT_ENABLED="true",
            SMALLWORLD_RATELIMIT_STORAGE_URI=REDIS,
            SMALLWORLD_RATELIMIT_LINKS="1000000 per minute",
            SMALLWORLD_RATELIMIT_NEW_GAMES="1000000 per minute",
            SMALLWORLD_RATELIMIT_STRANGERS_PER_HOST="1000000 per day",
            SMALLWORLD_RATELIMIT_STRANGERS_PER_CLIENT="1000000 per day",
        )
        if not args.think:
            env.update(SMALLWORLD_RATELIMIT_ACTIONS="1000000 per minute")
    if args.profile:
        Path(args.profile).mkdir(parents=True, exist_ok=True)
        env.update(BENCH_PROFILE_DIR=str(Path(args.profile).resolve()))
    subprocess.run([sys.executable, "-m", "service", "db", "upgrade"], env=env, check=True, cwd=ROOT)
    access_log = Path(f"/tmp/{schema}/access.log")
    access_log.parent.mkdir(parents=True, exist_ok=True)
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(args.workers),
            "--log-level",
            "warning",
            # The server's own time per request (µs), to tell it from the client's share of the round trip.
            "--access-logfile",
            str(access_log),
            "--access-logformat",
            FORMAT,
            "bench.floor:combined()",
        ],
        env=env,
        cwd=ROOT,
        start_new_session=True,
    )
    try:
        for _ in range(100):
            try:
                if Client(port).call("GET", "/health")[0] in (200, 503):
                    break
            except OSError:
                time.sleep(0.2)
        workers = psutil.Process(server.pid).children()
        rows, floor_rows = [], []
        for run in range(args.runs):
            rows.append(run_once(port, schema, run, args, access_log, workers))
            if not args.no_floor:
                floor_rows.append(run_floor(port, schema, run, args, access_log, workers))
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(120 if args.profile else 10)  # profiled workers write their profiles as they exit
        with admin.connect() as connection:
            connection.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
            connection.commit()
        admin.dispose()
    print(
        f"# python bench/api_load.py --players {args.players} --seconds {args.seconds:g} "
        f"--workers {args.workers} --think {args.think:g} --runs {args.runs}{' --limits' * args.limits}"
        f"{' --no-floor' * args.no_floor}{' --legal-get' * args.legal_get} --games-per-player {args.games_per_player}"
        f"{f' --profile {args.profile}' if args.profile else ''}"
    )
    limiter = "rate limits counted in Redis" if args.limits else "rate limits off"
    print(f"# {os.cpu_count()} cores; gunicorn {args.workers} sync workers; PostgreSQL + Redis on 127.0.0.1; {limiter}")
    reads = "a GET of the legal actions before every step" if args.legal_get else "legal actions from the step's answer"
    print(f"# {reads}; games of 2 seats, {args.games_per_player} per player, played one after the other")
    print("# p50/p95/p99: the client's round trip of a step; server p50/p99: gunicorn's time for the same requests;")
    print("# CPU/step: the gunicorn workers' CPU time (user + system) over the run, every request, per step, ms;")
    print("# reads/step: legal-action GETs per step; ended: games played to their end; starved: players left")
    print("# without a game before the window ended (then fewer players than listed were stepping at the end)")
    header = (
        "run",
        "players",
        "actions",
        "actions/s",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "server p50",
        "server p99",
        "CPU/step",
        "reads/step",
        "ended",
        "starved",
        "errors",
        "load before/after",
    )
    print(" ".join(f"{h:>9}" for h in header))
    for row in rows:
        print(" ".join(f"{v:>9}" for v in row[:-1]))
        if row[-1]:
            print("  first errors:", row[-1][:3])
    if len(rows) > 1:
        medians = ["median", ""] + [statistics.median(float(r[i]) for r in rows) for i in range(2, 10)]
        print(" ".join(f"{v:>9.1f}" if isinstance(v, float) else f"{v:>9}" for v in medians))
    if floor_rows:
        print("# the floor, same server, players and think time, right after each run above")
        for row in floor_rows:
            print(" ".join(f"{v:>9}" for v in row[:-1]))
            if row[-1]:
                print("  first errors:", row[-1][:3])
        print("# ours / floor, run by run (targets, ARCHITECTURE §8: p50 ≤ 1.5×, p99 ≤ 2×; at think 0 steps/s ≥ 0.6×)")
        print(f"{'run':>9} {'p50':>9} {'p99':>9} {'server p50':>11} {'server p99':>11} {'steps/s':>9} {'CPU/step':>9}")
        ratios = []
        for ours, base in zip(rows, floor_rows, strict=True):
            r = [float(ours[i]) / float(base[i]) for i in (4, 6, 7, 8, 3, 9)]
            ratios.append(r)
            print(f"{ours[0]:>9} {r[0]:>9.2f} {r[1]:>9.2f} {r[2]:>11.2f} {r[3]:>11.2f} {r[4]:>9.2f} {r[5]:>9.2f}")
        if len(ratios) > 1:
            m = [statistics.median(r[i] for r in ratios) for i in range(6)]
            print(f"{'median':>9} {m[0]:>9.2f} {m[1]:>9.2f} {m[2]:>11.2f} {m[3]:>11.2f} {m[4]:>9.2f} {m[5]:>9.2f}")


def run_once(
    port: int, schema: str, run: int, args: argparse.Namespace, access_log: Path, workers: list[psutil.Process]
) -> tuple:
    """One load run on new games (``--games-per-player`` for each player); a row of the table (and the
    first errors, if any)."""
    client = Client(port)
    first = None
    for g in range(args.players * args.games_per_player):
        body = {
            "name": f"bench {run}.{g}",
            "players": [{"name": f"P{i}", "email": f"r{run}g{g}p{i}@example.org"} for i in range(2)],
            "settings": {"start_when_all_accepted": False},
        }
        status, created = client.call("POST", "/api/games", body)
        assert status == 201, created
        first = first or created["id"]
    for token in confirm_tokens(schema, first or 0):  # each host confirms their game: then it starts
        status, confirmed = client.call("POST", "/api/games/confirm", token=token)
        assert status == 200, confirmed
    tokens = {game_id: seats for game_id, seats in seat_tokens(schema).items() if game_id >= first}
    RUN_GAMES[run] = sorted(tokens)[: args.players]
    pool: queue.Queue = queue.Queue()
    for game_id in sorted(tokens):
        pool.put((game_id, tokens[game_id]))
    tally = Tally()
    load_before = os.getloadavg()[0]
    logged_before = access_log.stat().st_size
    cpu_before = cpu_seconds(workers)
    stop = time.time() + args.seconds
    threads = [
        threading.Thread(target=player, args=(port, pool, stop, args.think, args.legal_get, tally))
        for _ in range(args.players)
    ]
    started = time.time()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.time() - started
    cpu = cpu_seconds(workers) - cpu_before
    return table_row(run, args.players, tally, elapsed, load_before, access_log, logged_before, cpu)


def cpu_seconds(processes: list[psutil.Process]) -> float:
    """The CPU time (user + system) the processes have spent so far, in seconds."""
    return sum(sum(p.cpu_times()[:2]) for p in processes)


#: The games each run's players started on, by run: the floor's run steps on rows with the same ids.
RUN_GAMES: dict[int, list[int]] = {}


def run_floor(
    port: int, schema: str, run: int, args: argparse.Namespace, access_log: Path, workers: list[psutil.Process]
) -> tuple:
    """The floor's run after run ``run``: the same players and think time, each on its own game's row."""
    import sqlalchemy as sa

    games = RUN_GAMES[run]
    engine = sa.create_engine(POSTGRES, connect_args={"options": f"-csearch_path={schema}"})
    with engine.connect() as connection:
        state = connection.execute(sa.text("SELECT state FROM games WHERE id = :id"), {"id": games[0]}).scalar_one()
    engine.dispose()
    floor.prepare(POSTGRES, schema, games, state if isinstance(state, dict) else json.loads(state))
    tally = Tally()
    load_before = os.getloadavg()[0]
    logged_before = access_log.stat().st_size
    cpu_before = cpu_seconds(workers)
    stop = time.time() + args.seconds
    threads = [
        threading.Thread(target=floor_player, args=(port, game_id, stop, args.think, tally.latencies, tally.errors))
        for game_id in games
    ]
    started = time.time()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.time() - started
    cpu = cpu_seconds(workers) - cpu_before
    row = table_row(run, len(threads), tally, elapsed, load_before, access_log, logged_before, cpu)
    return (f"floor {run + 1}", *row[1:])


def table_row(
    run: int,
    players: int,
    tally: Tally,
    elapsed: float,
    load_before: float,
    access_log: Path,
    logged_before: int,
    cpu: float,
) -> tuple:
    """A row of the table from a run's round trips and the server's access log lines of its steps."""
    latencies = tally.latencies
    cuts = statistics.quantiles([x * 1000 for x in latencies], n=100)
    time.sleep(0.5)  # gunicorn writes its access log line after the answer
    with access_log.open() as log:
        log.seek(logged_before)
        served = served_ms(log, "POST", "/actions")
    server_cuts = statistics.quantiles(served, n=100)
    return (
        run + 1,
        players,
        len(latencies),
        f"{len(latencies) / elapsed:.1f}",
        f"{cuts[49]:.1f}",
        f"{cuts[94]:.1f}",
        f"{cuts[98]:.1f}",
        f"{server_cuts[49]:.1f}",
        f"{server_cuts[98]:.1f}",
        f"{1000 * cpu / len(latencies):.2f}",
        f"{tally.reads / len(latencies):.2f}",
        tally.ended,
        tally.starved,
        len(tally.errors),
        f"{load_before:.1f}/{os.getloadavg()[0]:.1f}",
        tally.errors,
    )


if __name__ == "__main__":
    main()
