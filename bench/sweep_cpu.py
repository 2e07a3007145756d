"""The nothing-due deadline sweep's own cost, in the process that sweeps: CPU and wall time a sweep.

    PYTHONPATH=<tree> .venv/bin/python bench/sweep_cpu.py [--sweeps 300] [--label NAME]

An empty, migrated schema of its own (dropped at the end), one sweep to record the sweep's time, then
``--sweeps`` sweeps with nothing due, timed together (``time.process_time`` and ``time.perf_counter``).
CPU time is what a shared machine does not change much: run it for two trees one after the other, in turns
(``PYTHONPATH`` names the tree whose ``service`` is imported), to compare them. The data's size does not
matter to the sweep's own work; ``sweep.py`` measures it with a million games.
"""

from __future__ import annotations

import argparse
import time
import uuid
from datetime import timedelta

from sqlalchemy import create_engine, make_url, text

from service import create_app
from service.domain import deadlines
from service.infra.db import get_engine, get_session, upgrade_database


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sweeps", type=int, default=300)
    parser.add_argument("--label", default=deadlines.__file__)
    parser.add_argument("--postgres", default="postgresql+psycopg://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    schema = f"bench_sweep_cpu_{uuid.uuid4().hex[:10]}"
    admin = create_engine(args.postgres)
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        url = make_url(args.postgres).update_query_dict({"options": f"-csearch_path={schema}"})
        app = create_app({"TESTING": True, "DATABASE_URL": url.render_as_string(hide_password=False)})
        upgrade_database(get_engine(app))
        links = app.extensions["smallworld.links"]
        with app.app_context():
            session = get_session()
            deadlines.sweep(session, links, outage_after=timedelta(hours=1))
            cpu, wall = time.process_time(), time.perf_counter()
            for _ in range(args.sweeps):
                deadlines.sweep(session, links, outage_after=timedelta(hours=1))
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        get_engine(app).dispose()
        print(
            f"{args.label}: CPU {cpu / args.sweeps * 1000:.2f} ms a sweep, wall {wall / args.sweeps * 1000:.2f} ms"
            f" ({args.sweeps} sweeps, nothing due)"
        )
    finally:
        with admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


if __name__ == "__main__":
    main()
