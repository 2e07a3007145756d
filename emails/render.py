"""Rendering a message from its templates: ``templates/<message>/{subject.txt, body.txt, body.html}``.

Jinja2, with autoescaping for the HTML only; the HTML's ``<style>`` is inlined into ``style`` attributes
with css-inline, since many mail clients drop style sheets (ARCHITECTURE §6). The plain-text part is complete on
its own: every link, the deadline and the final table are in it, not only in the HTML.

Rendering is pure: the same context, time and time zone give the same mail, byte for byte. That is what
lets a retried delivery send exactly the mail it may already have sent (``emails.compose``).

What a kind of mail is (its template, audience, unsubscribe category, picture, replies, calendar) is its
:class:`MailKind`, declared on its message class in ``emails.messages``, which also builds the values its
templates read (``Message.values``); this module turns those values into a mail (:func:`write`).
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

from . import admin_acts, times
from .board import png
from .board.public import PublicBoard

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

#: To whom a kind of mail goes (:attr:`MailKind.audience`): a player about their own seat or game, the host
#: of a game about others' seats, or an address as such, before it takes part in anything (a game to
#: confirm, a sign-in link): that one has no page of mail choices to link.
PLAYER = "player"
HOST = "host"
ADDRESS = "address"

#: What a reply to a mail does (:attr:`MailKind.replies`): its reply address names the seat and the step, and
#: the mail says how to answer with orders (ARCHITECTURE §10); or it names the seat, and the answer is posted at
#: the table.
ORDERS = "orders"
AT_THE_TABLE = "at the table"


@dataclass(frozen=True)
class MailKind:
    """A kind of mail's policy, declared once on its message class (``emails.messages``, ARCHITECTURE §6)
    and read from there by the renderer and by delivery, which mints the links it names at sending.

    >>> kind = MailKind("reminder", REMINDER, required=("deadline_at",), replies=ORDERS, calendar=True)
    >>> kind.unsubscribe, kind.choices, kind.replies
    ('reminders', True, 'orders')
    """

    #: Its folder under ``emails/templates``.
    template: str
    #: ``essential``, ``reminder``, ``notice``, ``talk`` or ``digest``: whether and how a reader may turn it
    #: off (``service.domain.notifications``), and its unsubscribe link.
    category: str
    #: Fields it cannot go out without, beyond their type: they must not be empty either.
    required: tuple[str, ...] = ()
    #: Its dedupe key, of its fields (``str.format``): it names the event the mail is about, so that the event
    #: writes one mail. Rows in databases rely on the keys: a kind's never changes shape.
    dedupe: str = ""
    #: :data:`PLAYER`, :data:`HOST` or :data:`ADDRESS`.
    audience: str = PLAYER
    #: It carries the picture of its board.
    picture: bool = False
    #: :data:`ORDERS`, :data:`AT_THE_TABLE`, or ``None``: a reply to it is not read.
    replies: str | None = None
    #: Its footer offers the reader's calendar feed (the mails about a deadline).
    calendar: bool = False
    #: A mail about a game that keeps a subject of its own instead of the game's (:func:`conversation_subject`):
    #: one asked for on a page, not part of the game's course (the reader's links).
    own_subject: bool = False

    @property
    def unsubscribe(self) -> str | None:
        """The kind of its unsubscribe link (``links.LinkMaker.unsubscribe_url``), which turns off its category
        alone; ``None`` for mail that cannot be turned off (essential) or is asked for (the digest)."""
        return _UNSUBSCRIBE.get(self.category, (None, None))[0]

    @property
    def choices(self) -> bool:
        """Its footer links the reader's page of mail choices: all but mail to an address as such."""
        return self.audience != ADDRESS


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
    #: What the mail is (its template's ``subject.txt``): its subject, or, in a game's conversation, the
    #: first line of its text and its preheader.
    headline: str = ""


def write(
    template: str, values: dict[str, Any], images: dict[str, bytes] | None = None, *, subject: str | None = None
) -> Rendered:
    """The mail of ``template`` from the values of one reader's mail, as its message builds them
    (``emails.messages.Message.values``): its subject, its plain text and its HTML.

    The template's ``subject.txt`` says what the mail is (its ``headline``). A mail of a game's conversation
    has the game's ``subject`` instead (:func:`conversation_subject`): its headline is then the first line of
    its text and its HTML's preheader, the line a mail client shows beside the subject in a list."""
    headline = " ".join(_env.get_template(f"{template}/subject.txt").render(values).split())
    values["headline"] = headline
    values["subject"] = subject or headline
    values["preheader"] = headline if subject else None
    text = _tidy_text(_env.get_template(f"{template}/body.txt").render(values))
    if subject:
        text = f"{headline}\n\n{text}"
    html = _html(_env.get_template(f"{template}/body.html"), values)
    return Rendered(
        message=template, subject=values["subject"], text=text, html=html, images=images or {}, headline=headline
    )


#: How the subject of a game's conversation starts (:func:`conversation_subject`).
CONVERSATION = "Small World: "


def read_headline(subject: str, text: str) -> str:
    """What a mail is, read back from its subject and its plain text: the subject, or, in a game's conversation,
    the text's first line (as a mail reader that files by kind, such as the demo's bots, reads it).

    >>> read_headline("Small World: Friday", "Friday: your turn (turn 2 of 9)\\n\\nHello Ann,\\n")
    'Friday: your turn (turn 2 of 9)'
    >>> read_headline("Your sign-in link to Small World by Mail", "Hello,\\n")
    'Your sign-in link to Small World by Mail'

    An answer to a player's mail in the conversation (``Re:`` its subject) reads the same way:

    >>> read_headline("Re: Small World: Friday", "Done in Friday\\n\\nHello Ann,\\n")
    'Done in Friday'
    """
    in_conversation = REPLY_PREFIX.sub("", subject).startswith(CONVERSATION)
    return text.split("\n", 1)[0].strip() if in_conversation else subject


#: The prefixes mail clients put before a subject they answer, in the languages of the clients' quote headers
#: the service reads ("Re:", "RE:", "AW:", "SV:", "Réf. :", "R:", "RV:"...), repeated; an answer of ours says
#: "Re:" (``emails.messages.Replying``).
REPLY_PREFIX = re.compile(r"(?i)^(?:\s*(?:re|aw|sv|vs|antw|réf\.?|rif|r|rv|ref)\s*(?:\[\d+\])?\s*:\s*)+")


def conversation_subject(game_name: str) -> str:
    """The one subject of every mail of a game's conversation (ARCHITECTURE §6): Gmail files mails in one
    conversation only when their subjects agree, whatever their ``References`` say.

    >>> conversation_subject("Friday night")
    'Small World: Friday night'
    """
    return f"{CONVERSATION}{game_name}"


def add_board(values: dict[str, Any], board: Mapping[str, Any] | None, picture: bool) -> dict[str, bytes]:
    """Adds a mail's board in words to ``values`` (``board_lines``), and with ``picture`` its picture:
    returned as the mail's inline images, named in ``values`` (``board_cid``, ``board_size``)."""
    if not board or not board.get("regions"):
        return {}
    # What every reader of the game state sees alike, as text: the key of what is worded and drawn once.
    public = public_key(board)
    you = board.get("you")
    if public is not None and (you is None or isinstance(you, int)):
        values["board_lines"] = list(_board_lines(public, you))
    else:
        values["board_lines"] = board_lines(board)
    values["board_key"] = board_key(board)
    if not picture:
        return {}
    drawn = _picture(public) if public is not None else png.drawn(PublicBoard.from_mail(board))
    values["board_cid"] = BOARD_CID
    values["board_size"] = (drawn.width, drawn.height)
    return {BOARD_CID: drawn.data}


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


def breakable(address: str) -> list[str]:
    """``address`` in the pieces a line may break between (after a ``/``, before a ``.``): the HTML joins them
    with ``<wbr>``, so that a phone breaks a long address there, never in the middle of a word.

    >>> breakable("webcal://smallworld.example/calendar/eyJwIjo0fQ.ZZ8aQw.sig.ics")
    ['webcal://', 'smallworld', '.example/', 'calendar/', 'eyJwIjo0fQ', '.ZZ8aQw', '.sig', '.ics']
    """
    return [piece for piece in _BREAKS.split(address) if piece]


_BREAKS = re.compile(r"(?<=/)(?!/)|(?=\.)")


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
    #: Time remaining when the mail was written, e.g. "1 day 23 hours left" (``times.left_words``).
    left: str


def deadline(value: Any, now: datetime, time_zone: str | None) -> Deadline | None:
    """A mail's deadline for its reader: in their time zone, and the time left from ``now``."""
    at = times.parse(value)
    if at is None:
        return None
    return Deadline(at=at, local=_local_time(at, time_zone), left=times.left_words(at - now))


#: A deadline in a reader's zone, written once for all the readers in that zone (a mail per reader of a step).
_local_time = functools.lru_cache(maxsize=1024)(times.local_time)


def board_key(board: Mapping[str, Any]) -> list[str]:
    """The picture's key in words (the picture has none): each seat's number, as its badges show it, its player
    and races.

    >>> board_key({"players": [{"name": "Ann", "active": "Orcs (Seafaring)", "declined": ["Ratmen"]},
    ...                        {"name": "Bob", "active": None, "declined": []}], "you": 1})
    ['1: Ann, Orcs (Seafaring); Ratmen In Decline', '2: Bob (you), no race yet']
    """
    key = []
    for seat, player in enumerate(board.get("players") or ()):
        races = ([player["active"]] if player.get("active") else []) + [
            f"{r} In Decline" for r in player.get("declined") or ()
        ]
        name = player["name"] + (" (you)" if seat == board.get("you") else "")
        key.append(f"{seat + 1}: {name}, " + ("; ".join(races) if races else "no race yet"))
    return key


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


#: Each category that a reader may turn off: the kind of its unsubscribe link, and the footer's words for it.
_UNSUBSCRIBE = {
    REMINDER: ("reminders", "Stop these reminders"),
    # Not "stop these notices": SpamAssassin's END_FUTURE_EMAILS reads those words as a spammer's unsubscribe.
    NOTICE: ("notices", "Turn off notices like this one"),
    TALK: ("messages", "Stop mails of table talk"),
}


def unsubscribe_label(category: str) -> str | None:
    """The footer's words for the unsubscribe link of ``category``."""
    return _UNSUBSCRIBE.get(category, (None, None))[1]


def ordinal(n: int) -> str:
    """
    >>> ordinal(1), ordinal(12), ordinal(23)
    ('1st', '12th', '23rd')
    """
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# -- the HTML, its style inlined once per shape ------------------------------------------------------------
#: Values that go into the HTML only as text (never tested but for being there, never filtered): the reader's
#: own, and the game's. Each is rendered as a marker, so that the mails that differ only in them share one
#: shape, whose style is inlined once (:func:`_html`).
_AS_TEXT = (
    "player_name",
    "game_name",
    "game_url",
    "guide_url",
    "choices_url",
    "calendar_url",
    "calendar_webcal",
    "unsubscribe_url",
    "reply_address",
    "subject",
    "headline",
    "preheader",
)
#: Lists of such values.
_LISTS_AS_TEXT = ("board_lines", "board_key", "since", "calendar_webcal_parts")
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
_env.filters["ordinal"] = ordinal
_env.filters["actor"] = lambda actor: admin_acts.who(actor, capital=False)
_inliner = css_inline.CSSInliner()
