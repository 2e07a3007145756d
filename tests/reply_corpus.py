"""Replies as the common mail clients write them: a corpus of shapes, each of which writes a reply to a mail
of ours the way its client does (its attribution line, its quote, its signature, its HTML), top-posted or
bottom-posted, in English, French, German or Spanish.

Each shape follows its client's real output (its plain-text part, and its HTML for the HTML-only entries):

- **Gmail web**: the attribution ``On Tue, Mar 3, 2026 at 10:12 AM Small World <…> wrote:`` hard-wrapped with
  the rest of the text at 76 columns (so a French one reads ``… <…> a`` then ``écrit :`` on the next line),
  a blank line, the mail quoted with ``> ``; HTML: the reply in ``<div dir="ltr">``, the quote in
  ``<div class="gmail_quote">`` (``gmail_attr`` then ``<blockquote class="gmail_quote">``).
- **Gmail app** (Android): ``On Tue, 3 Mar 2026, 10:12 Small World, <…> wrote:`` (German: ``… schrieb am
  Di., 3. März 2026, 10:12:``), wrapped likewise.
- **Outlook desktop**: ``-----Original Message-----`` then ``From:``/``Sent:``/``To:``/``Subject:`` (localised:
  ``De :``/``Envoyé :``/``À :``/``Objet :``, ``Von:``/``Gesendet:``/``An:``/``Betreff:``,
  ``De:``/``Enviado el:``/``Para:``/``Asunto:``) and the mail unquoted; bottom-posted with its "prefix each
  line of the original message" option (``> ``).
- **Outlook web** (and Outlook mobile, "Get Outlook for iOS"): a rule of 32 underscores, the same header block,
  the mail unquoted; HTML: ``<hr>`` then ``<div id="divRplyFwdMsg">`` with the header block in ``<b>`` labels.
  Outlook quotes without a prefix, so what is written below its quote cannot be told from the mail quoted:
  it has no bottom-posted entry.
- **Apple Mail** (macOS and iOS, "Sent from my iPhone"): the attribution itself quoted,
  ``> On 3 Mar 2026, at 10:12, Small World <…> wrote:``, then ``> `` and the mail; HTML:
  ``<blockquote type="cite">``.
- **Thunderbird**: ``On 03/03/2026 10:12, Small World wrote:`` (``Le 03/03/2026 à 10:12, Small World a
  écrit :``, ``Am 03.03.26 um 10:12 schrieb Small World:``, ``El 3/3/26 a las 10:12, Small World
  escribió:``), the quote with ``> ``, a ``-- `` signature; bottom-posting is its default.
- **K-9 Mail / FairEmail** (Android): ``On March 3, 2026 10:12:00 AM UTC, Small World <…> wrote:``, the quote
  with ``>`` and no space (K-9's default), K-9's signature ``-- `` "Sent from my Android device with K-9
  Mail. Please excuse my brevity."; FairEmail's ``On 3 Mar 2026 10:12, Small World wrote:``.
"""

from __future__ import annotations

import html
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import make_msgid
from typing import Literal

from tests.smtp import Received

Posting = Literal["top", "bottom"]
Language = Literal["en", "fr", "de", "es"]

#: Greetings the writers open with, per language.
GREETINGS: dict[str, str] = {"en": "Hi there,", "fr": "Bonjour,", "de": "Hallo zusammen,", "es": "Hola,"}
#: A writer's own name, as their signature gives it.
WRITER = "Ann"


@dataclass(frozen=True)
class Original:
    """What a reply is made from: the mail answered, as its reader's client shows it."""

    text: str
    html: str
    sender_name: str
    sender_address: str
    subject: str
    message_id: str
    to: str

    @classmethod
    def of(cls, mail: Received) -> Original:
        name, address = _name_and_address(mail.header("Reply-To") or mail.header("From") or "")
        from_name, _ = _name_and_address(mail.header("From") or "")
        return cls(
            text=mail.text,
            html=mail.html,
            sender_name=from_name or name or "Small World",
            sender_address=address,
            subject=mail.header("Subject") or "",
            message_id=mail.header("Message-ID") or "",
            to=mail.rcpt_tos[0],
        )


def _name_and_address(value: str) -> tuple[str, str]:
    from email.utils import parseaddr

    name, address = parseaddr(value)
    return name, address


# -- the attributions and header blocks, per client and language ---------------------------------------------
def _gmail_web(o: Original, language: str) -> str:
    return {
        "en": f"On Tue, Mar 3, 2026 at 10:12 AM {o.sender_name} <{o.sender_address}> wrote:",
        "fr": f"Le mar. 3 mars 2026 à 10:12, {o.sender_name} <{o.sender_address}> a écrit :",
        "de": f"Am Di., 3. März 2026 um 10:12 Uhr schrieb {o.sender_name} <{o.sender_address}>:",
        "es": f"El mar, 3 mar 2026 a las 10:12, {o.sender_name} (<{o.sender_address}>) escribió:",
    }[language]


def _gmail_app(o: Original, language: str) -> str:
    return {
        "en": f"On Tue, 3 Mar 2026, 10:12 {o.sender_name}, <{o.sender_address}> wrote:",
        "fr": f"Le mar. 3 mars 2026, 10:12, {o.sender_name} <{o.sender_address}> a écrit :",
        "de": f"{o.sender_name} <{o.sender_address}> schrieb am Di., 3. März 2026, 10:12:",
        "es": f"El mar., 3 de mar. de 2026 10:12, {o.sender_name} <{o.sender_address}> escribió:",
    }[language]


def _apple(o: Original, language: str) -> str:
    return {
        "en": f"On 3 Mar 2026, at 10:12, {o.sender_name} <{o.sender_address}> wrote:",
        "fr": f"Le 3 mars 2026 à 10:12, {o.sender_name} <{o.sender_address}> a écrit :",
        "de": f"Am 03.03.2026 um 10:12 schrieb {o.sender_name} <{o.sender_address}>:",
        "es": f"El 3 mar 2026, a las 10:12, {o.sender_name} <{o.sender_address}> escribió:",
    }[language]


def _thunderbird(o: Original, language: str) -> str:
    return {
        "en": f"On 03/03/2026 10:12, {o.sender_name} wrote:",
        "fr": f"Le 03/03/2026 à 10:12, {o.sender_name} a écrit :",
        "de": f"Am 03.03.26 um 10:12 schrieb {o.sender_name}:",
        "es": f"El 3/3/26 a las 10:12, {o.sender_name} escribió:",
    }[language]


def _k9(o: Original, language: str) -> str:
    return {
        "en": f"On March 3, 2026 10:12:00 AM UTC, {o.sender_name} <{o.sender_address}> wrote:",
        "fr": f"Le 3 mars 2026 10:12:00 UTC, {o.sender_name} <{o.sender_address}> a écrit :",
        "de": f"Am 3. März 2026 10:12:00 UTC schrieb {o.sender_name} <{o.sender_address}>:",
        "es": f"El 3 de marzo de 2026 10:12:00 UTC, {o.sender_name} <{o.sender_address}> escribió:",
    }[language]


def _fairemail(o: Original, language: str) -> str:
    return {
        "en": f"On 3 Mar 2026 10:12, {o.sender_name} wrote:",
        "fr": f"Le 3 mars 2026 10:12, {o.sender_name} a écrit :",
        "de": f"Am 3. März 2026 10:12 schrieb {o.sender_name}:",
        "es": f"El 3 mar 2026 10:12, {o.sender_name} escribió:",
    }[language]


_OUTLOOK_LABELS = {
    "en": ("From: ", "Sent: ", "To: ", "Subject: ", "Tuesday, March 3, 2026 10:12 AM", "-----Original Message-----"),
    "fr": ("De : ", "Envoyé : ", "À : ", "Objet : ", "mardi 3 mars 2026 10:12", "-----Message d'origine-----"),
    "de": (
        "Von: ",
        "Gesendet: ",
        "An: ",
        "Betreff: ",
        "Dienstag, 3. März 2026 10:12",
        "-----Ursprüngliche Nachricht-----",
    ),
    "es": (
        "De: ",
        "Enviado el: ",
        "Para: ",
        "Asunto: ",
        "martes, 3 de marzo de 2026 10:12",
        "-----Mensaje original-----",
    ),
}


def _outlook_block(o: Original, language: str) -> list[str]:
    sender, sent, to, subject, date, _ = _OUTLOOK_LABELS[language]
    return [
        f"{sender}{o.sender_name} <{o.sender_address}>",
        f"{sent}{date}",
        f"{to}{WRITER} <{o.to}>",
        f"{subject}{o.subject}",
    ]


# -- the shapes ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Shape:
    """One entry of the corpus: a client, where its writer put the reply, the language of its client, whether
    the writer opened with a greeting, and whether the client sent HTML only."""

    client: str
    posting: Posting
    language: Language = "en"
    greeting: bool = False
    html_only: bool = False

    @property
    def name(self) -> str:
        extras = ("-greeting" if self.greeting else "") + ("-html" if self.html_only else "")
        return f"{self.client}-{self.posting}-{self.language}{extras}"

    def write(self, original: Original, text: str, *, sender: str | None = None) -> EmailMessage:
        """A reply to ``original`` saying ``text``, as this client writes it."""
        own = f"{GREETINGS[self.language]}\n\n{text}" if self.greeting else text
        plain, rich = CLIENTS[self.client](self, original, own)
        reply = EmailMessage()
        reply["From"] = f"{WRITER} <{sender or original.to}>"
        reply["To"] = original.sender_address
        reply["Subject"] = _re(self.language) + original.subject
        reply["Message-ID"] = make_msgid(domain="example.org")
        reply["In-Reply-To"] = original.message_id
        reply["References"] = original.message_id
        reply["User-Agent" if self.client in ("thunderbird", "k9", "fairemail") else "X-Mailer"] = self.client
        if self.html_only:
            reply.set_content(rich, subtype="html")
        else:
            reply.set_content(plain)
            reply.add_alternative(rich, subtype="html")
        return reply

    def read_as(self, text: str) -> str:
        """What the service should read of a reply saying ``text``: the text and the greeting, no signature."""
        return f"{GREETINGS[self.language]}\n\n{text}" if self.greeting else text


def _re(language: str) -> str:
    return {"de": "AW: ", "fr": "RE: ", "es": "RE: "}.get(language, "Re: ")


def _quoted(text: str, prefix: str = "> ") -> list[str]:
    return [(prefix + line).rstrip() if line.strip() else prefix.rstrip() for line in text.splitlines()]


def _wrapped(line: str) -> list[str]:
    """A line as Gmail's plain text hard-wraps it (76 columns, long words kept whole)."""
    return textwrap.wrap(line, 76, break_long_words=False, break_on_hyphens=False) or [""]


def _body_of(page: str) -> str:
    """The inside of an HTML mail's ``<body>``, as a client quotes it."""
    found = re.search(r"(?is)<body[^>]*>(.*)</body>", page)
    return found.group(1) if found else page


def _html_lines(text: str, tag: str = "div") -> str:
    return "".join(f"<{tag}>{html.escape(line) if line else '<br>'}</{tag}>" for line in text.splitlines())


def _gmail(shape: Shape, o: Original, own: str, attribution: str) -> tuple[str, str]:
    signature = f"\n\n-- \n{WRITER}" if shape.client == "gmail-web" else ""
    quote = [*_wrapped(attribution), "", *_quoted(o.text)]
    mine = [*own.splitlines(), *signature.splitlines()]
    lines = [*mine, "", *quote] if shape.posting == "top" else [*quote, "", *mine]
    ours = f'<div dir="ltr">{_html_lines(own)}</div>'
    if signature:
        ours += f'<br clear="all"><div><br></div>-- <br><div dir="ltr" class="gmail_signature">{WRITER}</div>'
    quoted = (
        f'<div class="gmail_quote"><div dir="ltr" class="gmail_attr">{html.escape(attribution)}<br></div>'
        '<blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex;border-left:1px solid rgb(204,204,204);'
        f'padding-left:1ex">{_body_of(o.html)}</blockquote></div>'
    )
    rich = ours + "<br>" + quoted if shape.posting == "top" else quoted + ours
    return "\n".join(lines) + "\n", rich


def gmail_web(shape: Shape, o: Original, own: str) -> tuple[str, str]:
    return _gmail(shape, o, own, _gmail_web(o, shape.language))


def gmail_app(shape: Shape, o: Original, own: str) -> tuple[str, str]:
    return _gmail(shape, o, own, _gmail_app(o, shape.language))


def outlook_desktop(shape: Shape, o: Original, own: str) -> tuple[str, str]:
    separator = _OUTLOOK_LABELS[shape.language][5]
    block = [separator, *_outlook_block(o, shape.language), "", *o.text.splitlines()]
    if shape.posting == "top":
        plain = [*own.splitlines(), "", *block]
    else:  # its "Prefix each line of the original message" option
        plain = [*_quoted("\n".join(block)), "", *own.splitlines()]
    header = "<br>".join(
        f"<b>{html.escape(line.split(':', 1)[0])}:</b>{html.escape(line.split(':', 1)[1])}"
        for line in _outlook_block(o, shape.language)
    )
    quoted = (
        '<div><div style="border:none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0in 0in 0in">'
        f'<p class="MsoNormal">{header}</p></div></div>{_body_of(o.html)}'
    )
    ours = _html_lines(own, "p")
    rich = (
        f'<html><body lang="EN-US"><div class="WordSection1">{ours}<p class="MsoNormal">&nbsp;</p>{quoted}</div>'
        "</body></html>"
    )
    return "\n".join(plain) + "\n", rich


def outlook_web(shape: Shape, o: Original, own: str) -> tuple[str, str]:
    assert shape.posting == "top", "Outlook quotes without a prefix: a reply below its quote is not told apart"
    plain = [*own.splitlines(), "", "Get Outlook for iOS", "_" * 32, *_outlook_block(o, shape.language), ""]
    plain += o.text.splitlines()
    header = "<br>".join(
        f"<b>{html.escape(line.split(':', 1)[0])}:</b>{html.escape(line.split(':', 1)[1])}"
        for line in _outlook_block(o, shape.language)
    )
    rich = (
        f'<html><body><div dir="ltr">{_html_lines(own)}</div><div><br></div>'
        '<div id="ms-outlook-mobile-signature">Get <a href="https://aka.ms/o0ukef">Outlook for iOS</a></div>'
        '<div id="appendonsend"></div><hr style="display:inline-block;width:98%" tabindex="-1">'
        f'<div id="divRplyFwdMsg" dir="ltr"><font face="Calibri, sans-serif" style="font-size:11pt" '
        f'color="#000000">{header}</font><div>&nbsp;</div></div>{_body_of(o.html)}</body></html>'
    )
    return "\n".join(plain) + "\n", rich


def apple_mail(shape: Shape, o: Original, own: str) -> tuple[str, str]:
    attribution = _apple(o, shape.language)
    mine = [*own.splitlines(), "", "Sent from my iPhone"]
    quote = _quoted(f"{attribution}\n\n{o.text}")
    lines = [*mine, "", *quote] if shape.posting == "top" else [*quote, "", *mine]
    ours = f'<div dir="ltr">{_html_lines(own)}<div dir="ltr"><br></div><div dir="ltr">Sent from my iPhone</div></div>'
    quoted = (
        f'<div dir="ltr"><br><blockquote type="cite">{html.escape(attribution)}<br><br></blockquote></div>'
        f'<blockquote type="cite"><div dir="ltr">{_body_of(o.html)}</div></blockquote>'
    )
    rich = ours + quoted if shape.posting == "top" else quoted + ours
    return "\n".join(lines) + "\n", f'<html><head></head><body dir="auto">{rich}</body></html>'


def _prefixed_client(
    attribution: Callable[[Original, str], str], prefix: str, signature: str
) -> Callable[[Shape, Original, str], tuple[str, str]]:
    def write(shape: Shape, o: Original, own: str) -> tuple[str, str]:
        said = attribution(o, shape.language)
        mine = [*own.splitlines(), *(["", "-- ", *signature.splitlines()] if signature else [])]
        quote = [said, *_quoted(o.text, prefix)]
        lines = [*mine, "", *quote] if shape.posting == "top" else [*quote, "", *mine]
        ours = _html_lines(own, "p") + (
            f'<pre class="moz-signature" cols="72">-- \n{html.escape(signature)}</pre>' if signature else ""
        )
        quoted = (
            f'<div class="moz-cite-prefix">{html.escape(said)}<br></div>'
            f'<blockquote type="cite">{_body_of(o.html)}</blockquote>'
        )
        rich = ours + quoted if shape.posting == "top" else quoted + ours
        return "\n".join(lines) + "\n", f"<html><body>{rich}</body></html>"

    return write


CLIENTS: dict[str, Callable[[Shape, Original, str], tuple[str, str]]] = {
    "gmail-web": gmail_web,
    "gmail-app": gmail_app,
    "outlook-desktop": outlook_desktop,
    "outlook-web": outlook_web,
    "apple-mail": apple_mail,
    "thunderbird": _prefixed_client(_thunderbird, "> ", WRITER),
    "k9": _prefixed_client(_k9, ">", "Sent from my Android device with K-9 Mail. Please excuse my brevity."),
    "fairemail": _prefixed_client(_fairemail, "> ", ""),
}


def _corpus() -> tuple[Shape, ...]:
    shapes: list[Shape] = []
    for index, client in enumerate(CLIENTS):
        postings: tuple[Posting, ...] = ("top",) if client == "outlook-web" else ("top", "bottom")
        for posting in postings:
            shapes.append(Shape(client, posting, "en", greeting=(index % 2 == 0)))
        for number, language in enumerate(("fr", "de", "es")):
            posting = postings[(index + number) % len(postings)]
            shapes.append(Shape(client, posting, language, greeting=((index + number) % 2 == 1)))
    for client in ("gmail-web", "outlook-web", "apple-mail", "thunderbird"):
        shapes.append(Shape(client, "top", "en", html_only=True))
    for client in ("gmail-web", "apple-mail", "thunderbird", "k9"):
        shapes.append(Shape(client, "bottom", "fr", greeting=True, html_only=True))
    return tuple(shapes)


#: Every shape, named (``Shape.name``) for the tests' ids.
CORPUS: tuple[Shape, ...] = _corpus()
