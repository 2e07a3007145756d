"""What telling the game in words costs: "Since your last turn" and the history, next to the bare replay.

    .venv/bin/python bench/story.py [--players 5] [--games 5] [--seed 0] [--redeploy auto|ask] [--postgres URL]

Each random game (``rules.bots.random_player``, a few auto-passes) is logged as the service logs it
(``GameAction`` rows, not stored); then, at every new turn of the game, as when a "your turn" mail is queued:

- the reference: the bare replay of the log from the seed (``service.domain.play.replay_steps``), which the
  game and history pages did already;
- the story: the same replay grouped into turns (``service.domain.story.turns_of``) and the awaited
  seat's "Since your last turn" told (``story.since_words``), as every turn mail and turn page did before the
  turn starts were stored;
- the story from the stored turn starts, as the service tells it now (``service.domain.play.told_turns``
  with ``readers``): the log replayed from the state stored at the start of the awaited seat's previous turn
  (``TurnStart``: each seat's last two, as the service keeps them; from the seed when none reaches back, in
  the first round), grouped and told the same; its words are checked to be the story's;
- the whole history told for one reader (every turn's sentence), as the history page does.

With ``--postgres URL`` it first deals as many games through the domain (``play.submit_action``) on a
schema of its own there (dropped at the end), and times both ways as the service runs them, queries included.

Prints the CPU time of this thread per call (the best of three; wall time on a loaded machine mostly
measures the wait for a core) and the ratio to the reference in the same run (ARCHITECTURE §8: ratios, not
absolute times, on a shared machine).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from typing import Any

import rules
from rules.bots import random_player
from service.domain import play, story
from service.domain.models import ActionKind, Game, GameAction
from service.domain.schemas import GameSettings

#: A turn start as the service stores it (``TurnStart``): the version, the seat on turn, the state's JSON.
Start = tuple[int, int, dict[str, Any]]


def logged_game(
    players: int, seed: int, redeploy: str = "auto"
) -> tuple[Game, list[GameAction], list[tuple[int, int]], list[Start]]:
    """A random game as its log; the log's length and the awaited seat at each turn mail (a new step
    awaited: a seat's turn, a defender's redeployment); the turn starts the service stores."""
    rnd = random.Random(seed)
    seed_text = f"bench-story-{seed}"
    state = rules.new_game(players, seed=seed_text, options={"redeploy": redeploy})
    settings = GameSettings(redeploy=redeploy).model_dump()  # type: ignore[arg-type]
    game = Game(name="bench", seed=seed_text, state=state.to_json(), settings=settings)
    log: list[GameAction] = []
    mails: list[tuple[int, int]] = []
    starts: list[Start] = []
    key = play.step_key(state)
    while not state.over:
        seat = min(rules.awaiting(state))
        if rnd.random() < 0.02:
            state = rules.auto_pass(state, seat)
            log.append(GameAction(game_id=1, seat=seat, kind=ActionKind.AUTO_PASS, action={"reason": "deadline"}))
        else:
            action = random_player(state, rnd)
            state = rules.apply(state, action)
            log.append(GameAction(game_id=1, seat=seat, kind=ActionKind.ACTION, action=action.to_json()))
        log[-1].version = len(log) + 1
        if play.begins_turn(key, state):  # as play.commit_step stores it, read back as JSON
            starts.append((len(log) + 1, state.current, json.loads(json.dumps(state.to_json()))))
        if not state.over and play.step_key(state) != key:
            key = play.step_key(state)
            mails.append((len(log), min(rules.awaiting(state))))
    return game, log, mails, starts


def from_starts(game: Game, entries: list[GameAction], starts: list[Start], seat: int) -> list[story.Turn]:
    """``play.told_turns(session, game, readers=[seat])`` with the log and the stored starts in memory: the
    seat's two latest starts before now (the service keeps no more), latest first, then the seed."""
    now = entries[-1].version
    mine = [(version, state) for version, on_turn, state in starts if on_turn == seat and version < now][-2:]
    for version, state in reversed(mine):
        turns = play.turns_since_start(version, state, entries[version - 2 :], [seat])
        if turns is not None:
            return turns
    return story.turns_of(entries, play.replay_steps(game, entries))


def timed(call: object, repeat: int = 3) -> float:
    best = []
    for _ in range(repeat):
        start = time.thread_time()
        call()  # type: ignore[operator]
        best.append(time.thread_time() - start)
    return min(best)


def through_the_database(url: str, players: int, games: int, seed: int, redeploy: str) -> None:
    """Games dealt through the domain (``play.submit_action``) on a fresh PostgreSQL schema; at each turn mail,
    "Since your last turn" for the awaited seat as the service tells it (``play.told_turns`` with
    ``readers``: the stored start, its queries and its JSON read included) next to the replay from the seed
    (``play.told_turns`` without them), both with their queries, in this thread's CPU time."""
    import secrets
    import uuid

    import sqlalchemy as sa
    from sqlmodel import Session

    from service.domain.links import LinkMaker, signer_for
    from service.domain.models import GameStatus, Player, Seat
    from service.infra.db import make_engine, upgrade_database

    schema = f"bench_story_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(url)
    with admin.connect() as connection:
        connection.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        connection.commit()
    engine = make_engine(f"{url}?options=-csearch_path%3D{schema}")
    links = LinkMaker(signer_for("bench-story"), "https://smallworld.example")
    seed_times: list[float] = []
    stored_times: list[float] = []
    try:
        upgrade_database(engine)
        for g in range(games):
            rnd = random.Random(seed + g)
            with Session(engine) as session:
                settings = GameSettings(redeploy=redeploy).model_dump()  # type: ignore[arg-type]
                seed_text = f"bench-story-db-{seed + g}"
                state = rules.new_game(players, seed=seed_text, options={"redeploy": redeploy})
                game = Game(name="bench", seed=seed_text, state=state.to_json(), settings=settings, version=1)
                game.status, game.admin_secret, game.host_email = GameStatus.ACTIVE, "x", "host@example.org"
                session.add(game)
                session.flush()
                for n in range(players):
                    player = Player(email=f"{schema}-{g}-{n}@example.org", display_name=f"P{n}", time_zone="UTC")
                    session.add(player)
                    session.flush()
                    name = f"Player {n}"
                    session.add(Seat(game_id=game.id or 0, player_id=player.id or 0, seat=n, display_name=name,
                                     secret=secrets.token_urlsafe(16)))  # fmt: skip
                session.commit()
                names = [f"Player {n}" for n in range(players)]
                while game.status == GameStatus.ACTIVE:
                    key, state = game.step_key, rules.read_state(game.state or {})
                    seat = min(rules.awaiting(state))
                    play.submit_action(session, game.id or 0, seat, random_player(state, rnd).to_json(),
                                       game.version, links)  # fmt: skip
                    session.refresh(game)
                    if game.status != GameStatus.ACTIVE or game.step_key == key:
                        continue
                    awaited = min(rules.awaiting(rules.read_state(game.state or {})))

                    def from_seed(
                        s: Session = session, m: Game = game, a: int = awaited, w: list[str] = names
                    ) -> list[str]:
                        return story.since_words(play.told_turns(s, m) or [], w, a)

                    def stored(
                        s: Session = session, m: Game = game, a: int = awaited, w: list[str] = names
                    ) -> list[str]:
                        return story.since_words(play.told_turns(s, m, readers=[a]) or [], w, a)

                    assert stored() == from_seed()
                    seed_times.append(timed(from_seed))
                    stored_times.append(timed(stored))
                    session.rollback()  # the reads' transaction: let the next step start afresh
    finally:
        engine.dispose()
        with admin.connect() as connection:
            connection.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
            connection.commit()
        admin.dispose()
    ref, now = statistics.median(seed_times), statistics.median(stored_times)
    print(f"through PostgreSQL (the log's and the stored start's queries included), {len(seed_times)} turn mails:")
    print(f"  from the seed, median:             {ref * 1e3:7.2f} ms")
    print(f"  from the stored turn starts, median: {now * 1e3:5.2f} ms  ({ref / now:.2f}x faster)")
    late = len(seed_times) * 3 // 4
    late_ref, late_now = statistics.median(seed_times[late:]), statistics.median(stored_times[late:])
    print(f"  the last quarter: {late_ref * 1e3:.2f} ms against {late_now * 1e3:.2f} ms ({late_ref / late_now:.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, default=5)
    parser.add_argument("--games", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--redeploy", choices=["auto", "ask"], default="auto", help="defenders' redeployment")
    parser.add_argument("--postgres", metavar="URL", help="also deal games through the domain on PostgreSQL")
    args = parser.parse_args()
    if args.postgres:
        through_the_database(args.postgres, args.players, args.games, args.seed, args.redeploy)
    names = [f"Player {n}" for n in range(args.players)]
    bare, since, stored, history, steps = [], [], [], [], []
    late_since, late_stored = [], []  # the last quarter of each game's mails
    for g in range(args.games):
        game, log, mails, starts = logged_game(args.players, args.seed + g, args.redeploy)
        steps.append(len(log))
        for n, (upto, seat) in enumerate(mails):
            entries = log[:upto]
            bare.append(timed(lambda g=game, e=entries: list(play.replay_steps(g, e))))

            def told(g: Game = game, e: list[GameAction] = entries, s: int = seat) -> list[str]:
                return story.since_words(story.turns_of(e, play.replay_steps(g, e)), names, s)

            def told_now(
                g: Game = game, e: list[GameAction] = entries, s: int = seat, kept: list[Start] = starts
            ) -> list[str]:
                return story.since_words(from_starts(g, e, kept, s), names, s)

            assert told_now() == told(), (g, upto, seat)
            since.append(timed(told))
            stored.append(timed(told_now))
            if n >= len(mails) * 3 // 4:
                late_since.append(since[-1])
                late_stored.append(stored[-1])
        whole = story.turns_of(log, play.replay_steps(game, log))
        history.append(timed(lambda t=whole: [story.tell(turn, names, 0) for turn in t]))
    ref, mine, now = statistics.median(bare), statistics.median(since), statistics.median(stored)
    print(f"games: {args.games} of {args.players} players, {statistics.median(steps):.0f} steps each (median)")
    print(f"turn mails told: {len(since)} (load average {os.getloadavg()[0]:.1f}), the same words both ways")
    print(f"bare replay of the log, median per turn mail:          {ref * 1e3:7.2f} ms")
    print(f"replay + turns + 'Since your last turn', median:       {mine * 1e3:7.2f} ms", end="")
    print(f"  ({mine / ref:.2f}x the replay)")
    print(f"the same from the stored turn starts, median:          {now * 1e3:7.2f} ms", end="")
    print(f"  ({now / ref:.2f}x the replay, {mine / now:.2f}x faster than from the seed)")
    late, late_now = statistics.median(late_since), statistics.median(late_stored)
    print(f"  the last quarter of each game: from the seed {late * 1e3:.2f} ms, from the stored starts", end="")
    print(f" {late_now * 1e3:.2f} ms ({late / late_now:.2f}x)")
    print(f"telling a whole game's turns for the history, median: {statistics.median(history) * 1e3:7.2f} ms")
    print(
        f"command: .venv/bin/python bench/story.py --players {args.players} --games {args.games} --seed {args.seed}"
        f" --redeploy {args.redeploy}" + (f" --postgres {args.postgres}" if args.postgres else "")
    )


if __name__ == "__main__":
    main()
