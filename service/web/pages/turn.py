"""The turn page: the seat's own view of the game while it is their turn, and the steps they take.

Every step is a plain HTML form that POSTs and redirects back (it works without JavaScript); with
JavaScript, htmx sends the same forms in the background and a click on a region of the map submits the
conquest at once. Steps go through the same domain operations as the JSON API
(``service.domain.play.submit_action`` and ``undo``); the rules' refusal is shown as it is.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from flask import Blueprint, flash, redirect, render_template, request, url_for
from werkzeug.datastructures import MultiDict
from werkzeug.wrappers import Response

import rules
from rules.abilities import ACTION_OWNERS, names_with
from rules.state import GameState
from rules.troops import conquering_declined, hand_for_conquest
from service.domain import bot_seats, play, views
from service.domain.clock import Clock
from service.domain.errors import Conflict, DomainError
from service.domain.links import current_links
from service.domain.models import GameStatus
from service.domain.rows import by_number
from service.infra.db import get_session
from service.web.maps import (
    MapOptions,
    PublicBoard,
    RegionMark,
    Style,
    board_svg,
    board_title,
    describe_region,
)
from service.web.pages.access import Seated, seated_for
from service.web.pages.forms import action_from_form, int_or_none
from service.web.pages.game_summary import page_context
from service.web.pages.narration import PHASES, name_of, score_words
from service.web.pages.table_talk import board_context

bp = Blueprint("turn", __name__)

#: The base game's actions on one region, chosen from a list (or from the region's panel on the map), with
#: the list's title and button; the races' and powers' own region actions follow (``region_forms``).
BASE_REGION_FORMS = (
    ("conquer:declined", "Conquer with the In Decline {race}", "Conquer"),
    ("conquer", "Conquer a region", "Conquer"),
    ("final_conquest", "Final conquest, with the die", "Roll the die"),
    ("abandon", "Abandon a region (before conquering)", "Abandon"),
)
#: The turn page's map: labels a third larger than the game page's, the same size in every region (never
#: shrunk below the page's natural size), so that the map's words are 11 CSS px at least at the zoom it opens
#: with (pages.js) while a phone still shows most of the board; races' names are left out where a region is
#: small (the badge says whose tokens these are). Measured by bench/turn_cost.py.
TURN_MAP = Style(labels=1.3, smallest=1.0 / 1.3)
#: Actions confirmed on a page of their own first: they end the turn.
CONFIRMED = ("end_turn", "decline")


@bp.get("/games/<int:game_id>/turn")
def page(game_id: int) -> Any:
    viewer = seated_for(game_id)
    game = viewer.game
    state = rules.read_state(game.state) if game.state else None
    if state is None or game.status != GameStatus.ACTIVE or viewer.number not in rules.awaiting(state):
        return redirect(url_for("game.page", game_id=game_id))
    return render_template(
        "turn/page.html",
        **turn_context(viewer, state, request.args),
        talk=board_context(viewer),
        house_bot=viewer.bot_plays,
    )


@bp.post("/games/<int:game_id>/turn/take-back")
def take_back(game_id: int) -> Response:
    """The seat's player plays it again, from the step under way (ARCHITECTURE §10)."""
    viewer = seated_for(game_id)
    try:
        bot_seats.take_seat_back(get_session(), game_id, viewer.number)
    except DomainError as error:
        flash(error.message, "refusal")
    else:
        flash("Your seat is yours again: the house bot no longer plays it, and your turn mails come back.", "done")
    return redirect(url_for(".page", game_id=game_id))


#: The answer to a step sent again from the same page (or an older tab showing it): it was taken once.
ALREADY_TAKEN = (
    "That step was already taken (sent again from this page or another tab): it counts once. "
    "Here is the game as it stands now."
)


@bp.post("/games/<int:game_id>/turn")
def act(game_id: int) -> Response:
    """One step from a form: the action's fields, the version the page showed."""
    viewer = seated_for(game_id)
    if viewer.bot_plays:
        flash("The house bot plays your seat: take it back first (the button above), then play.", "refusal")
        return redirect(url_for(".page", game_id=game_id))
    form = request.form
    try:
        version = int(form.get("version", ""))
        action = action_from_form(form)
    except ValueError:
        flash("That form was incomplete: reload the page and try again.", "refusal")
        return redirect(url_for(".page", game_id=game_id))
    # A second click on the same button of the same page is the same step: it is applied once.
    key = "page-" + hashlib.sha256(json.dumps([version, action], sort_keys=True).encode()).hexdigest()[:32]
    db = get_session()
    before = rules.read_state(viewer.game.state) if viewer.game.state else None
    try:
        result = play.submit_action(
            db,
            game_id,
            viewer.number,
            action,
            version,
            current_links(),
            idempotency_key=key,
            seats=by_number(viewer.table.seats),
            game=viewer.game,
        )
    except Conflict as error:
        flash(_conflict_words(error, version), "refusal")
        return redirect(url_for(".page", game_id=game_id))
    except DomainError as error:
        # The refusal is said once, tied to the field it is about (``aria-invalid``, ``aria-describedby``).
        flash(error.message, "refusal")
        return redirect(url_for(".page", game_id=game_id, invalid=invalid_field(form, action, error.message)))
    if result.replayed:
        # The same step sent again (a second click, an old tab): taken once, and said so (issue 35).
        flash(ALREADY_TAKEN, "notice")
    elif before is not None and result.state is not None:
        flash(feedback(before, result.state, action, viewer.number), "done")
    return redirect(url_for("turn.page", game_id=game_id))


@bp.post("/games/<int:game_id>/turn/undo")
def undo(game_id: int) -> Response:
    viewer = seated_for(game_id)
    version = int_or_none(request.form.get("version"))
    steps = int_or_none(request.form.get("steps")) if request.form.get("steps") else None
    if version is None or (request.form.get("steps") and steps is None):
        flash("That form was incomplete: reload the page and try again.", "refusal")
        return redirect(url_for(".page", game_id=game_id))
    db = get_session()
    names = [s.display_name for s in viewer.table.seats]
    named = {s.back: s for s in play.undo_steps(db, viewer.game, viewer.number, names=names)}
    try:
        result = play.undo(db, game_id, viewer.number, version, current_links(), steps=steps, game=viewer.game)
    except Conflict as error:
        flash(_conflict_words(error, version), "refusal")
    except DomainError as error:
        flash(error.message, "refusal")
    else:
        undone = result.last.get("undone", 0)
        told = [named[k].words for k in range(undone, 0, -1) if k in named]
        which = f" ({'; '.join(told)})" if told else ""
        flash(f"Undone: {last_steps(undone)}{which}.", "done")
    return redirect(url_for(".page", game_id=game_id))


#: A field's id as the page writes them (``tokens-12``, ``choice-conquer-declined``, ``berserk_roll-4``).
FIELD_ID = re.compile(r"^[a-z_]+(-[a-z_]+)?(-\d+)?$")
REGION_IN_WORDS = re.compile(r"\b[Rr]egion (\d+)")


def invalid_field(form: MultiDict[str, str], action: dict[str, Any], message: str) -> str | None:
    """The id of the field a refused step is about: the list it was chosen from, or the number box of the
    region the rules name (else the form's first), so the page can mark it."""
    named = form.get("field", "")
    if FIELD_ID.match(named):
        return named
    tokens = action.get("tokens") or {}
    if not tokens:
        return None
    prefix = "tokens" if action["type"] == "redeploy" else action["type"]
    mentioned = [r for r in REGION_IN_WORDS.findall(message) if r in tokens]
    return f"{prefix}-{(mentioned or sorted(tokens, key=int))[0]}"


def _conflict_words(error: Conflict, version: int) -> str:
    """A stale page is said in page words (the API's "reload and retry" is done for the player)."""
    if error.extra.get("version", version) != version:
        return "The game changed since this page was drawn (another tab?). Here it is as it stands now."
    return error.message


def feedback(before: GameState, after: GameState, action: dict[str, Any], seat: int) -> str:
    """What the step did, in a sentence for the player who took it."""
    kind = action["type"]
    last = after.last
    region = action.get("region")
    if kind == "pick":
        troop = after.players[seat].active
        if troop is not None:
            return (
                f"You picked the {rules.combo_name(troop.race, troop.power)}: {troop.hand} tokens in hand. Now conquer."
            )
    if kind == "final_conquest":
        won = region is not None and after.regions[region].owner == seat and after.regions[region].tokens > 0
        outcome = f"region {region} is yours" if won else f"not enough for region {region}"
        return f"The die rolled {last.get('die')}: {outcome}. Your conquests are over; redeploy your tokens."
    if kind == "berserk_roll":
        return f"The die rolled {last.get('die')}: name the region to conquer."
    if kind == "conquer" and region is not None:
        tokens = after.regions[region].tokens
        return f"Region {region} is yours ({tokens} token{'s' if tokens != 1 else ''})."
    if kind == "abandon":
        return f"You left region {region}."
    if kind == "end_conquest":
        return "Conquests over: place your tokens, then end your turn."
    if kind == "redeploy":
        return "Redeployment saved."
    if kind == "end_turn" and before.phase == rules.Phase.DEFEND:
        return "Your redeployment is done; the game goes on."
    if kind in ("end_turn", "decline"):
        score = last.get("score")
        scored = f" You scored {score_words(score)}." if score else ""
        return ("Your race is In Decline." if kind == "decline" else "Turn ended.") + scored
    return "Done."


# -- what the page shows ----------------------------------------------------------------------------------
@dataclass
class Choices:
    """The legal actions of the seat now, sorted for the page by the shape of their kind
    (``rules.ACTION_KINDS``): a race's or power's own kinds find their form without the page naming them."""

    simple: dict[str, rules.Action] = field(default_factory=dict)  # decline, end_conquest, a roll…
    picks: set[int] = field(default_factory=set)
    by_region: dict[str, dict[int, rules.Action]] = field(default_factory=dict)
    redeploy: list[rules.Action] = field(default_factory=list)
    #: Described choices of an ability: spread up to ``count`` over ``regions``, or choose ``count`` of them.
    spread: list[rules.Action] = field(default_factory=list)
    choose: list[rules.Action] = field(default_factory=list)
    #: Kinds that name a seat (a peace): type -> seats.
    targets: dict[str, list[int]] = field(default_factory=dict)
    end_turn: list[rules.Action] = field(default_factory=list)

    @classmethod
    def of(cls, actions: list[rules.Action]) -> Choices:
        out = cls()
        for a in actions:
            kind = rules.ACTION_KINDS.get(a.type)
            fields = kind.fields if kind else ()
            if a.type == "pick" and a.combo is not None:
                out.picks.add(a.combo)
            elif "region" in fields and a.region is not None:
                # An In Decline race's conquests are told apart by their troop.
                key = a.type if a.troop == "active" else f"{a.type}:{a.troop}"
                out.by_region.setdefault(key, {})[a.region] = a
            elif a.type == "redeploy":
                out.redeploy.append(a)
            elif kind is not None and kind.choice == "spread":
                out.spread.append(a)
            elif kind is not None and kind.choice == "choose":
                out.choose.append(a)
            elif "target" in fields and a.target is not None:
                out.targets.setdefault(a.type, []).append(a.target)
            elif a.type == "end_turn":
                out.end_turn.append(a)
            else:
                out.simple[a.type] = a
        return out

    def for_region(self, region: int) -> list[rules.Action]:
        return [by[region] for by in self.by_region.values() if region in by]


def owner_words(kind: str) -> str:
    """The race or power an action kind belongs to, for a form's title (``""`` for the base game's)."""
    owner = ACTION_OWNERS.get(kind)
    return owner.name if owner is not None else ""


def label_of(kind: str) -> str:
    found = rules.ACTION_KINDS.get(kind)
    return found.label if found and found.label else kind.replace("_", " ").capitalize()


def region_forms(choices: Choices, declined_race: str | None) -> list[dict[str, Any]]:
    """The region lists of the page: the base game's, then each race's or power's own region kinds."""
    forms: list[dict[str, Any]] = []
    for key, title, verb in BASE_REGION_FORMS:
        if key in choices.by_region:
            forms.append({"key": key, "title": title.format(race=declined_race), "verb": verb})
    for key in choices.by_region:
        if key.split(":")[0] not in {k.split(":")[0] for k, _, _ in BASE_REGION_FORMS}:
            label = label_of(key.split(":")[0])
            forms.append({"key": key, "title": f"{owner_words(key.split(':')[0])}: {label.lower()}", "verb": label})
    for form in forms:
        form["options"] = choices.by_region[form["key"]]
        form["conquest"] = form["key"].startswith(("conquer", "final"))
    return forms


def last_steps(count: int) -> str:
    """The steps an undo takes back, counted as a player says it: "your last step", "your last 2 steps".

    >>> last_steps(1), last_steps(2)
    ('your last step', 'your last 2 steps')
    """
    return "your last step" if count == 1 else f"your last {count} steps"


def panel_label(action: rules.Action, region: int, declined_race: str | None) -> str:
    """The button of an action in a region's panel."""
    if action.type == "conquer":
        return f"Conquer region {region}" + (
            f" with the In Decline {declined_race}" if action.troop != "active" else ""
        )
    if action.type == "final_conquest":
        return f"Roll the die for region {region} (ends your conquests)"
    if action.type == "abandon":
        return f"Abandon region {region}"
    owner = owner_words(action.type)
    return f"{label_of(action.type)} region {region}" + (f" ({owner})" if owner else "")


def turn_context(viewer: Seated, state: GameState, args: MultiDict[str, str]) -> dict[str, Any]:
    """Everything the turn page template needs."""
    db = get_session()
    game = viewer.game
    seat = viewer.number
    view = views.game_view(db, game, seat, viewer.table.view_inputs(db), state=state)
    public = view.state or {}
    names = [s.name for s in view.seats]
    choices = Choices.of(rules.legal_actions(state, seat))
    selected = int_or_none(args.get("region"))
    if selected is not None and not 0 <= selected < len(state.regions):
        selected = None
    marks = conquest_marks(state, seat, choices)
    # The steps an undo may take back, earliest first, each named (rules.tell) with its own "undo to here".
    undo_steps = list(reversed(play.undo_steps(db, game, seat, names=names, state=state)))
    undoable = len(undo_steps)
    confirm = args.get("confirm") if args.get("confirm") in CONFIRMED else None

    page_url = url_for("turn.page", game_id=game.id)  # each region's link adds ?region=N, as url_for would

    def href(region: int) -> str:
        redeploying = state.phase in (rules.Phase.REDEPLOY, rules.Phase.DEFEND)
        if redeploying and any(region in a.regions for a in choices.redeploy):
            return f"#tokens-{region}"
        return f"{page_url}?region={region}#region-panel"

    taps = {r: map_tap(state, choices, marks, r) for r in range(len(state.regions))}
    # The map opens framed on the player's own regions and those they may conquer (pages.js).
    framed = {r for r, land in enumerate(state.regions) if land.owner == seat} | set(marks)
    map_svg = board_svg(
        public,
        MapOptions(
            id_prefix="turnmap",
            href=href,
            link_attributes=lambda region: taps[region].attributes | ({"data-frame": ""} if region in framed else {}),
            region_name=lambda region, words: f"{region_name(state, region, words)}, {taps[region].words}",
            marks=marks,
            selected=selected,
            seat_names=names,
            label=f"Map of {board_title(state.board.name)}. Select a region to act on it.",
            style=TURN_MAP,
        ),
    )
    declined = conquering_declined(state, seat)
    declined_race = declined.race if declined is not None else None
    region_panel = None
    previews = Previews(state)
    if selected is not None:
        region_panel = {
            "region": selected,
            "words": describe_region(PublicBoard.from_state(public, names), selected),
            "actions": [(a, panel_label(a, selected, declined_race)) for a in choices.for_region(selected)],
            "why_not": why_not(state, seat, selected, choices),
            "cost": marks.get(selected),
            "cost_words": cost_words(state, seat, selected),
            "holder": holder_words(public, names, selected),
            "previews": {a: preview_words(previews(a), seat, selected) for a in choices.for_region(selected)},
        }
    # Before the first step of the conquests the tokens are still on the board: one stays in each region
    # and the others come to hand (rulebook, "Ready your Troops"); say how many that will be.
    active = state.players[seat].active
    readied_hand = hand_for_conquest(state, seat, active) if active and state.phase == rules.Phase.START else None
    # The template sees the player's view only (``public``), never the full state: it holds the other
    # players' coins and the random generator.
    invalid = args.get("invalid", "")
    phase = state.phase
    # "Since your last turn" (issue 18): the other players' turns in words, as the turn mail tells them.
    since = play.since_words_on_turn(db, game, state, seat, names)
    return page_context(viewer, view, Clock.read(game), public, names) | {
        "since": since,
        "step_title": step_title(phase, confirm, selected, state),
        "next_step": next_step(state, seat, choices, confirm, readied_hand),
        "next_action": next_action(state, seat, choices),
        "guide_anchor": GUIDE_ANCHORS.get(phase, "conquer"),
        "invalid": invalid if FIELD_ID.match(invalid) else None,
        "readied_hand": readied_hand,
        "choices": choices,
        "map_svg": map_svg,
        "marks": marks,
        "selected": selected,
        "region_panel": region_panel,
        "undoable": undoable,
        "undo_steps": undo_steps,
        "last_steps": last_steps,
        "confirm": confirm,
        # What ending the turn and going In Decline score, as the engine will score them (an In Decline
        # race scores without its power: rulebook, "Entering In Decline").
        "score_now": step_score(state, [a for a in choices.end_turn if not a.decline]),
        "decline_score": step_score(state, [choices.simple["decline"]] if "decline" in choices.simple else []),
        "preview_of": previews,
        "score_words": score_words,
        "redeploy_rows": redeploy_rows(state, choices),
        "region_forms": region_forms(choices, declined_race),
        "declined_race": declined_race,
        "decline_after": names_with("declines_after_scoring"),
        "abilities": your_abilities(state, seat),
        "kinds": rules.ACTION_KINDS,
        "owner_words": owner_words,
        "label_of": label_of,
        "region_label": lambda r: region_label(state, r),
        "name_of": lambda s: name_of(s, names),
    }


#: The "how a turn goes" page's section for each phase.
GUIDE_ANCHORS = {"pick": "pick", "start": "conquer", "conquer": "conquer", "redeploy": "redeploy", "defend": "redeploy"}


def step_title(phase: str, confirm: str | None, selected: int | None, state: GameState) -> str:
    """Which step the page is at, for the document's title."""
    if confirm == "decline":
        return "confirm going In Decline"
    if confirm == "end_turn":
        return "confirm the end of the turn"
    words = PHASES.get(phase, phase)
    if selected is not None:
        return f"{words}, {state.board.regions[selected].terrain.capitalize()} {selected}"
    return words


def next_step(state: GameState, seat: int, choices: Choices, confirm: str | None, readied_hand: int | None) -> str:
    """What the player does now, in a sentence: the status that the page announces after every step."""
    if confirm == "end_turn":
        return "Confirm below to end the turn, or go back."
    if confirm == "decline":
        return "Confirm below to put your race In Decline, or go back."
    phase = state.phase
    player = state.players[seat]
    hand = readied_hand if readied_hand is not None else (player.active.hand if player.active else 0)
    if phase == "pick":
        return f"Now pick a combo: you have {player.coins} coins."
    if phase in ("start", "conquer"):
        if choices.by_region:
            also = " or go In Decline" if "decline" in choices.simple else ""
            return (
                f"Now conquer: {hand} token{'s' if hand != 1 else ''} to conquer with. Choose a region with a cost "
                f"on the map or from a list; then end your conquests{also}."
            )
        return "No region can be conquered now: end your conquests and redeploy."
    if phase in ("redeploy", "defend"):
        # The instruction follows the state (issue 35): tokens still in hand, or every token on the map.
        finish = "end your turn" if phase == "redeploy" else "finish"
        if choices.end_turn:
            moving = " (or move tokens between your regions and save first)" if choices.redeploy else ""
            return f"Every token is on the map: {finish} when you are ready{moving}."
        if phase == "defend":
            return f"Place the tokens you got back on the regions you still hold, save, then {finish}."
        return f"Now place your tokens in hand: every region you hold keeps at least one. Save, then {finish}."
    return ""


def next_action(state: GameState, seat: int, choices: Choices) -> str | None:
    """Where the focus goes after a step (pages.js; issue 35): ``pick`` (the combos) before the pick,
    ``map`` while there is a region to act on, ``save`` for a redeployment still to save, ``end_turn`` once
    it is saved or nothing is left to place."""
    phase = state.phase
    if phase == "pick" and choices.picks:
        return "pick"
    if phase in ("start", "conquer") and choices.by_region:
        return "map"
    if phase in ("redeploy", "defend"):
        saved = state.last.get("kind") == "redeploy" and state.last.get("player") == seat
        if choices.redeploy and not saved:
            return "save"
        if choices.end_turn:
            return "end_turn"
    return None


def step_score(state: GameState, offered: list[rules.Action]) -> dict[str, Any] | None:
    """What the first of ``offered`` (a step that ends the turn) scores, from its preview (``rules.preview``)."""
    if not offered:
        return None
    score: dict[str, Any] | None = rules.preview(state, offered[0]).outcomes[0].score
    return score


class Previews:
    """``preview_of(action)`` for the template: what an offered action will do (``rules.preview``), each
    worked out once per page; None for a described choice still to make."""

    def __init__(self, state: GameState) -> None:
        self.state = state
        self.found: dict[rules.Action, rules.Preview | None] = {}

    def __call__(self, action: rules.Action) -> rules.Preview | None:
        if action not in self.found:
            try:
                self.found[action] = rules.preview(self.state, action)
            except rules.IllegalAction:
                self.found[action] = None
        return self.found[action]


def holder_words(public: dict[str, Any], names: list[str], region: int) -> list[dict[str, str]]:
    """Who holds ``region`` and what their race (and power, while Active) do: public, as the banners are."""
    held = public["regions"][region]
    owner, race = held.get("owner"), held.get("race")
    if owner is None or owner < 0 or not race or race not in rules.RACES:
        return []
    active = public["players"][owner].get("active") or {}
    who = name_of(owner, names)
    out = [{"name": f"{who}'s {race}", "summary": rules.RACES[race].summary}]
    if active.get("race") == race and active.get("power") in rules.POWERS:
        out.append({"name": active["power"], "summary": rules.POWERS[active["power"]].summary})
    else:
        out[0]["name"] += " (In Decline)"
    return out


def preview_words(ahead: rules.Preview | None, seat: int, region: int) -> str | None:
    """What an action on ``region`` will do, from the engine's preview (``rules.preview``): never a guess."""
    if ahead is None:
        return None
    if ahead.uses_die:
        wins = sum(o.chances for o in ahead.outcomes if _holds(o, seat, region))
        faces = sum(o.chances for o in ahead.outcomes)
        return f"The region is yours on {wins} of the die's {faces} faces; your conquests end either way."
    outcome = ahead.outcomes[0]
    parts = []
    if outcome.hand:
        parts.append("then in hand: " + ", ".join(f"{n} {race}" for race, n in sorted(outcome.hand.items())))
    if outcome.score_if_ended is not None:
        parts.append(f"ending the turn then would score {score_words(outcome.score_if_ended)}")
    return ("After this step, " + "; ".join(parts) + ".") if parts else None


def _holds(outcome: Any, seat: int, region: int) -> bool:
    return any(c.region == region and c.after.get("owner") == seat for c in outcome.regions)


def your_abilities(state: GameState, seat: int) -> list[dict[str, str]]:
    """The seat's Active race and power, in the rulebook's words (each ability's ``description``)."""
    troop = state.players[seat].active
    if troop is None:
        return []
    return [
        {"name": a.name, "summary": a.summary, "description": a.description, "source": a.cited()}
        for a in (rules.RACES[troop.race], rules.POWERS[troop.power])
    ]


def conquest_marks(state: GameState, seat: int, choices: Choices) -> dict[int, RegionMark]:
    """The tokens each possible conquest takes (``rules.conquest_cost``), for the map."""
    marks: dict[int, RegionMark] = {}
    player = state.players[seat]
    for key, by_region in choices.by_region.items():
        kind, _, troop_kind = key.partition(":")
        if kind not in ("conquer", "final_conquest"):
            continue
        troop = player.active if not troop_kind else conquering_declined(state, seat)
        if troop is None:
            continue
        for region in by_region:
            if region in marks and not marks[region].die:
                continue
            marks[region] = RegionMark(rules.conquest_cost(state, seat, troop, region), die=kind == "final_conquest")
    return marks


def cost_words(state: GameState, seat: int, region: int) -> str | None:
    """What conquering ``region`` takes and why, for the region's panel (``rules.conquest_breakdown``)."""
    troop = state.players[seat].active
    if troop is None or state.phase not in ("start", "conquer"):
        return None
    cost = rules.conquest_breakdown(state, seat, troop, region)
    return str(cost) if cost.allowed else None


@dataclass(frozen=True)
class MapTap:
    """What a tap (or Enter) on a region of the turn page's map does, in words and as the link's attributes.

    Only legal targets act: a region whose one legal action is a plain conquest conquers it at once
    (``data-action``, pages.js; undo takes it back). A region with other choices (the die, abandoning it, a
    power) opens its panel, and so does a region that offers nothing now, whose panel says why not; those are
    left out of the Tab order, which goes through the targets only. While redeploying, a tap on a region of
    yours moves tokens (pages.js: one from the first region tapped to the second)."""

    words: str
    attributes: dict[str, str]


def map_tap(state: GameState, choices: Choices, marks: dict[int, RegionMark], region: int) -> MapTap:
    actions = choices.for_region(region)
    conquests = [a for a in actions if a.type == "conquer"]
    mark = marks.get(region)
    cost = ""
    if mark is not None and mark.cost is not None:
        cost = f"costs {mark.cost}{' with the die' if mark.die else ''}: "
    if state.phase in ("redeploy", "defend") and any(region in a.regions for a in choices.redeploy):
        return MapTap("yours: select to move tokens", {"data-redeploy": f"tokens-{region}"})
    if len(conquests) == 1 and len(actions) == 1:
        attributes = {"data-action": "conquer"}
        if conquests[0].troop != "active":
            attributes["data-troop"] = conquests[0].troop
            return MapTap(f"{cost}conquer with the In Decline race", attributes)
        return MapTap(f"{cost}conquer", attributes)
    if len(actions) == 1 and actions[0].type == "final_conquest":
        return MapTap(f"{cost}final conquest, with the die (opens its choices)", {})
    if actions:
        kinds = sorted({label_of(a.type).lower() for a in actions})
        return MapTap(f"{cost}choose: {', '.join(kinds)}", {})
    return MapTap("details", {"tabindex": "-1"})


def region_name(state: GameState, region: int, words: str) -> str:
    """A region's accessible name as it is read: "Forest 7", then the rest of its description."""
    terrain = state.board.regions[region].terrain.capitalize()
    rest = words.split(", ")[2:] if words.startswith(f"Region {region}, ") else [words]
    return ", ".join([f"{terrain} {region}", *rest])


def why_not(state: GameState, seat: int, region: int, choices: Choices) -> str | None:
    """The rules' reason a conquest of ``region`` is refused, during the conquests (``apply`` is pure)."""
    if state.phase not in ("start", "conquer") or choices.for_region(region):
        return None
    try:
        rules.apply(state, {"type": "conquer", "player": seat, "region": region})
    except rules.IllegalAction as refusal:
        return str(refusal)
    return None


def redeploy_rows(state: GameState, choices: Choices) -> list[dict[str, Any]]:
    """One form per troop to redeploy: a number input per region, at least what it must keep.

    The inputs start with the tokens in hand already spread, one at a time onto the region with the
    fewest (ARCHITECTURE §4's rule), so saving at once is a sensible redeployment; the player changes what
    they like.
    """
    forms = []
    for choice in choices.redeploy:
        least = dict(choice.tokens)
        count = choice.count or 0
        values = {r: max(state.regions[r].tokens, least.get(r, 0)) for r in choice.regions}
        for _ in range(count - sum(values.values())):
            fewest = min(values, key=lambda r: (values[r], r))
            values[fewest] += 1
        saved = {r: state.regions[r].tokens for r in choice.regions}
        rows = [
            {
                "region": r,
                "label": region_label(state, r),
                "value": values[r],
                "min": least.get(r, 0),
                "saved": saved[r],
            }
            for r in choice.regions
        ]
        in_hand = count - sum(saved.values())
        forms.append({"troop": choice.troop, "count": count, "rows": rows, "in_hand": max(in_hand, 0)})
    return forms


def region_label(state: GameState, region: int) -> str:
    land = state.board.regions[region]
    return f"Region {region} · {land.terrain.capitalize()}"
