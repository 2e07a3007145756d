"""Two trees' step CPU in lockstep: ``step_profile.py``'s steps, one tree's and the other's taken in turn.

    python bench/step_lockstep.py TREE_A TREE_B [--steps 600] [--games 20] [--pages]

Starts one process per tree (its own PostgreSQL schema, Redis for the broker and the limits, as
``step_profile.py --limits``), each with ``--games`` 2-seat games, then has them take one step each in turn
(A B, then B A, …) until each has taken ``--steps``: a ``POST .../actions`` through Flask's test client, after
a ``GET .../legal-actions`` when the game passed to the other seat. Each process times its own requests in
thread CPU. On a machine shared with other work, the CPU a request costs drifts with the load by more than a
change of a few percent; taken in turn, both trees' requests meet the same load, so the ratio of their
costs (B over A, step by step and in total) holds where runs one after the other do not. The games are not
the same ones (each game's seed is drawn when it is created), so compare many steps. Each process sets
itself up with its own tree's ``step_profile.py``: to compare with a checkout older than this script, copy
``bench/`` into it.

With ``--pages`` the steps are a turn page player's: each is the page's form POST (``POST .../turn``, in a
browser session opened from the seat's link, the action's fields as the page's forms send them, the page's
CSRF token) and the turn page drawn for the seat awaited after it (``GET .../turn``, the page the redirect
leads to when the seat keeps the turn); the legal actions the step is chosen from are read through the API
and not timed (the page shows them itself). Both are timed, and their sum is "a page step".
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs=2, metavar="TREE", help="two checkouts (A, then B)")
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--pages", action="store_true", help="steps through the turn page (form POST, then GET)")
    parser.add_argument("--side", action="store_true", help=argparse.SUPPRESS)  # one tree's process
    args = parser.parse_args()
    if args.side:
        side(Path(args.trees[0]), args.games, pages=args.pages)
        return
    a, b = (spawn(Path(tree).resolve(), args.games, pages=args.pages) for tree in args.trees)
    rows = []
    for number in range(args.steps):
        first, second = (a, b) if number % 2 == 0 else (b, a)
        taken = {first: step(first), second: step(second)}
        rows.append((taken[a], taken[b]))
    for process in (a, b):
        assert process.stdin is not None
        process.stdin.write("stop\n")
        process.stdin.flush()
        process.wait()
    pages = " --pages" if args.pages else ""
    print(
        f"# python bench/step_lockstep.py {args.trees[0]} {args.trees[1]} --steps {args.steps} --games "
        f"{args.games}{pages}"
    )
    print(f"# A = {args.trees[0]}\n# B = {args.trees[1]}\n# thread CPU per request, ms")
    if args.pages:
        compared_pages(rows)
        return
    paired("POST", [(ra["post"], rb["post"]) for ra, rb in rows])
    requests = [(ra["post"] + (ra["get"] or 0), rb["post"] + (rb["get"] or 0)) for ra, rb in rows]
    paired("a step's requests", requests)
    apart("POST, same seat", [r for r, _ in rows if not r["passed"]], [r for _, r in rows if not r["passed"]], "post")
    apart("POST, turn passed", [r for r, _ in rows if r["passed"]], [r for _, r in rows if r["passed"]], "post")
    ours_read = [r for r, _ in rows if r["get"] is not None]
    apart("GET legal-actions", ours_read, [r for _, r in rows if r["get"] is not None], "get")


def compared_pages(rows: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """The ratios of ``--pages`` steps: the form's POST, the page drawn after it, and both."""
    paired("POST form", [(ra["post"], rb["post"]) for ra, rb in rows])
    drawn = [(ra["page"], rb["page"]) for ra, rb in rows if ra["page"] is not None and rb["page"] is not None]
    paired("GET turn page", drawn)
    paired("a page step", [(ra["post"] + (ra["page"] or 0), rb["post"] + (rb["page"] or 0)) for ra, rb in rows])
    apart("POST, same seat", [r for r, _ in rows if not r["passed"]], [r for _, r in rows if not r["passed"]], "post")
    apart("POST, turn passed", [r for r, _ in rows if r["passed"]], [r for _, r in rows if r["passed"]], "post")


def spawn(tree: Path, games: int, *, pages: bool = False) -> subprocess.Popen[str]:
    command = [sys.executable, str(Path(__file__).resolve()), str(tree), str(tree), "--side", "--games", str(games)]
    process = subprocess.Popen(
        command + (["--pages"] if pages else []),
        env=dict(os.environ, PYTHONPATH=str(tree)),
        cwd="/tmp",  # the tree's code, not the one the command was started in
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    return process


def step(process: subprocess.Popen[str]) -> dict[str, Any]:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("go\n")
    process.stdin.flush()
    taken: dict[str, Any] = json.loads(process.stdout.readline())
    return taken


def paired(name: str, pairs: list[tuple[float, float]]) -> None:
    ratios = sorted(b / a for a, b in pairs)
    ours = [a for a, _ in pairs]
    theirs = [b for _, b in pairs]
    print(
        f"{name:18} n={len(pairs):4}  A median {statistics.median(ours) * 1e3:6.2f} mean "
        f"{statistics.mean(ours) * 1e3:6.2f}  B median {statistics.median(theirs) * 1e3:6.2f} mean "
        f"{statistics.mean(theirs) * 1e3:6.2f}  B/A: step by step {statistics.median(ratios):.3f} (quartiles "
        f"{ratios[len(ratios) // 4]:.3f}-{ratios[3 * len(ratios) // 4]:.3f}), in total {sum(theirs) / sum(ours):.3f}"
    )


def apart(name: str, ours: list[dict[str, Any]], theirs: list[dict[str, Any]], key: str) -> None:
    if not ours or not theirs:
        return
    a = [r[key] for r in ours]
    b = [r[key] for r in theirs]
    print(
        f"{name:18} A n={len(a):4} median {statistics.median(a) * 1e3:6.2f}  B n={len(b):4} median "
        f"{statistics.median(b) * 1e3:6.2f}  B/A medians {statistics.median(b) / statistics.median(a):.3f}"
    )


def form_fields(action: dict[str, Any], version: int, csrf: str) -> dict[str, Any]:
    """An action as the turn page's forms send it (``service.web.pages.forms.action_from_form`` reads them)."""
    fields: dict[str, Any] = {"csrf_token": csrf, "version": str(version), "type": action["type"]}
    for name in ("region", "combo", "target", "troop"):
        if action.get(name) is not None:
            fields[name] = str(action[name])
    if action.get("decline"):
        fields["decline"] = "1"
    for region, tokens in (action.get("tokens") or {}).items():
        fields[f"tokens-{region}"] = str(tokens)
    if "regions" in action:
        fields["regions"] = [str(r) for r in action["regions"]]
    return fields


CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')


def side(tree: Path, games: int, *, pages: bool = False) -> None:
    """One tree's process: set up as ``step_profile.py --limits`` does (that tree's), then a step per ``go``
    line, the games in turn, each answered with the step's thread CPU on stdout (``pages``: the turn page's
    form POST and the page drawn after it)."""
    sys.path.insert(0, str(tree))
    import rules
    from bench.step_profile import bench_schema, started_games
    from rules.bots import concrete
    from service import create_app

    with bench_schema(limits=True) as schema:
        app = create_app()
        client = app.test_client()
        tokens = started_games(client, schema, games, 2)
        order = sorted(tokens)
        browsers, csrf = {}, {}
        for game_id, seats in tokens.items() if pages else ():
            for number, token in seats.items():  # a browser per seat, opened from its link as a click does
                browser = browsers[game_id, number] = app.test_client()
                assert browser.get(f"/play/{token}").status_code == 302
                drawn = browser.get(f"/games/{game_id}").get_data(as_text=True)
                csrf[game_id, number] = CSRF_FIELD.search(drawn).group(1)  # type: ignore[union-attr]
        table: dict[int, dict[str, Any]] = {}
        for number, game_id in enumerate(order):
            seat_zero = {"Authorization": f"Bearer {tokens[game_id][0]}"}
            view = client.get(f"/api/games/{game_id}", headers=seat_zero).json
            table[game_id] = {"view": view, "legal": None, "for": None, "rnd": random.Random(number)}
        print("ready", flush=True)
        for turn, line in enumerate(sys.stdin):
            if line.strip() != "go":
                break
            playing = [game_id for game_id in order if table[game_id]["view"]["status"] == "active"]
            game_id = playing[turn % len(playing)]
            game = table[game_id]
            seat = game["view"]["awaiting"][0]
            headers = {"Authorization": f"Bearer {tokens[game_id][seat]}"}
            read = None
            if game["legal"] is None or game["for"] != seat:
                started = time.thread_time()
                game["legal"] = client.get(f"/api/games/{game_id}/legal-actions", headers=headers).json
                read = time.thread_time() - started
            action = concrete(rules.Action.from_json(game["rnd"].choice(game["legal"]["actions"])), game["rnd"])
            if pages:
                game["legal"] = page_step(browsers, csrf, client, tokens[game_id], seat, game, action.to_json())
                print(json.dumps({k: game.pop(k) for k in ("post", "page", "passed")}), flush=True)
                continue
            body = {"version": game["legal"]["version"], "action": action.to_json()}
            started = time.thread_time()
            answer = client.post(f"/api/games/{game_id}/actions", json=body, headers=headers)
            spent = time.thread_time() - started
            assert answer.status_code == 200, answer.json
            passed = answer.json["game"]["awaiting"][:1] != [seat]
            game["view"], game["legal"], game["for"] = answer.json["game"], answer.json["legal_actions"], seat
            print(json.dumps({"post": spent, "get": read, "passed": passed}), flush=True)


def page_step(browsers, csrf, client, seats, seat, game, action):  # noqa: ANN001, ANN201, PLR0913
    """A ``--pages`` step: the form's POST from ``seat``'s browser, then the turn page of the seat awaited
    after it, each timed into ``game`` (``post``, ``page``), with the game's view and legal actions read
    through the API, untimed."""
    game_id = game["view"]["id"]
    fields = form_fields(action, game["legal"]["version"], csrf[game_id, seat])
    started = time.thread_time()
    posted = browsers[game_id, seat].post(f"/games/{game_id}/turn", data=fields)
    game["post"] = time.thread_time() - started
    assert posted.status_code == 302, posted.status_code
    view = client.get(f"/api/games/{game_id}", headers={"Authorization": f"Bearer {seats[seat]}"}).json
    assert view["version"] == game["legal"]["version"] + 1, "the form's step was not taken"
    game["passed"] = view["awaiting"][:1] != [seat]
    game["view"], game["page"] = view, None
    if view["status"] != "active":
        return None
    awaited = view["awaiting"][0]
    started = time.thread_time()
    drawn = browsers[game_id, awaited].get(f"/games/{game_id}/turn")
    game["page"] = time.thread_time() - started
    assert drawn.status_code == 200, drawn.status_code
    game["for"] = awaited
    return client.get(f"/api/games/{game_id}/legal-actions", headers={"Authorization": f"Bearer {seats[awaited]}"}).json


if __name__ == "__main__":
    main()
