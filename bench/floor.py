"""The floor of a step: only the work no implementation of a step can avoid on PostgreSQL.

``bench/api_load.py`` serves this beside the service in the same gunicorn (``combined()``, under
``/floor``), so both are measured in one run on the same processes. A floor step does, in one transaction:
read the game's row with its lock (``SELECT … FOR UPDATE``, the state as JSON), insert the event, update
the game (version and state), commit, and answer a small JSON body. No ORM, no validation, no rules, no
outbox, no rate limit: whatever the service spends beyond this is its own overhead.

Its tables (``floor_games``, ``floor_actions``) live in the bench's schema beside the service's, shaped like
``games`` and ``actions``; ``prepare()`` creates them with one row per game, each holding the JSON of a real
game state so that the row read and written is as large as the service's.
"""

from __future__ import annotations

import json
import os
from typing import Any

import psycopg
from flask import Flask, jsonify, request
from psycopg.types.json import Jsonb
from werkzeug.middleware.dispatcher import DispatcherMiddleware

SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS floor_games (id integer PRIMARY KEY, version integer NOT NULL, state jsonb NOT NULL);
CREATE TABLE IF NOT EXISTS floor_actions (
    id bigserial PRIMARY KEY,
    game_id integer NOT NULL REFERENCES floor_games (id),
    version integer NOT NULL,
    action jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (game_id, version)
);
"""


def libpq_url(url: str) -> str:
    """A SQLAlchemy URL (``postgresql+psycopg://…``) as libpq takes it."""
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def prepare(url: str, schema: str, games: list[int], state: dict[str, Any]) -> None:
    """Create the floor's tables in ``schema`` with a row per game id, each holding ``state``."""
    with psycopg.connect(libpq_url(url), options=f"-csearch_path={schema}") as connection:
        connection.execute(SCHEMA_SQL)
        with connection.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO floor_games (id, version, state) VALUES (%s, 0, %s) ON CONFLICT (id) DO NOTHING",
                [(game, Jsonb(state)) for game in games],
            )


def floor_app() -> Flask:
    """The floor's one endpoint, on the database the service is given (``SMALLWORLD_DATABASE_URL``)."""
    app = Flask("floor")
    url = libpq_url(os.environ["SMALLWORLD_DATABASE_URL"])
    connection: list[psycopg.Connection] = []  # one per worker process, opened on its first request

    @app.post("/games/<int:game_id>/actions")
    def step(game_id: int) -> Any:
        if not connection:
            connection.append(psycopg.connect(url))
        db = connection[0]
        action = request.get_json()
        with db.transaction():
            row = db.execute("SELECT version, state FROM floor_games WHERE id = %s FOR UPDATE", (game_id,)).fetchone()
            if row is None:
                return jsonify(error="no such game"), 404
            version, state = row
            db.execute(
                "INSERT INTO floor_actions (game_id, version, action) VALUES (%s, %s, %s)",
                (game_id, version + 1, Jsonb(action)),
            )
            db.execute(
                "UPDATE floor_games SET version = %s, state = %s WHERE id = %s",
                (version + 1, Jsonb(state), game_id),
            )
        return app.response_class(json.dumps({"version": version + 1}), mimetype="application/json")

    return app


def combined() -> Any:
    """The service with the floor mounted at ``/floor``: one gunicorn serves both (``bench/api_load.py``).

    With ``BENCH_PROFILE_DIR`` set, each worker process profiles every request it serves (pyinstrument,
    wall clock) and writes the profile there when it exits (``api_load.py --profile DIR``).
    """
    from service import create_app

    app = DispatcherMiddleware(create_app(), {"/floor": floor_app()})
    folder = os.environ.get("BENCH_PROFILE_DIR")
    return profiled(app, folder) if folder else app


def profiled(app: Any, folder: str) -> Any:
    """``app``, profiled in each process from its first request until the process exits."""
    import atexit

    from pyinstrument import Profiler

    profilers: list[Profiler] = []

    def write(profiler: Profiler) -> None:
        profiler.stop()
        with open(os.path.join(folder, f"worker-{os.getpid()}.txt"), "w") as out:
            out.write(profiler.output_text(unicode=False, color=False))

    def wrapped(environ: dict[str, Any], start_response: Any) -> Any:
        if not profilers:  # the first request of this worker process (gunicorn forks after loading the app)
            profilers.append(Profiler(interval=0.0005))
            profilers[0].start()
            atexit.register(write, profilers[0])
        return app(environ, start_response)

    return wrapped
