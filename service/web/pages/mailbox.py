"""The local mailbox of the embedded mode: the mails the ``file`` backend wrote, readable in the browser.

A newcomer runs ``smallworld serve``, creates a game, and plays every seat from this page by clicking the
links in the mails. It holds every player's signed links, so it answers only a browser on this machine (a
loopback client address), and never in production: every route answers 404 otherwise. The ``.eml`` files
in ``MAIL_DIR`` are read with the standard library's parser; nothing here writes.
"""

from __future__ import annotations

import base64
import ipaddress
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import getaddresses, parsedate_to_datetime
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, abort, current_app, render_template, request
from markupsafe import Markup, escape

from emails.render import read_headline
from service.infra.config import PRODUCTION

bp = Blueprint("mailbox", __name__, url_prefix="/mailbox")

#: File names the mail backend writes (``<date>-<digest>.eml``); anything else is not ours to show.
MAIL_FILE = re.compile(r"^[\w-]+\.eml$")
URL = re.compile(r"https?://[^\s<>\"']+")
#: A picture of the mail itself (``src="cid:…"``, RFC 2392).
CID = re.compile(r"cid:([^\s\"'>)]+)")
#: A mail's HTML is written for mail clients: its styles are inline (``style="…"`` and a ``<style>`` block)
#: and its pictures are parts of the mail. Shown alone, it gets a policy of its own that lets those styles
#: apply, with the pictures as ``data:`` addresses; still no script, no frame, nothing from another site.
MAIL_HTML_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)


def mailbox_available() -> bool:
    """Whether this request may see the mailbox: development, and a client on this machine."""
    return current_app.config["ENV"] != PRODUCTION and _from_this_machine()


def _from_this_machine() -> bool:
    try:
        address = ipaddress.ip_address(request.remote_addr or "")
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


@bp.before_request
def _development_only() -> None:
    if not mailbox_available():
        abort(404)


@dataclass(frozen=True)
class Mail:
    name: str
    to: list[str]
    sender: str
    subject: str
    #: What the mail is: its subject, or the first line of a mail of a game's conversation (whose subject is the
    #: game's, ``emails.render.read_headline``).
    headline: str
    date: datetime
    text: str | None
    html: str | None


def read_mail(path: Path) -> Mail:
    with path.open("rb") as handle:
        message = BytesParser(policy=policy.default).parse(handle)
    assert isinstance(message, EmailMessage)
    try:
        date = parsedate_to_datetime(str(message["Date"]))
    except (TypeError, ValueError):
        date = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    text = message.get_body(preferencelist=("plain",))
    html = message.get_body(preferencelist=("html",))
    subject = str(message["Subject"] or "(no subject)")
    plain = text.get_content() if text is not None else None
    return Mail(
        name=path.name,
        to=[address for _, address in getaddresses([str(v) for v in message.get_all("To", [])])],
        sender=str(message["From"] or ""),
        subject=subject,
        headline=read_headline(subject, plain or ""),
        date=date if date.tzinfo else date.replace(tzinfo=UTC),
        text=plain,
        html=html.get_content() if html is not None else None,
    )


def mail_images(path: Path) -> dict[str, str]:
    """The pictures of the mail at ``path`` by Content-ID, as ``data:`` addresses."""
    with path.open("rb") as handle:
        message = BytesParser(policy=policy.default).parse(handle)
    images = {}
    for part in message.walk():
        content_id = str(part.get("Content-ID") or "").strip("<> ")
        if content_id and part.get_content_maintype() == "image":
            payload = part.get_payload(decode=True)
            data = base64.b64encode(payload if isinstance(payload, bytes) else b"").decode()
            images[content_id] = f"data:{part.get_content_type()};base64,{data}"
    return images


def all_mail() -> list[Mail]:
    """Every mail in ``MAIL_DIR``, newest first."""
    folder = Path(current_app.config["MAIL_DIR"])
    if not folder.is_dir():
        return []
    mails = [read_mail(p) for p in folder.iterdir() if MAIL_FILE.match(p.name) and p.is_file()]
    return sorted(mails, key=lambda m: (m.date, m.name), reverse=True)


def _mail_named(name: str) -> Mail:
    path = Path(current_app.config["MAIL_DIR"]) / name
    if not MAIL_FILE.match(name) or not path.is_file():
        abort(404)
    return read_mail(path)


@bp.get("/")
def index() -> Any:
    mails = all_mail()
    recipients = sorted({address.lower() for m in mails for address in m.to})
    chosen = request.args.get("to", "").lower() or None
    shown = [m for m in mails if chosen is None or chosen in (a.lower() for a in m.to)]
    return render_template(
        "mailbox/index.html",
        mails=shown,
        recipients=recipients,
        chosen=chosen,
        folder=current_app.config["MAIL_DIR"],
    )


@bp.get("/<name>")
def message(name: str) -> Any:
    mail = _mail_named(name)
    return render_template("mailbox/message.html", mail=mail, text=linked(mail.text or ""))


@bp.get("/<name>/html")
def html_part(name: str) -> Response:
    """The mail's HTML part, alone, as a mail client would show it (its links lead into the game)."""
    mail = _mail_named(name)
    if mail.html is None:
        abort(404)
    images = mail_images(Path(current_app.config["MAIL_DIR"]) / name)
    html = CID.sub(lambda m: images.get(m.group(1), m.group(0)), mail.html)
    response = Response(html, mimetype="text/html")
    response.headers["Content-Security-Policy"] = MAIL_HTML_POLICY
    return response


def linked(text: str) -> Markup:
    """Plain text with its web addresses made into links (the rest escaped)."""
    out = []
    position = 0
    for match in URL.finditer(text):
        out.append(escape(text[position : match.start()]))
        url = match.group(0)
        out.append(Markup('<a href="{0}">{0}</a>').format(url))
        position = match.end()
    out.append(escape(text[position:]))
    return Markup("").join(out)
