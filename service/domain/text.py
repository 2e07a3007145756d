"""Text that strangers type and other people read: names, addresses, time zones (ARCHITECTURE §9).

A name typed by a host ends up in other people's inboxes and pages. So it is trimmed, its runs of spaces
folded to one, and refused when it holds a character a reader cannot see or that changes how the text
around it reads: control characters, line breaks, zero-width and other format characters (Unicode
category ``Cf``, which holds the bidirectional overrides such as U+202E), unassigned and private-use code
points. An address must be one this service can actually mail: valid by ``email-validator``, and with an
ASCII local part unless the configured mail server is known to take internationalised addresses
(``SMALLWORLD_SMTP_INTERNATIONAL_ADDRESSES``; SMTPUTF8, RFC 6531). Domains are stored in their ASCII (IDNA)
form, which every mail server takes.

Each check raises :class:`pydantic_core.PydanticCustomError`, whose message is shown as it is, after the
field's name, by the API and the forms alike.

>>> printable_text("  Ann   Lee ", longest=40)
'Ann Lee'
>>> printable_text("\\u202egnp.exe", longest=40)
Traceback (most recent call last):
...
pydantic_core._pydantic_core.PydanticCustomError: contains an invisible character, U+202E (RIGHT-TO-LEFT OVERRIDE)
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from functools import cache
from zoneinfo import available_timezones

import email_validator
from flask import current_app, has_app_context
from pydantic_core import PydanticCustomError

from service.domain.errors import BadRequest

#: Unicode general categories refused in names: control, format (zero-width, bidi controls), surrogate,
#: private use, unassigned, line and paragraph separators.
REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
#: A name needs at least one character a reader sees as such: a letter, digit, punctuation or symbol.
VISIBLE_CATEGORIES = ("L", "N", "P", "S")


def _refuse(kind: str, message: str) -> PydanticCustomError:
    return PydanticCustomError(kind, message)


def printable_text(value: str, *, longest: int, blank_ok: bool = False) -> str:
    """``value`` trimmed, with runs of white space folded to one space, if it is 1 to ``longest`` printable
    characters (0 when ``blank_ok``)."""
    text = unicodedata.normalize("NFC", value).strip()
    for character in text:
        category = unicodedata.category(character)
        if category in REFUSED_CATEGORIES and character != " ":
            name = unicodedata.name(character, "")
            described = f"U+{ord(character):04X}" + (f" ({name})" if name else "")
            kind = "a control character" if category in ("Cc", "Zl", "Zp") else "an invisible character"
            raise _refuse("printable_text", f"contains {kind}, {described}")
    text = " ".join(text.split())
    if not text:
        if blank_ok:
            return ""
        raise _refuse("printable_text", "is blank")
    if not any(unicodedata.category(c).startswith(VISIBLE_CATEGORIES) for c in text):
        raise _refuse("printable_text", "has no visible character")
    if len(text) > longest:
        raise _refuse("printable_text", f"is longer than {longest} characters")
    return text


def mail_accepts_utf8() -> bool:
    """Whether the configured mail server is known to take internationalised addresses (SMTPUTF8)."""
    return has_app_context() and bool(current_app.config.get("SMTP_INTERNATIONAL_ADDRESSES"))


def mail_address(value: str) -> str:
    """``value`` as this service stores an address (lower case, IDNA domain), if it can be mailed."""
    utf8 = mail_accepts_utf8()
    try:
        checked = email_validator.validate_email(
            value.strip(), check_deliverability=False, allow_smtputf8=utf8, allow_quoted_local=False
        )
    except email_validator.EmailNotValidError as error:
        message = str(error)
        if not utf8 and "nternationalized" in message:
            raise _refuse(
                "mail_address",
                "cannot be mailed from this service: its mail server is not known to take addresses with "
                "accents or other non-ASCII letters before the @ (SMTPUTF8). Give another address",
            ) from None
        raise _refuse("mail_address", f"is not a valid address: {message.rstrip('.')}") from None
    address = checked.ascii_email or checked.normalized
    return address.lower()


@cache
def zones() -> frozenset[str]:
    return frozenset(available_timezones() | {"UTC"})


def known_zone(value: str) -> str:
    """``value`` if it names a time zone this server knows (an IANA name such as ``Europe/Paris``)."""
    if value not in zones():
        shown = value if len(value) <= 64 else value[:64] + "…"
        raise _refuse("time_zone", f"unknown time zone {shown!r} (use an IANA name such as Europe/Paris)")
    return value


def checked(label: str, check: Callable[[str], str], value: str) -> str:
    """``check(value)`` for a domain operation given text outside a request model: a refusal becomes a
    :class:`BadRequest` whose message starts with ``label`` (e.g. "The new player's name")."""
    try:
        return check(value)
    except PydanticCustomError as error:
        raise BadRequest(f"{label} {error.message()}") from None
