"""Rendering a message from its templates: ``templates/<message>/{subject.txt, body.txt, body.html}``.

Jinja2, with autoescaping for the HTML only; the HTML's ``<style>`` is inlined into ``style`` attributes
with css-inline, since many mail clients drop style sheets (ARCHITECTURE §6). The plain-text part is complete on
its own: every link, the deadline and the final table are in it, not only in the HTML.

Rendering is pure: the same context, time and time zone give the same mail, byte for byte. That is what
lets a retried delivery send exactly the mail it may already have sent (``emails.compose``).
"""

from __future__ import annotations

import functools
import json
import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import css_inline
from jinja2 import Environment, FileSystemLoader, Template, Undefined, select_autoescape
from markupsafe import Markup

from . import admin_acts, times
from .board import png
from .board.public import PublicBoard
from .table_talk import excerpt, message_html

TEMPLATES = Path(__file__).parent / "templates"

#: Mail a player cannot turn off: it carries what they need to play.
ESSENTIAL = "essential"
#: Reminders before a deadline (``Player.wants_reminders``).
REMINDER = "reminder"
#: Everything else that informs without asking anything (``Player.wants_notices``).
NOTICE = "notice"
#: Table talk: what players write to each other (``Player.wants_messages``).
TALK = "talk"
#: The daily digest: sent only to those who chose it (``Player.notify``, ``GameNotification``).
DIGEST = "digest"

#: Every message, with its category (which decides the unsubscribe link and the player's preference). Each
#: has its typed fields and dedupe key in ``emails.messages``.
MESSAGES: dict[str, str] = {
    "invitation": ESSENTIAL,
    "confirm_game": ESSENTIAL,
    "admin_link": ESSENTIAL,
    "admin_login": ESSENTIAL,
    "sign_in": ESSENTIAL,
    "your_links": ESSENTIAL,
    "your_turn": ESSENTIAL,
    "redeploy_needed": ESSENTIAL,
    "reminder": REMINDER,
    "auto_passed": NOTICE,
    "admin_change": NOTICE,
    "host_alert": NOTICE,
    # The answer to a player's own mail of orders, and a host's news that a player's mail bounces.
    "orders_answer": ESSENTIAL,
    "bounce_alert": ESSENTIAL,
    # The final results are never silenced, whatever the player turned off (ARCHITECTURE §9).
    "game_over": ESSENTIAL,
    "seat_to_bot": ESSENTIAL,
    "table_talk": TALK,
    "daily_digest": DIGEST,
}

#: Messages that may be answered by mail: those that ask for orders carry the seat's signed reply address
#: for the step (``Reply-To``), when delivery gives it, and say how to answer with orders; a table-talk
#: mail's reply address posts the answer at the table.
REPLY_MESSAGES = frozenset({"your_turn", "redeploy_needed", "reminder", "orders_answer", "table_talk"})

#: Messages whose footer offers the reader's calendar feed (every deadline of their games), when delivery
#: gives its address (``calendar_url``): the mails about a deadline.
CALENDAR_MESSAGES = frozenset({"your_turn", "reminder"})

#: Messages whose footer links the reader's page of mail choices (``choices_url``): all but those that
#: go to an address before it takes part in anything (a game to confirm, a sign-in link).
CHOICES_MESSAGES = frozenset(MESSAGES) - {"confirm_game", "admin_login", "sign_in"}

#: Context keys a message cannot go out without; anything else is optional in its templates.
REQUIRED: dict[str, tuple[str, ...]] = {
    "invitation": ("game_name", "player_name", "players"),
    "confirm_game": ("game_name", "host_email", "players", "confirm_url", "block_url"),
    "admin_link": ("game_name", "admin_url"),
    "admin_login": ("login_url", "valid_minutes"),
    "sign_in": ("sign_in_url", "valid_minutes"),
    "your_links": ("game_name", "seats"),
    "your_turn": ("game_name", "player_name", "turn_url", "turn", "turns"),
    "redeploy_needed": ("game_name", "player_name", "turn_url", "turn", "turns"),
    "reminder": ("game_name", "player_name", "turn_url", "deadline_at"),
    "auto_passed": ("game_name", "player_name"),
    "admin_change": ("game_name", "player_name", "change"),
    "host_alert": ("game_name", "player_name", "auto_passes"),
    "game_over": ("game_name", "player_name", "standings"),
    "orders_answer": ("game_name", "player_name", "turn_url"),
    "bounce_alert": ("game_name", "player_name", "address", "admin_url"),
    "seat_to_bot": ("game_name", "player_name", "take_back_url"),
    "table_talk": ("game_name", "player_name", "author", "text"),
    "daily_digest": ("player_name", "local_date"),
}

#: Plain-text lines are wrapped at this width (URLs are never broken).
TEXT_WIDTH = 72

BOARD_CID = "board-picture@smallworld"


class RenderError(ValueError):
    """The message cannot be rendered (unknown message, missing context): a permanent failure."""


@dataclass(frozen=True)
class Rendered:
    message: str
    subject: str
    text: str
    html: str
    #: Inline images by Content-ID (without the angle brackets), referenced as ``cid:`` in the HTML.
    images: dict[str, bytes] = field(default_factory=dict)

    @property
    def category(self) -> str:
        return MESSAGES[self.message]


def render(
    message: str,
    context: Mapping[str, Any],
    *,
    now: datetime,
    time_zone: str | None = "UTC",
    game_url: str | None = None,
    unsubscribe_url: str | None = None,
    pictures: bool = True,
    calendar_url: str | None = None,
    reply_address: str | None = None,
    choices_url: str | None = None,
) -> Rendered:
    """Render ``message`` for one reader.

    ``now`` is when the mail is written (its ``Date``): time remaining is counted from it. ``time_zone`` is
    the reader's. ``game_url`` is the reader's own link to the game (their seat), for messages that carry
    no link of their own. ``unsubscribe_url`` adds the footer link of reminders and notices.
    ``calendar_url`` (the ``https://`` address of the reader's calendar feed) adds "Add your deadlines to
    your calendar" to the footer of the :data:`CALENDAR_MESSAGES`, in its ``webcal://`` and ``https://``
    forms. ``reply_address`` (the mail's ``Reply-To``, a signed address for orders by mail) makes the
    :data:`REPLY_MESSAGES` say how to play by replying. ``choices_url`` (the reader's page of mail choices)
    adds "Choose which mails you get" to the footer.
    """
    if message not in MESSAGES:
        raise RenderError(f"unknown message {message!r}")
    missing = [key for key in REQUIRED[message] if context.get(key) in (None, "")]
    if missing:
        raise RenderError(f"{message}: the context lacks {', '.join(missing)}")
    values: dict[str, Any] = dict(context)
    values.update(
        message=message,
        category=MESSAGES[message],
        game_url=game_url or context.get("game_url"),
        # Essential mail cannot be turned off: it never offers to.
        unsubscribe_url=unsubscribe_url if MESSAGES[message] != ESSENTIAL else None,
        unsubscribe_label=_UNSUBSCRIBE_LABELS.get(MESSAGES[message]),
        calendar_url=calendar_url if message in CALENDAR_MESSAGES else None,
        calendar_webcal=webcal(calendar_url) if calendar_url and message in CALENDAR_MESSAGES else None,
        choices_url=choices_url if message in CHOICES_MESSAGES else None,
        deadline=_deadline(context.get("deadline_at"), now, time_zone),
        time_zone=times.zone(time_zone).key,
        reply_address=reply_address if message in REPLY_MESSAGES else None,
    )
    values["personal_link"] = any(values.get(k) for k in ("turn_url", "invite_url", "admin_url", "game_url", "seats"))
    images: dict[str, bytes] = {}
    board = context.get("board")
    if board and board.get("regions"):
        # What every reader of the game state sees alike, as text: the key of what is worded and drawn once.
        public = public_key(board)
        you = board.get("you")
        if public is not None and (you is None or isinstance(you, int)):
            values["board_lines"] = list(_board_lines(public, you))
        else:
            values["board_lines"] = board_lines(board)
        if pictures and message in ("your_turn", "orders_answer"):
            picture = _picture(public) if public is not None else png.drawn(PublicBoard.from_mail(board))
            images[BOARD_CID] = picture.data
            values["board_cid"] = BOARD_CID
            values["board_size"] = (picture.width, picture.height)
    _PREPARE.get(message, lambda v: None)(values)

    subject = " ".join(_env.get_template(f"{message}/subject.txt").render(values).split())
    values["subject"] = subject
    text = _tidy_text(_env.get_template(f"{message}/body.txt").render(values))
    html = _html(_env.get_template(f"{message}/body.html"), values)
    return Rendered(message=message, subject=subject, text=text, html=html, images=images)


def prepare() -> None:
    """Compile every template now. A mail worker does this as it starts (``worker/tasks/mail.py``), before its
    pool's processes are forked, so that they share the compiled templates; otherwise each process compiles
    a kind of mail's templates (and the layout, the macros and the parts they include) in the middle of the
    drain that sends its first mail of that kind."""
    for name in _env.list_templates():
        _env.get_template(name)


def public_key(board: Mapping[str, Any]) -> str | None:
    """The public part of a mail's board (which board, its players, its regions; not whose mail it is) as
    compact JSON: the same for every reader of a game state, and only for boards that read and draw alike.
    ``None`` for a board that is not JSON (a context built by hand): it is then worded and drawn directly.

    Building the :class:`PublicBoard` and hashing it to find its picture cost more than the rest of a
    mail's rendering; this string is made in a fraction of that, and :func:`_picture` and
    :func:`_board_lines` are computed from it alone (so no cached value can be another board's).

    >>> public_key({"board": "2-players", "players": [], "regions": [{"terrain": "sea"}], "you": 1})
    '["2-players",[],[{"terrain":"sea"}]]'
    """
    try:
        return json.dumps([board.get("board"), board["players"], board["regions"]], separators=(",", ":"))
    except (TypeError, ValueError):
        return None


@functools.lru_cache(maxsize=64)
def _picture(public: str) -> png.Picture:
    """The picture of the board ``public`` names (:func:`public_key`), drawn once per game state."""
    name, players, regions = json.loads(public)
    return png.drawn(PublicBoard.from_mail({"board": name, "players": players, "regions": regions}))


@functools.lru_cache(maxsize=256)
def _board_lines(public: str, you: int | None) -> tuple[str, ...]:
    """:func:`board_lines` of the board ``public`` names (:func:`public_key`), as reader ``you`` reads it."""
    name, players, regions = json.loads(public)
    return tuple(board_lines({"board": name, "players": players, "regions": regions, "you": you}))


def webcal(url: str) -> str:
    """The ``webcal://`` form of a feed's ``https://`` address: calendar apps open it as a subscription.

    >>> webcal("https://smallworld.example/calendar/abc.ics")
    'webcal://smallworld.example/calendar/abc.ics'
    """
    return "webcal://" + url.split("://", 1)[-1]


@dataclass(frozen=True)
class Deadline:
    at: datetime
    #: In the reader's time zone, e.g. "Tuesday 3 March 2026, 14:00 CET (Europe/Paris)".
    local: str
    #: Time remaining when the mail was written, e.g. "1 day 23 hours".
    left: str


def _deadline(value: Any, now: datetime, time_zone: str | None) -> Deadline | None:
    at = times.parse(value)
    if at is None:
        return None
    return Deadline(at=at, local=_local_time(at, time_zone), left=times.time_left(at - now))


#: A deadline in a reader's zone, written once for all the readers in that zone (a mail per reader of a step).
_local_time = functools.lru_cache(maxsize=1024)(times.local_time)


def board_lines(board: Mapping[str, Any]) -> list[str]:
    """The board in words, one line per player: their troops and the regions each holds (with tokens)."""
    holdings: dict[tuple[int, bool], list[str]] = {}
    for number, region in enumerate(board["regions"]):
        if region.get("owner") is not None:
            key = (region["owner"], bool(region.get("declined")))
            # A no-break space keeps "13 (2)" together when the line is wrapped.
            holdings.setdefault(key, []).append(f"{number}\u00a0({region.get('tokens', 0)})")
    lines = []
    for seat, player in enumerate(board["players"]):
        name = player["name"] + (" (you)" if seat == board.get("you") else "")
        parts = []
        if player.get("active"):
            held = holdings.get((seat, False))
            parts.append(f"{player['active']} in " + ", ".join(held) if held else f"{player['active']}, no region yet")
        declined = holdings.get((seat, True))
        if player.get("declined"):
            races = " and ".join(player["declined"])
            parts.append(f"{races} In Decline in " + ", ".join(declined) if declined else f"{races} In Decline")
        lines.append(f"{name}: " + ("; ".join(parts) if parts else "no race yet"))
    lost = [str(n) for n, r in enumerate(board["regions"]) if r.get("owner") is None and r.get("race")]
    if lost:
        lines.append("Lost Tribes: " + ", ".join(lost))
    lines.append("(region number, then tokens in brackets)")
    return lines


# -- message-specific values ------------------------------------------------------------------------------
_UNSUBSCRIBE_LABELS = {
    REMINDER: "Stop these reminders",
    NOTICE: "Stop these notices",
    TALK: "Stop mails of table talk",
}


def _prepare_admin_change(values: dict[str, Any]) -> None:
    kind = admin_acts.CHANGES[values["change"]]
    act = admin_acts.AdminAct(
        kind, values.get("actor"), values.get("details") or {}, deadline=times.parse(values.get("deadline_at"))
    )
    reader = admin_acts.Reader(
        "mail", names=values.get("names") or (), viewer=values.get("seat"), time_zone=values["time_zone"]
    )
    values["change_title"] = admin_acts.title(kind)
    values["change_text"] = admin_acts.told(act, reader)


def _prepare_game_over(values: dict[str, Any]) -> None:
    standings = values["standings"]
    you = values.get("your_seat")
    places: dict[int, int] = {}
    for row in standings:
        places[row["place"]] = places.get(row["place"], 0) + 1
    rows = [
        dict(row, you=row.get("player") == you, shared=places[row["place"]] > 1, name=row.get("name") or "?")
        for row in sorted(standings, key=lambda r: (r["place"], r.get("player", 0)))
    ]
    values["rows"] = rows
    values["your_row"] = next((r for r in rows if r["you"]), None)
    winners = [r for r in rows if r["place"] == 1]
    names = _and([w["name"] for w in winners])
    top = winners[0]
    if len(winners) > 1:
        values["verdict"] = (
            f"{names} share the victory with {top['coins']} coins each and {top['tokens_on_board']} race tokens on "
            "the board each: the tie-break could not part them."
        )
        values["verdict_short"] = f"{names} share the victory"
    else:
        values["verdict"] = f"{top['name']} wins with {top['coins']} coins."
        values["verdict_short"] = f"{top['name']} wins"
    tied = [r for r in rows if r["coins"] == top["coins"]]
    if len(tied) > 1 and len(winners) == 1:
        others = [r for r in tied if r is not top]
        values["tie_break_note"] = (
            f"Tie-break: {_and([r['name'] for r in tied])} {'both' if len(tied) == 2 else 'all'} had {top['coins']} "
            "coins; the tie goes to the most "
            f"race tokens on the board (Active and In Decline): {top['name']} had {top['tokens_on_board']}, "
            + _and([f"{r['name']} {r['tokens_on_board']}" for r in others])
            + "."
        )
    elif any(r["tie_break"] for r in rows if r["place"] != 1):
        values["tie_break_note"] = (
            "Players with the same coins are ranked by race tokens on the board (Active and In Decline)."
        )
    values["table_text"] = _table(rows)


def _table(rows: list[dict[str, Any]]) -> str:
    width = max(6, *(len(r["name"]) + (6 if r["you"] else 0) for r in rows))
    lines = [f"  {'Place':<6} {'Player':<{width}} {'Coins':>5}  Tokens on the board"]
    for r in rows:
        place = _ordinal(r["place"]) + ("=" if r["shared"] else "")
        name = r["name"] + (" (you)" if r["you"] else "")
        lines.append(f"  {place:<6} {name:<{width}} {r['coins']:>5}  {r['tokens_on_board']:>5}")
    return "\n".join(lines)


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _prepare_redeploy(values: dict[str, Any]) -> None:
    values.setdefault("defending", True)


def _prepare_reminder(values: dict[str, Any]) -> None:
    if values["deadline"] is None:  # required, so only a malformed date gets here
        raise RenderError("reminder: the deadline is missing")


def _prepare_table_talk(values: dict[str, Any]) -> None:
    # The message's HTML is cleaned by emails.table_talk (an allow-list): it goes into the mail as it is.
    values["text_html"] = Markup(message_html(values["text"]))
    values["excerpt"] = excerpt(values["text"], 60)
    posted = times.parse(values.get("posted_at"))
    values["posted_local"] = times.local_time(posted, values["time_zone"]) if posted else None


def _prepare_daily_digest(values: dict[str, Any]) -> None:
    tz = values["time_zone"]
    day = datetime.fromisoformat(values["local_date"])
    values["day"] = f"{day:%A} {day.day} {day:%B %Y}"
    games = []
    for game in values.get("games") or []:
        at = times.parse(game.get("deadline_at"))
        games.append(dict(game, deadline=times.local_time(at, tz) if at else None))
    values["game_rows"] = games
    talk = []
    for said in values.get("talk") or []:
        at = times.parse(said.get("posted_at"))
        talk.append(dict(said, at=times.local_time(at, tz) if at else "", html=Markup(message_html(said["text"]))))
    values["talk_rows"] = talk
    # The digest says itself that its links are personal (of several games, not of one).
    values["personal_link"] = False


_PREPARE = {
    "admin_change": _prepare_admin_change,
    "daily_digest": _prepare_daily_digest,
    "table_talk": _prepare_table_talk,
    "game_over": _prepare_game_over,
    "redeploy_needed": _prepare_redeploy,
    "reminder": _prepare_reminder,
}


# -- the HTML, its style inlined once per shape ------------------------------------------------------------
#: Values that go into the HTML only as text (never tested but for being there, never filtered): the reader's
#: own, and the game's. Each is rendered as a marker, so that the mails that differ only in them share one
#: shape, whose style is inlined once (:func:`_html`).
_AS_TEXT = (
    "player_name",
    "game_name",
    "turn_url",
    "game_url",
    "guide_url",
    "choices_url",
    "calendar_url",
    "calendar_webcal",
    "unsubscribe_url",
    "reply_address",
    "subject",
)
#: Lists of such values.
_LISTS_AS_TEXT = ("board_lines", "since")
_MARKER = re.compile("\ue000([0-9]+)\ue001")
#: What a value standing for a marker may hold: characters that the HTML parser of the inliner reads back as
#: they are and its writer writes alike in text and in an attribute (it writes ``<``, ``>`` and ``"`` as
#: they are in one and escaped in the other), and not the markers' own.
_AS_IS = re.compile('[^\x00-\x08\x0b-\x1f\x7f-\x9f<>"\ue000\ue001]*')


def _html(template: Template, values: dict[str, Any]) -> str:
    """The template's HTML with its style inlined (css-inline), as ``_inliner.inline(template.render(values))``
    gives it, byte for byte.

    Inlining parses and writes the whole page, and was a tenth of the time of a turn mail. The page is
    rendered with a marker in place of each of the :data:`_AS_TEXT` values, inlined once for that shape and
    kept (:func:`_inlined_shape`), and the values are written into it as the inliner writes text: mails to
    other readers, in other games, share the shape. A value the inliner would not write back as it is
    (a control character, a quote or an angle bracket) makes the page inlined whole, as before.
    """
    marked = dict(values)
    texts: list[str] = []

    def marker(value: Any) -> Any:
        if not isinstance(value, str) or not value:
            return value
        if _AS_IS.fullmatch(value) is None:
            raise _NotAsText
        texts.append(value.replace("&", "&amp;").replace("\u00a0", "&nbsp;"))
        return f"\ue000{len(texts) - 1}\ue001"

    try:
        for key in _AS_TEXT:
            if key in marked:
                marked[key] = marker(marked[key])
        for key in _LISTS_AS_TEXT:
            if isinstance(marked.get(key), list):
                marked[key] = [marker(item) for item in marked[key]]
        deadline = marked.get("deadline")
        if isinstance(deadline, Deadline):
            # Not its time left: a template writes it with its first letter capitalised.
            marked["deadline"] = Deadline(at=deadline.at, local=marker(deadline.local), left=deadline.left)
    except _NotAsText:
        return _inliner.inline(template.render(values))
    parts = _inlined_shape(template.render(marked))
    return "".join(texts[part] if isinstance(part, int) else part for part in parts)


class _NotAsText(Exception):
    """A value the shape of a page cannot stand for (see :data:`_AS_IS`)."""


@functools.lru_cache(maxsize=256)
def _inlined_shape(shape: str) -> tuple[str | int, ...]:
    """The page ``shape`` with its style inlined: its text, and for each marker the number of the value that
    goes there."""
    inlined = _inliner.inline(shape)
    pieces = _MARKER.split(inlined)
    return tuple(int(piece) if odd else piece for odd, piece in ((n % 2 == 1, p) for n, p in enumerate(pieces)))


# -- text tidying -----------------------------------------------------------------------------------------
_URL = re.compile(r"^\s*https?://\S+$")


def _tidy_text(text: str) -> str:
    """Wrap long lines (never a URL), drop trailing spaces (but the "-- " signature separator), one final
    newline, at most one blank line in a row."""
    lines: list[str] = []
    for line in text.splitlines():
        if line != "-- ":
            line = line.rstrip()
        if len(line) > TEXT_WIDTH and not _URL.match(line):
            lines.extend(_wrapped(line))
        elif line or (lines and lines[-1]):
            lines.append(line)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


@functools.lru_cache(maxsize=4096)
def _wrapped(line: str) -> tuple[str, ...]:
    """``line`` wrapped to :data:`TEXT_WIDTH`, a continuation indented two more spaces than an indented line;
    kept, since most long lines (the board, the rules' reminders) read the same in every reader's mail."""
    indent = line[: len(line) - len(line.lstrip())]
    return tuple(
        textwrap.wrap(
            line,
            TEXT_WIDTH,
            subsequent_indent=indent + ("  " if indent else ""),
            break_long_words=False,
            break_on_hyphens=False,
        )
    )


_env = Environment(
    loader=FileSystemLoader(TEMPLATES),
    autoescape=select_autoescape(enabled_extensions=("html",), default_for_string=False),
    # Optional keys are simply absent from some contexts ({% if replacing %}); required ones are checked
    # above. Attribute typos in templates still fail the snapshot tests.
    undefined=Undefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    # The templates do not change while a process runs: Jinja would otherwise look at the files of a
    # template and of each one it extends or includes, at every mail.
    auto_reload=False,
    # Every compiled template kept in a plain dictionary (there are a few dozen): Jinja's default cache is a
    # locked LRU list that moves the template it finds to its front, and a turn mail looks up eight (its
    # three, the layout, the macros, the parts it includes), each time it is rendered.
    cache_size=-1,
)
_env.filters["duration"] = times.duration
_env.filters["ordinal"] = _ordinal
_env.filters["actor"] = lambda actor: admin_acts.who(actor, capital=False)
_inliner = css_inline.CSSInliner()
