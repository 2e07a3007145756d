"""The deadline sweep with a million stored games: nothing due, then 10,000 due auto-passes by real workers.

    .venv/bin/python bench/sweep.py [--games 1000000] [--due 10000] [--runs 5] [--calls 200] [--profile 300]
                                    [--due-runs 3] [--workers 2] [--concurrency 2] [--sweep-seconds 2]

Needs PostgreSQL (``--postgres``, default ``postgresql+psycopg://postgres@127.0.0.1:5432/test``) and Redis
(``--redis``, default ``redis://127.0.0.1:6379/7``: a database of its own, emptied before and after).
ARCHITECTURE §8's target: "deadline sweep with 1,000,000 stored games: < 10 ms when nothing is due; 10,000 due
auto-passes processed in < 60 s".

1. **Data.** A fresh schema, the migrations (``service.infra.db.upgrade_database``), then ``--games`` games with
   their seats and players, COPYed in: a handful of real states played by ``rules.bots.random_player`` for
   2–5 players (mid-game for active and paused games, played out for finished ones) reused by every row.
   Statuses as a live site has them (most games finished, about a third active, a few paused, inviting or
   cancelled); active deadlines spread over the next days (none within ``MARGIN``, so nothing falls due
   while the benchmark runs). Then VACUUM ANALYZE, which autovacuum does on a real site.
2. **Nothing due.** ``service.domain.deadlines.sweep`` (the code the Celery task runs) called ``--calls``
   times per run, ``--runs`` runs: median and p95 per run, the median of those; the same for its
   due-games query alone, and for one bare round trip to the server (``SELECT 1``), for scale. Then the
   round trips of one sweep, and ``EXPLAIN (ANALYZE, BUFFERS)`` of every statement it sends to ``games``,
   captured as it ran.
3. **Profile** (``--profile N``, 0 to skip): N games made due and swept here, timed: wall, this process's
   CPU and the PostgreSQL backend's (from ``/proc``, when the server runs on this machine) and round trips
   per auto-pass; then N more under cProfile.
4. **10,000 due.** ``--workers`` ``smallworld worker`` processes (``-Q celery``: the deadline queue, as
   deploy/ runs them; the mail they cause stays in the outbox, delivery is its own target) and ``smallworld
   beat`` with ``SMALLWORLD_SWEEP_SECONDS=--sweep-seconds`` on Redis, so that sweeps overlap on every pool
   process; once a sweep has run, ``--due`` random active games get a deadline in the past in one UPDATE,
   and the clock runs until the last is auto-passed. Then a few more sweeps, and the checks: exactly one
   auto-pass per due game, each game's version moved by one, the auto-pass mail of each in the outbox, no
   other game touched. ``--due-runs`` times, with the same workers. The CPU the workers and their
   PostgreSQL backends used is counted, so a run on a busy machine still says what an auto-pass costs.

Prints a table and the command line that reproduces it. The schema is dropped and the Redis database
emptied at the end, also on Ctrl-C; exits 1 if an auto-pass was missing or repeated.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import random
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402
import psycopg  # noqa: E402
import redis  # noqa: E402
from sqlalchemy import create_engine, event, make_url, text  # noqa: E402

import rules  # noqa: E402
from rules.bots import random_player  # noqa: E402
from service.domain.clock import next_reminder_at  # noqa: E402
from service.domain.play import step_key  # noqa: E402
from service.domain.schemas import GameSettings  # noqa: E402
from service.infra.db import upgrade_database  # noqa: E402

SMALLWORLD = str(Path(sys.executable).parent / "smallworld")
HOUR = 3600
#: No deadline or reminder of the generated games falls due within this time of the generation.
MARGIN = timedelta(hours=3)
#: Statuses of the stored games, by share: most games on a site that has run for a while are over.
STATUSES = [("finished", 0.58), ("active", 0.33), ("paused", 0.04), ("inviting", 0.04), ("cancelled", 0.01)]
#: Turn lengths hosts choose, by share.
TURN_LENGTHS = [(24 * HOUR, 0.25), (48 * HOUR, 0.5), (72 * HOUR, 0.15), (7 * 24 * HOUR, 0.10)]
TARGET_NOTHING_DUE_MS = 10.0
TARGET_DUE_SECONDS = 60.0


# -- helpers ----------------------------------------------------------------------------------------------
def copy_text(value: str | None) -> str:
    """A value in PostgreSQL's COPY text format."""
    if value is None:
        return "\\N"
    return value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def iso(moment: datetime) -> str:
    return moment.isoformat()


def copy_time(moment: datetime | None) -> str:
    return "\\N" if moment is None else moment.isoformat()


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def pick(rnd: random.Random, shares: list[tuple[Any, float]]) -> Any:
    x = rnd.random()
    for value, share in shares:
        x -= share
        if x < 0:
            return value
    return shares[-1][0]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def machine() -> str:
    memory = "?"
    with suppress(OSError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    return f"{os.cpu_count()} CPUs (nproc), {memory} memory, Python {platform.python_version()}"


# -- 1. the data ------------------------------------------------------------------------------------------
class Template:
    """A real rules state, and what a game row holding it needs."""

    def __init__(self, players: int, seed: str, redeploy: str, finished: bool, rnd: random.Random) -> None:
        state = rules.new_game(players, seed=seed, options={"redeploy": redeploy})
        steps = 0
        stop_turn = rnd.randint(2, 8)
        while not state.over and (finished or state.turn < stop_turn or not rules.awaiting(state)):
            state = rules.apply(state, random_player(state, rnd))
            steps += 1
        self.players = players
        self.redeploy = redeploy
        self.version = 1 + steps  # starting the game is version 1, each step one more
        self.state = copy_text(dumps(state.to_json()))
        self.size = len(dumps(state.to_json()))
        self.defending = state.phase == "defend"
        self.step_key = None if finished else step_key(state)
        names = {seat: f"Player {seat + 1}" for seat in range(players)}
        self.result = (
            copy_text(dumps([row | {"name": names[row["player"]]} for row in rules.final_standings(state)]))
            if finished
            else None
        )


def make_templates(seed: int) -> tuple[dict[int, list[Template]], dict[int, list[Template]]]:
    """A few mid-game and played-out states for each number of players."""
    rnd = random.Random(seed)
    playing: dict[int, list[Template]] = {}
    over: dict[int, list[Template]] = {}
    for players in (2, 3, 4, 5):
        playing[players] = [
            Template(players, f"bench-{seed}-{players}-{n}", "ask" if n == 3 else "auto", False, rnd) for n in range(4)
        ]
        over[players] = [Template(players, f"bench-{seed}-{players}-over-{n}", "auto", True, rnd) for n in range(2)]
    return playing, over


def generate(conninfo: str, schema: str, games: int, seed: int) -> dict[str, Any]:
    """COPY ``games`` games with their seats and players into ``schema``; returns counts and timings."""
    started = time.monotonic()
    rnd = random.Random(seed)
    playing, over = make_templates(seed)
    templates_seconds = time.monotonic() - started
    now = datetime.now(UTC)
    players_count = max(100, games // 3)  # a player sits in about ten games over time
    settings_text: dict[tuple[int, str], str] = {}
    for length, _ in TURN_LENGTHS:
        for redeploy in ("auto", "ask"):
            settings = GameSettings.model_validate({"turn_length_seconds": length, "redeploy": redeploy}).model_dump()
            settings_text[(length, redeploy)] = copy_text(dumps(settings))
    offsets = GameSettings.model_validate({}).reminders_before_seconds
    counts = dict.fromkeys([s for s, _ in STATUSES], 0)
    seats_total = 0
    with psycopg.connect(conninfo, options=f"-csearch_path={schema}", autocommit=True) as connection:
        cursor = connection.cursor()
        copy_started = time.monotonic()
        with cursor.copy(
            "COPY players (id, email, display_name, time_zone, wants_reminders, wants_notices, created_at) FROM STDIN"
        ) as copy:
            zones = ["UTC", "Europe/Paris", "America/New_York", "Asia/Tokyo", "Australia/Sydney"]
            created = iso(now - timedelta(days=400))
            chunk: list[str] = []
            for pid in range(1, players_count + 1):
                wants = "t" if pid % 7 else "f"  # some turned reminders off
                chunk.append(f"{pid}\tplayer{pid}@example.org\tPlayer {pid}\t{zones[pid % 5]}\t{wants}\tt\t{created}\n")
                if len(chunk) >= 20_000:
                    copy.write("".join(chunk))
                    chunk.clear()
            copy.write("".join(chunk))
        seat_id = 0
        seat_rows: list[str] = []
        game_rows: list[str] = []

        def flush_rows(copy_games: Any) -> None:
            copy_games.write("".join(game_rows))
            game_rows.clear()

        with cursor.copy(
            "COPY games (id, name, status, settings, state, version, seed, admin_secret, host_email, step_key,"
            " announced_key, created_at, started_at, finished_at, step_started_at, deadline_at, reminders_due_at,"
            " paused_remaining, pause_reason, result) FROM STDIN"
        ) as copy:
            for gid in range(1, games + 1):
                status = pick(rnd, STATUSES)
                counts[status] += 1
                n = rnd.choice((2, 3, 3, 4, 4, 5))
                template = rnd.choice(over[n] if status == "finished" else playing[n])
                length = pick(rnd, TURN_LENGTHS)
                created_at = now - timedelta(seconds=rnd.randint(3600, 300 * 24 * HOUR))
                started_at: datetime | None = None
                finished_at: datetime | None = None
                step_started: datetime | None = None
                deadline: datetime | None = None
                reminders: datetime | None = None
                paused_remaining: int | None = None
                pause_reason: str | None = None
                version = template.version
                state: str | None = template.state
                step: str | None = template.step_key
                result: str | None = None
                if status == "inviting":
                    state = step = None
                    version = 0
                else:
                    started_at = created_at + timedelta(hours=rnd.randint(1, 72))
                if status == "active":
                    turn = 12 * HOUR if template.defending else length
                    deadline = now + MARGIN + timedelta(seconds=rnd.randint(0, turn))
                    step_started = deadline - timedelta(seconds=turn)
                    reminders = next_reminder_at(deadline, offsets, now + MARGIN)
                elif status == "paused":
                    paused_remaining = rnd.randint(HOUR, length)
                    pause_reason = "The host paused the game"
                elif status == "finished":
                    finished_at = now - timedelta(seconds=rnd.randint(HOUR, 200 * 24 * HOUR))
                    result = template.result
                    step = None
                elif status == "cancelled":
                    step = None
                first = rnd.randrange(players_count)
                stride = 1 + rnd.randrange(players_count // 6 or 1)
                seat_players = [(first + k * stride) % players_count + 1 for k in range(n)]
                accepted = iso(created_at + timedelta(minutes=30)) if status != "inviting" else None
                for seat in range(n):
                    seat_id += 1
                    seat_rows.append(
                        f"{seat_id}\t{gid}\t{seat_players[seat]}\t{seat}\t{rnd.getrandbits(128):032x}\t"
                        f"{copy_text(accepted)}\tf\t0\n"
                    )
                game_rows.append(
                    "\t".join(
                        [
                            str(gid),
                            f"Game {gid}",
                            status,
                            settings_text[(length, template.redeploy)],
                            state if state is not None else "\\N",
                            str(version),
                            f"{rnd.getrandbits(128):032x}",
                            f"{rnd.getrandbits(144):036x}",
                            f"player{seat_players[0]}@example.org",
                            copy_text(step),
                            copy_text(step),  # announced: the stored games' steps were told long ago
                            iso(created_at),
                            copy_time(started_at),
                            copy_time(finished_at),
                            copy_time(step_started),
                            copy_time(deadline),
                            copy_time(reminders),
                            copy_text(None if paused_remaining is None else str(paused_remaining)),
                            copy_text(pause_reason),
                            result if result is not None else "\\N",
                        ]
                    )
                    + "\n"
                )
                if len(game_rows) >= 5_000:
                    flush_rows(copy)
            flush_rows(copy)
        games_seconds = time.monotonic() - copy_started
        seats_started = time.monotonic()
        with cursor.copy(
            "COPY seats (id, game_id, player_id, seat, secret, accepted_at, removed, vacation_used_seconds) FROM STDIN"
        ) as copy:
            for start in range(0, len(seat_rows), 20_000):
                copy.write("".join(seat_rows[start : start + 20_000]))
        seats_total = len(seat_rows)
        seat_rows.clear()
        seats_seconds = time.monotonic() - seats_started
        for table in ("players", "games", "seats"):
            cursor.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
        vacuum_started = time.monotonic()
        # Autovacuum does this on a live site (this machine's server runs with autovacuum off).
        for table in ("players", "games", "seats", "actions", "outbox", "service_status"):
            cursor.execute(f"VACUUM (ANALYZE) {table}")
        vacuum_seconds = time.monotonic() - vacuum_started
        cursor.execute(
            "SELECT pg_size_pretty(pg_total_relation_size('games')), pg_size_pretty(pg_total_relation_size('seats'))"
        )
        games_size, seats_size = cursor.fetchone()  # type: ignore[misc]
    sizes = [t.size for ts in playing.values() for t in ts]
    return {
        "counts": counts,
        "players": players_count,
        "seats": seats_total,
        "templates": sum(len(t) for t in playing.values()) + sum(len(t) for t in over.values()),
        "state_bytes": (min(sizes), max(sizes)),
        "templates_seconds": templates_seconds,
        "games_seconds": games_seconds,
        "seats_seconds": seats_seconds,
        "vacuum_seconds": vacuum_seconds,
        "total_seconds": time.monotonic() - started,
        "games_size": games_size,
        "seats_size": seats_size,
    }


# -- 2. nothing due ---------------------------------------------------------------------------------------
@contextmanager
def captured_statements(engine: Any) -> Iterator[list[tuple[str, Any]]]:
    """Every statement sent while inside, with its parameters; the pool's checkouts (each a ping at most:
    ``service.infra.db`` pings a PostgreSQL connection it takes from the pool when it was idle for more than
    ``PING_AFTER_IDLE_SECONDS`` or its socket has something to read, a SQLite one always) and the transactions'
    ends are counted as ``("checkout", None)``, ``("commit", None)`` and ``("rollback", None)``."""
    statements: list[tuple[str, Any]] = []

    def record(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool) -> None:
        statements.append((statement, parameters))

    def counter(name: str) -> Any:
        return lambda *_: statements.append((name, None))

    listeners = [
        (engine, "before_cursor_execute", record),
        (engine.pool, "checkout", counter("checkout")),
        (engine, "commit", counter("commit")),
        (engine, "rollback", counter("rollback")),
    ]
    for target, name, listener in listeners:
        event.listen(target, name, listener)
    try:
        yield statements
    finally:
        for target, name, listener in listeners:
            event.remove(target, name, listener)


def round_trips(statements: list[tuple[str, Any]], per: int = 1) -> str:
    """What the captured statements cost in round trips to the server (a BEGIN precedes each transaction),
    per sweep or, with ``per``, per game."""
    checkouts = sum(1 for s, p in statements if s == "checkout" and p is None) / per
    ends = sum(1 for s, p in statements if s in ("commit", "rollback") and p is None) / per
    sent = len(statements) / per - checkouts - ends
    return (
        f"{sent:.3g} statements + {ends:.3g} BEGIN + {ends:.3g} COMMIT/ROLLBACK + {checkouts:.3g} pre-pings at most"
        f" = {sent + 2 * ends + checkouts:.3g} round trips"
    )


def backend_cpu(pid: int) -> float | None:
    """CPU seconds used so far by PostgreSQL's backend process ``pid`` (when the server runs here)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure_nothing_due(app: Any, runs: int, calls: int) -> dict[str, Any]:
    from service.domain import deadlines
    from service.infra.db import get_engine, get_session

    links = app.extensions["smallworld.links"]
    outage_after = timedelta(seconds=app.config["OUTAGE_GUARD_SECONDS"])
    sweep_runs: list[tuple[float, float]] = []
    query_runs: list[tuple[float, float]] = []
    trip_runs: list[tuple[float, float]] = []
    loads: list[str] = []
    with app.app_context():
        session = get_session()
        deadlines.sweep(session, links, outage_after=outage_after)  # records the sweep time: no outage next
        # One round trip to the server (SELECT 1 outside any transaction), for scale: the sweep makes 6.
        raw = get_engine(app).raw_connection()
        raw.driver_connection.autocommit = True  # type: ignore[union-attr]
        for _ in range(runs):
            sweeps: list[float] = []
            queries: list[float] = []
            trips: list[float] = []
            for _ in range(calls):
                started = time.perf_counter()
                raw.driver_connection.execute("SELECT 1")  # type: ignore[union-attr]
                trips.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                report = deadlines.sweep(session, links, outage_after=outage_after)
                sweeps.append((time.perf_counter() - started) * 1000)
                if report.auto_passed or report.reminders or report.pushed_back or report.errors:
                    raise SystemExit(f"something was due, the data is wrong: {report}")
                # The due-games query alone, as the sweep runs it (one SELECT, then the rollback).
                started = time.perf_counter()
                deadlines._auto_pass_due(
                    session,
                    links,
                    datetime.now(UTC),
                    time.monotonic() + 5,
                    deadlines.SweepReport(now=datetime.now(UTC)),
                )
                queries.append((time.perf_counter() - started) * 1000)
            sweep_runs.append((statistics.median(sweeps), percentile(sweeps, 95)))
            query_runs.append((statistics.median(queries), percentile(queries, 95)))
            trip_runs.append((statistics.median(trips), percentile(trips, 95)))
            loads.append(load_average())
        raw.driver_connection.autocommit = False  # type: ignore[union-attr]
        raw.close()
        engine = get_engine(app)
        with captured_statements(engine) as statements:
            deadlines.sweep(session, links, outage_after=outage_after)
        plans = []
        with engine.connect() as connection:
            for statement, parameters in statements:
                if (
                    parameters is not None
                    and statement.lstrip().upper().startswith("SELECT")
                    and "FROM games" in statement
                ):
                    rows = connection.exec_driver_sql("EXPLAIN (ANALYZE, BUFFERS) " + statement, parameters).scalars()
                    plans.append((statement, parameters, list(rows)))
            connection.rollback()
    return {
        "sweep": sweep_runs,
        "query": query_runs,
        "trip": trip_runs,
        "loads": loads,
        "plans": plans,
        "round_trips": round_trips(statements),
    }


# -- 3. a profile of one sweep ----------------------------------------------------------------------------
def make_due(conninfo: str, schema: str, count: int, seed: int, exclude: Collection[int] = ()) -> dict[int, int]:
    """Give ``count`` random active games a deadline in the past; their ids and versions."""
    rnd = random.Random(seed)
    with psycopg.connect(conninfo, options=f"-csearch_path={schema}") as connection:
        excluded = set(exclude)
        ids = [
            row[0]
            for row in connection.execute(
                "SELECT id FROM games WHERE status = 'active' AND deadline_at > now() ORDER BY id"
            ).fetchall()
            if row[0] not in excluded
        ]
        if count > len(ids):
            raise SystemExit(f"{count} due games asked for, only {len(ids)} active games to choose from: more --games")
        chosen = sorted(rnd.sample(ids, count))
        rows = connection.execute(
            "UPDATE games SET deadline_at = now() - make_interval(secs => 1 + (id %% 600)), reminders_due_at = NULL"
            " WHERE id = ANY(%s) RETURNING id, version",
            (chosen,),
        ).fetchall()
        connection.commit()
    return dict(rows)


def profile_one_sweep(app: Any, conninfo: str, schema: str, count: int, seed: int) -> dict[str, Any]:
    """Two sweeps of ``count`` due games each, in this process: one timed (wall, this process's CPU, the
    PostgreSQL backend's CPU, round trips), one under cProfile (where the time goes)."""
    from service.domain import deadlines
    from service.infra.db import get_engine, get_session

    links = app.extensions["smallworld.links"]
    due = make_due(conninfo, schema, count, seed)
    with app.app_context():
        session = get_session()
        pid = session.execute(text("SELECT pg_backend_pid()")).scalar_one()
        session.rollback()
        backend_before = backend_cpu(pid)
        cpu_before, started = time.process_time(), time.perf_counter()
        with captured_statements(get_engine(app)) as statements:
            report = deadlines.sweep(session, links, outage_after=timedelta(hours=1))
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_before
        backend_after = backend_cpu(pid)
        same_backend = session.execute(text("SELECT pg_backend_pid()")).scalar_one() == pid
        session.rollback()
    passed = max(1, report.auto_passed)
    backend = (
        (backend_after - backend_before) * 1000 / passed
        if backend_before is not None and backend_after is not None and same_backend
        else None
    )
    per_game = round_trips(statements, passed)
    due |= make_due(conninfo, schema, count, seed + 1, set(due))
    profiler = cProfile.Profile()
    with app.app_context():
        profiler.enable()
        profiled = deadlines.sweep(get_session(), links, outage_after=timedelta(hours=1))
        profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(r"service/|worker/|kombu/messaging", 30)
    return {
        "report": report,
        "profiled": profiled,
        "seconds": seconds,
        "wall_ms": seconds * 1000 / passed,
        "cpu_ms": cpu * 1000 / passed,
        "backend_ms": backend,
        "round_trips": per_game,
        "profile": out.getvalue(),
        "ids": set(due),
    }


# -- 4. 10,000 due, real workers --------------------------------------------------------------------------
def run_workers(
    args: argparse.Namespace,
    folder: Path,
    database_url: str,
    conninfo: str,
    schema: str,
    seed: int,
    exclude: set[int],
) -> dict[str, Any]:
    """Start the workers and beat (instance folder and logs in ``folder``), then ``--due-runs`` times: make
    ``--due`` games due and time their auto-passes."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("SMALLWORLD_")}
    application = f"{schema}_workers"
    worker_url = make_url(database_url).update_query_dict({"application_name": application})
    env.update(
        SMALLWORLD_INSTANCE_PATH=str(folder),
        SMALLWORLD_DATABASE_URL=worker_url.render_as_string(hide_password=False),
        SMALLWORLD_BROKER_URL=args.redis,
        SMALLWORLD_MAIL_DIR=str(folder / "mail"),
        SMALLWORLD_SWEEP_SECONDS=str(args.sweep_seconds),
    )
    logs: list[Path] = []
    processes: list[subprocess.Popen[bytes]] = []

    def start(name: str, command: list[str]) -> None:
        logs.append(folder / f"{name}.log")
        with logs[-1].open("wb") as log:
            processes.append(
                subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            )

    for n in range(args.workers):
        start(
            f"worker{n}",
            [SMALLWORLD, "worker", "-Q", args.queues, "--concurrency", str(args.concurrency),
             "--loglevel", "INFO", "--hostname", f"bench-sweep{n}@%h"],
        )  # fmt: skip
    start("beat", [SMALLWORLD, "beat", "--loglevel", "INFO"])
    runs: list[dict[str, Any]] = []
    used = set(exclude)
    try:
        with psycopg.connect(conninfo, options=f"-csearch_path={schema}", autocommit=True) as connection:

            def last_sweep() -> datetime | None:
                row = connection.execute("SELECT at FROM service_status WHERE name = 'last_deadline_sweep'").fetchone()
                return row[0] if row else None

            # Ready: every worker process is up, and a sweep has run since they started.
            before = last_sweep()
            deadline = time.monotonic() + 120
            while last_sweep() == before:
                if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
                    raise SystemExit("the workers did not start sweeping; see " + ", ".join(map(str, logs)))
                time.sleep(0.2)
            time.sleep(2 * args.sweep_seconds)
            workers = [psutil.Process(p.pid) for p in processes[: args.workers]]

            def cpu_used() -> dict[str, float]:
                """CPU seconds so far of the worker processes (with their pool) and of their server backends."""
                used = {}
                for worker in workers:
                    for process in [worker, *worker.children(recursive=True)]:
                        with suppress(psutil.Error):
                            times = process.cpu_times()
                            used[f"worker {process.pid}"] = times.user + times.system
                backends = connection.execute(
                    "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (application,)
                ).fetchall()
                for (pid,) in backends:
                    cpu = backend_cpu(pid)
                    if cpu is not None:
                        used[f"backend {pid}"] = cpu
                return used

            for run in range(args.due_runs):
                print(f"  run {run + 1} of {args.due_runs}", flush=True)
                runs.append(one_due_run(args, connection, conninfo, schema, seed + 1 + run, used, cpu_used))
                used |= set(runs[-1]["due"])
    finally:
        for process in processes:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    text_of_logs = [path.read_text(errors="replace") for path in logs]
    errors = sum(text.count("deadline.auto_pass_failed") for text in text_of_logs)
    swept = [line for text in text_of_logs for line in text.splitlines() if "deadline.swept" in line]
    raced = sum(int(part.split("=")[1]) for line in swept for part in line.split() if part.startswith("raced="))
    return {"runs": runs, "errors": errors, "raced": raced, "logs": logs}


def one_due_run(
    args: argparse.Namespace,
    connection: psycopg.Connection[Any],
    conninfo: str,
    schema: str,
    seed: int,
    used: set[int],
    cpu_used: Callable[[], dict[str, float]],
) -> dict[str, Any]:
    first_action = connection.execute("SELECT coalesce(max(id), 0) FROM actions").fetchone()[0]  # type: ignore[index]
    load_before = load_average()
    cpu_before = cpu_used()
    due = make_due(conninfo, schema, args.due, seed, used)
    started = time.monotonic()
    first_seen: float | None = None
    done = 0
    reported = -5.0
    while done < args.due and time.monotonic() - started < args.timeout:
        time.sleep(0.2)
        done = connection.execute(
            "SELECT count(*) FROM actions WHERE id > %s AND kind = 'auto_pass'", (first_action,)
        ).fetchone()[0]  # type: ignore[index]
        elapsed = time.monotonic() - started
        if done and first_seen is None:
            first_seen = elapsed
        if elapsed - reported >= 5:
            reported = elapsed
            print(f"    {elapsed:6.1f} s: {done:6d} auto-passed (load {load_average()})", flush=True)
    wall = time.monotonic() - started
    load_after = load_average()
    cpu_after = cpu_used()
    workers_cpu = sum(v - cpu_before.get(k, 0.0) for k, v in cpu_after.items() if k.startswith("worker"))
    backends_cpu = sum(v - cpu_before.get(k, 0.0) for k, v in cpu_after.items() if k.startswith("backend"))
    time.sleep(3 * args.sweep_seconds + 2)  # more sweeps: a second auto-pass of a game would show now
    checks = check(connection, due, first_action)
    print(
        f"    all {done:,} in {wall:.1f} s ({done / wall:.0f}/s); CPU: workers {workers_cpu:.1f} s, their PostgreSQL"
        f" backends {backends_cpu:.1f} s = {(workers_cpu + backends_cpu) * 1000 / max(1, done):.1f} ms per auto-pass,"
        f" {(workers_cpu + backends_cpu) / wall:.2f} of {os.cpu_count()} CPUs on average",
        flush=True,
    )
    print("    " + ", ".join(f"{name} {value}" for name, value in checks.items()), flush=True)
    return {
        "due": due,
        "wall": wall,
        "done": done,
        "first_seen": first_seen or 0.0,
        "checks": checks,
        "loads": (load_before, load_after),
        "cpu": (workers_cpu, backends_cpu),
    }


def check(connection: psycopg.Connection[Any], due: dict[int, int], first_action: int) -> dict[str, Any]:
    ids = sorted(due)
    passes = dict(
        connection.execute(
            "SELECT game_id, count(*) FROM actions WHERE id > %s AND kind = 'auto_pass' GROUP BY game_id",
            (first_action,),
        ).fetchall()
    )
    versions = dict(connection.execute("SELECT id, version FROM games WHERE id = ANY(%s)", (ids,)).fetchall())
    action_versions = dict(
        connection.execute(
            "SELECT game_id, version FROM actions WHERE id > %s AND kind = 'auto_pass'", (first_action,)
        ).fetchall()
    )
    mails = connection.execute(
        "SELECT count(*), count(DISTINCT game_id) FROM outbox WHERE template = 'auto_passed' AND game_id = ANY(%s)",
        (ids,),
    ).fetchone()
    other_mails = connection.execute(
        "SELECT count(*) FROM outbox WHERE template <> 'auto_passed' AND game_id = ANY(%s)", (ids,)
    ).fetchone()[0]  # type: ignore[index]
    still_due = connection.execute(
        "SELECT count(*) FROM games WHERE status = 'active' AND deadline_at <= now()"
    ).fetchone()[0]  # type: ignore[index]
    return {
        "games_passed_once": sum(1 for g in ids if passes.get(g) == 1),
        "games_passed_more": sum(1 for g in ids if passes.get(g, 0) > 1),
        "games_not_passed": sum(1 for g in ids if g not in passes),
        "other_games_passed": sum(1 for g in passes if g not in due),
        "versions_moved_by_one": sum(
            1 for g in ids if versions[g] == due[g] + 1 and action_versions.get(g) == due[g] + 1
        ),
        "auto_pass_mails": mails[0] if mails else 0,
        "games_with_auto_pass_mail": mails[1] if mails else 0,
        "other_mails": other_mails,
        "still_due": still_due,
    }


# -- main -------------------------------------------------------------------------------------------------
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--due", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5, help="runs of the nothing-due sweep (medians are shown)")
    parser.add_argument("--calls", type=int, default=200, help="sweeps per run")
    parser.add_argument("--profile", type=int, default=300, help="games due for the profiled sweep (0: none)")
    parser.add_argument("--due-runs", type=int, default=3, help="runs of the due phase (the median is shown)")
    parser.add_argument("--workers", type=int, default=2, help="smallworld worker processes")
    parser.add_argument("--concurrency", type=int, default=2, help="pool processes per worker")
    parser.add_argument("--queues", default="celery", help="queues the workers consume (celery,mail: deliver too)")
    parser.add_argument("--sweep-seconds", type=float, default=2, help="SMALLWORLD_SWEEP_SECONDS of beat")
    parser.add_argument("--timeout", type=float, default=600, help="give up a due run after this long")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-workers", action="store_true", help="stop after the nothing-due sweep and profile")
    parser.add_argument("--postgres", default="postgresql+psycopg://postgres@127.0.0.1:5432/test")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/7")
    args = parser.parse_args()

    def interrupted(signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # also when started in the background (ignored)
    command = " ".join([".venv/bin/python bench/sweep.py", shlex.join(sys.argv[1:])]).strip()
    schema = f"bench_sweep_{uuid.uuid4().hex[:10]}"
    base = make_url(args.postgres)
    database_url = base.update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(hide_password=False)
    conninfo = base.set(drivername="postgresql").render_as_string(hide_password=False)
    admin = create_engine(args.postgres)
    broker = redis.Redis.from_url(args.redis)
    broker.flushdb()
    with admin.connect() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
        connection.commit()
        server = connection.execute(text("SHOW server_version")).scalar()
    results: dict[str, Any] = {"server": server}
    print(f"machine: {machine()}, PostgreSQL {server}; load average {load_average()}")
    print(f"schema {schema}")
    folders: list[Path] = []
    failed = interrupted_by_user = False
    try:
        engine = create_engine(database_url)
        upgrade_database(engine)
        engine.dispose()
        print(f"generating {args.games:,} games…", flush=True)
        data = generate(conninfo, schema, args.games, args.seed)
        results["data"] = data
        print(
            f"  {data['templates']} template states ({data['state_bytes'][0]}–{data['state_bytes'][1]} bytes of"
            f" JSON mid-game) in {data['templates_seconds']:.1f} s; games COPY {data['games_seconds']:.1f} s"
            f" ({data['games_size']}); {data['seats']:,} seats COPY {data['seats_seconds']:.1f} s"
            f" ({data['seats_size']}); {data['players']:,} players; VACUUM ANALYZE {data['vacuum_seconds']:.1f} s;"
            f" total {data['total_seconds']:.1f} s"
        )
        print("  statuses: " + ", ".join(f"{status} {count:,}" for status, count in data["counts"].items()))

        from service import create_app

        folders.append(Path(tempfile.mkdtemp(prefix="smallworld-bench-sweep-app-")))
        app = create_app(
            {
                "DATABASE_URL": database_url,
                "BROKER_URL": args.redis,
                "INSTANCE_PATH": str(folders[-1]),
                "MAIL_DIR": str(folders[-1] / "mail"),
            }
        )
        print(f"nothing due: {args.runs} runs of {args.calls} sweeps…", flush=True)
        idle = measure_nothing_due(app, args.runs, args.calls)
        results["idle"] = idle
        for n, ((sweep_median, sweep_p95), (query_median, query_p95), (trip_median, trip_p95), load) in enumerate(
            zip(idle["sweep"], idle["query"], idle["trip"], idle["loads"], strict=True), 1
        ):
            print(
                f"  run {n}: sweep median {sweep_median:.2f} ms, p95 {sweep_p95:.2f} ms;"
                f" due-games query median {query_median:.2f} ms, p95 {query_p95:.2f} ms;"
                f" one round trip median {trip_median:.2f} ms, p95 {trip_p95:.2f} ms (load {load})"
            )
        print(f"  one sweep: {idle['round_trips']}")
        print("plans of the sweep's queries on games (EXPLAIN ANALYZE, BUFFERS):")
        for statement, parameters, plan in idle["plans"]:
            print("  " + " ".join(statement.split()))
            print(f"    parameters: {parameters}")
            for line in plan:
                print("    " + line)

        profiled_ids: set[int] = set()
        if args.profile:
            print(f"profile: sweeps in this process with {args.profile} games due…", flush=True)
            profile = profile_one_sweep(app, conninfo, schema, args.profile, args.seed + 7)
            results["profile"] = profile
            profiled_ids = profile["ids"]
            backend = f"{profile['backend_ms']:.2f} ms" if profile["backend_ms"] is not None else "unknown"
            print(
                f"  {profile['report'].auto_passed} auto-passed in {profile['seconds']:.2f} s: per game"
                f" {profile['wall_ms']:.2f} ms wall, {profile['cpu_ms']:.2f} ms CPU here, {backend} CPU in the"
                f" PostgreSQL backend; {profile['round_trips']} (load {load_average()})"
            )
            print(f"  under cProfile ({profile['profiled'].auto_passed} auto-passed), cumulative:")
            print("\n".join("  " + line for line in profile["profile"].splitlines() if line.strip()))

        if not args.skip_workers:
            print(
                f"{args.due:,} due: {args.workers} workers × {args.concurrency} processes on {args.queues},"
                f" beat every {args.sweep_seconds} s…",
                flush=True,
            )
            folders.append(Path(tempfile.mkdtemp(prefix="smallworld-bench-sweep-workers-")))
            due = run_workers(args, folders[-1], database_url, conninfo, schema, args.seed, profiled_ids)
            results["due"] = due
            print(f"  due games another sweep held (raced): {due['raced']}; auto-pass failures: {due['errors']}")
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        interrupted_by_user = True
    except BaseException:
        failed = True
        raise
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
            connection.commit()
        admin.dispose()
        broker.flushdb()
        broker.close()
        print(f"schema {schema} dropped, {args.redis} emptied")
        failed = summary(results, args, command) or failed
        for folder in folders:  # the instance folders, with the workers' logs
            if failed:
                print(f"kept for a look: {folder}")
            else:
                shutil.rmtree(folder, ignore_errors=True)
    sys.exit(1 if failed else 130 if interrupted_by_user else 0)


def summary(results: dict[str, Any], args: argparse.Namespace, command: str) -> bool:
    """Print the table; ``True`` when the auto-passes were not exactly once (a bug, not a slow run)."""
    if "idle" not in results:
        return False
    idle = results["idle"]
    sweep_median = statistics.median(m for m, _ in idle["sweep"])
    sweep_p95 = statistics.median(p for _, p in idle["sweep"])
    query_median = statistics.median(m for m, _ in idle["query"])
    query_p95 = statistics.median(p for _, p in idle["query"])
    trip_median = statistics.median(m for m, _ in idle["trip"])
    trip_p95 = statistics.median(p for _, p in idle["trip"])
    target_ms = f"< {TARGET_NOTHING_DUE_MS:.0f} ms"
    rows = [
        ("stored games", f"{args.games:,}", "", ""),
        ("sweep, nothing due: median", f"{sweep_median:.2f} ms", target_ms, ok(sweep_median < TARGET_NOTHING_DUE_MS)),
        ("sweep, nothing due: p95", f"{sweep_p95:.2f} ms", target_ms, ok(sweep_p95 < TARGET_NOTHING_DUE_MS)),
        ("due-games query alone: median / p95", f"{query_median:.2f} / {query_p95:.2f} ms", "", ""),
        ("one round trip (SELECT 1): median / p95", f"{trip_median:.2f} / {trip_p95:.2f} ms", "", ""),
    ]
    if "profile" in results:
        profile = results["profile"]
        backend = f" + {profile['backend_ms']:.1f}" if profile["backend_ms"] is not None else ""
        rows.append(("one process, per auto-pass: wall", f"{profile['wall_ms']:.1f} ms", "", ""))
        rows.append(("one process, per auto-pass: CPU (+ server)", f"{profile['cpu_ms']:.1f}{backend} ms", "", ""))
    broken = False
    if "due" in results and results["due"]["runs"]:
        due = results["due"]
        runs = due["runs"]
        walls = [run["wall"] for run in runs]
        wall = statistics.median(walls)
        exact = all(
            run["done"] == args.due
            and run["checks"]["games_passed_once"] == args.due
            and run["checks"]["versions_moved_by_one"] == args.due
            and run["checks"]["games_with_auto_pass_mail"] == args.due
            and not run["checks"]["other_games_passed"]
            for run in runs
        )
        broken = not exact
        cpu_workers = statistics.median(run["cpu"][0] for run in runs) * 1000 / args.due
        cpu_server = statistics.median(run["cpu"][1] for run in runs) * 1000 / args.due
        cores = statistics.median((run["cpu"][0] + run["cpu"][1]) / run["wall"] for run in runs)
        capacity = (os.cpu_count() or 1) * 1000 / (cpu_workers + cpu_server)
        target_s = f"< {TARGET_DUE_SECONDS:.0f} s"
        rows += [
            (f"{args.due:,} due auto-passes: wall, median", f"{wall:.1f} s", target_s, ok(wall < TARGET_DUE_SECONDS)),
            ("  each run", " / ".join(f"{w:.0f}" for w in walls) + " s", "", ""),
            ("  auto-passes/s (median run)", f"{args.due / wall:.0f}", "", ""),
            ("  CPU per auto-pass: workers + server", f"{cpu_workers:.1f} + {cpu_server:.1f} ms", "", ""),
            ("  CPUs our processes got, of " + str(os.cpu_count()), f"{cores:.2f}", "", ""),
            ("  at that CPU cost, all CPUs would do", f"~{capacity:.0f}/s, {args.due / capacity:.0f} s", "", ""),
            ("  first auto-pass after", f"{statistics.median(run['first_seen'] for run in runs):.1f} s", "", ""),
            ("  exactly once, versions +1, mails", "yes" if exact else "NO", "", ok(exact)),
            ("  raced (tried, held by another sweep)", f"{due['raced']}", "", ""),
            ("  load average before / after (last run)", f"{runs[-1]['loads'][0]} / {runs[-1]['loads'][1]}", "", ""),
        ]
    width = max(len(r[0]) for r in rows)
    print()
    print(f"{'what':<{width}}  {'measured':>22}  {'target':>8}")
    for what, measured, target, verdict in rows:
        print(f"{what:<{width}}  {measured:>22}  {target:>8}  {verdict}")
    print(f"\n{machine()}, PostgreSQL {results.get('server')}")
    print(f"reproduce: {command}")
    return broken


def ok(passed: bool) -> str:
    return "ok" if passed else "MISSED"


if __name__ == "__main__":
    main()
