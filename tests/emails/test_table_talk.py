"""emails.table_talk: a message's small Markdown made into HTML that is safe in a page and in a mail.

Each attack below is one a player could type; the HTML must carry no script, no handler, no
``javascript:`` link, no image and no raw HTML of theirs, whatever the trick."""

from __future__ import annotations

import doctest
import re
from html.parser import HTMLParser

import pytest

from emails import table_talk
from emails.messages import TableTalk
from emails.samples import SAMPLES
from emails.table_talk import LINK_REL, TAGS, excerpt, message_html


class Elements(HTMLParser):
    """Every element and attribute of a fragment, as a browser's parser sees them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes.extend((tag, name, value) for name, value in attrs)


def parsed(html: str) -> Elements:
    elements = Elements()
    elements.feed(html)
    elements.close()
    return elements


ATTACKS = [
    "<script>alert(1)</script>",
    "<SCRIPT SRC=https://evil.example/x.js></SCRIPT>",
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click](java&#x09;script:alert(1))",
    "[click](&#106;avascript:alert(1))",
    "[click](vbscript:msgbox(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "<javascript:alert(1)>",
    '<a href="javascript:alert(1)">x</a>',
    '<img src=x onerror="alert(1)">',
    "![pic](https://evil.example/track.png)",
    '<div onmouseover="alert(1)">hover</div>',
    '[x](https://ok.example "title" onclick=alert(1))',
    '[x](https://ok.example" onclick="alert(1))',
    "<iframe src=https://evil.example></iframe>",
    "<svg onload=alert(1)>",
    "<style>body{display:none}</style>",
    "<!-- <script>alert(1)</script> -->",
    '<a href="https://ok.example" style="position:fixed">x</a>',
    "```html\n<script>alert(1)</script>\n```",
    "`<img src=x onerror=alert(1)>`",
    "*<b onclick=alert(1)>bold</b>*",
    "- <form action=https://evil.example><input name=p></form>",
]


@pytest.mark.parametrize("attack", ATTACKS)
def test_nothing_a_player_types_becomes_a_script_a_handler_an_image_or_raw_html(attack: str) -> None:
    html = message_html(attack)
    elements = parsed(html)
    assert set(elements.tags) <= TAGS, html
    for tag, name, value in elements.attributes:
        assert not name.startswith("on"), html
        assert (tag, name) in {("a", "href"), ("a", "rel"), ("ol", "start")}, html
        if name == "href":
            assert re.match(r"^(https?|mailto):", value or ""), html
    lowered = html.lower()
    assert "<script" not in lowered and "<img" not in lowered and "<iframe" not in lowered and "<svg" not in lowered


def test_the_small_subset_is_kept_emphasis_links_lists_code() -> None:
    html = message_html(
        "*em* **strong** `code` [rules](https://example.org/r) <https://example.org/a>\n\n- one\n- two\n\n1. first\n"
    )
    assert "<em>em</em>" in html and "<strong>strong</strong>" in html and "<code>code</code>" in html
    assert f'<a href="https://example.org/r" rel="{LINK_REL}">rules</a>' in html
    assert f'<a href="https://example.org/a" rel="{LINK_REL}">https://example.org/a</a>' in html
    assert "<ul>\n<li>one</li>\n<li>two</li>\n</ul>" in html and "<ol>" in html


def test_headings_quotes_and_rules_stay_plain_text() -> None:
    html = message_html("# Big\n> quoted\n\n---")
    assert parsed(html).tags == ["p", "br", "br"] or set(parsed(html).tags) <= {"p", "br"}
    assert "# Big" in html and "&gt; quoted" in html and "---" in html


def test_a_line_break_is_kept_as_in_a_chat() -> None:
    assert message_html("one\ntwo") == "<p>one<br>\ntwo</p>"


def test_the_mail_shows_the_cleaned_html_and_the_text_as_written() -> None:
    sample = SAMPLES["table_talk"]
    attack = '<script>alert(1)</script> [x](javascript:alert(1)) <img src=x onerror="alert(1)">'
    mail = TableTalk(**{**sample.context, "text": attack}).render(now=sample.now, game_url=sample.game_url)
    assert "<script>alert" not in mail.html and "<img src=x" not in mail.html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in mail.html
    assert 'href="javascript' not in mail.html.lower()
    assert attack in " ".join(mail.text.split())  # the plain-text part is text: nothing in it runs


def test_an_excerpt_is_one_line_and_short() -> None:
    assert excerpt("a\n\nb") == "a b"
    assert len(excerpt("x" * 500, 100)) == 100


def test_the_doctests() -> None:
    assert doctest.testmod(table_talk).failed == 0


@pytest.mark.parametrize(
    ("text", "href"),
    [
        ("see https://example.org/rules now", "https://example.org/rules"),
        ("http://example.org/a?b=1&c=2.", "http://example.org/a?b=1&amp;c=2"),
    ],
)
def test_a_bare_web_address_becomes_a_safe_link(text: str, href: str) -> None:
    """Issue 35: a bare http or https address is a link, escaped, with rel="nofollow noopener noreferrer"."""
    assert f'<a href="{href}" rel="nofollow noopener noreferrer">' in message_html(text)


@pytest.mark.parametrize(
    "text",
    [
        "www.example.org or example.org",
        "ftp://example.org/file",
        "mailto:ann@example.org",
        "//example.org/x",
        "javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "`https://example.org/in-code`",
    ],
)
def test_only_http_and_https_addresses_are_made_links(text: str) -> None:
    assert "<a " not in message_html(text)
