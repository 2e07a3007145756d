"""Table talk as a reader sees it: plain text, or a small Markdown subset, made into safe HTML.

Players write what they like; other players read it on the game's pages and in their mails. So the text
goes through two locks, either of which would be enough alone:

1. markdown-it-py with CommonMark's parser and every rule off but a few: emphasis (``*a*``, ``**b**``),
   links (``[text](https://…)``, ``<https://…>`` and a bare ``https://…``, found by linkify-it-py with
   the ``http:`` and ``https:`` schemes only: no ``www.`` or bare domain guessed, no ``mailto:``, ``ftp:`` or
   ``//``), lists, and code (inline, indented and fenced).
   Raw HTML is never passed through (``html: False``: ``<script>`` is shown as text); images, headings,
   quotes, tables are off; markdown-it refuses ``javascript:``, ``vbscript:``, ``file:`` and ``data:``
   links on its own. A single line break is kept as a line break, as in a chat.
2. nh3 (the Rust ``ammonia`` sanitiser) cleans the result with an allow-list: those few tags, ``href`` on
   links only, with the schemes ``http``, ``https`` and ``mailto`` (no relative link), and ``rel="nofollow noopener
   noreferrer"`` on every link. No ``on*`` attribute, no ``style``, no ``<img>`` can get through.

>>> message_html("Hello *there*, see [the rules](https://example.org/rules)")
'<p>Hello <em>there</em>, see <a href="https://example.org/rules" rel="nofollow noopener noreferrer">the rules</a></p>'
>>> message_html("See https://example.org/r?a=1&b=2, not javascript:alert(1)")  # doctest: +NORMALIZE_WHITESPACE
'<p>See <a href="https://example.org/r?a=1&amp;b=2" rel="nofollow noopener noreferrer">https://example.org/r?a=1&amp;b=2</a>,
not javascript:alert(1)</p>'
>>> message_html('<img src=x onerror="alert(1)"> [x](javascript:alert(1))')
'<p>&lt;img src=x onerror="alert(1)"&gt; [x](javascript:alert(1))</p>'
"""

from __future__ import annotations

import nh3
from markdown_it import MarkdownIt

#: The longest message, in characters (after line ends are made ``\\n`` and the ends trimmed).
LONGEST = 2000

#: The Markdown rules that are on; every other one (images, headings, quotes, raw HTML…) is off.
RULES = ["emphasis", "link", "autolink", "linkify", "list", "backticks", "code", "fence", "newline", "escape"]

_markdown = MarkdownIt("zero", {"breaks": True, "html": False, "linkify": True}).enable(RULES)
# Bare addresses become links with http: and https: only (issue 35): nothing guessed from "www." or a domain.
_linkify = _markdown.linkify
assert _linkify is not None  # linkify-it-py, a dependency: markdown-it makes it when "linkify" is on
_linkify.set({"fuzzy_link": False, "fuzzy_email": False, "fuzzy_ip": False})
for _schema in ("ftp:", "mailto:", "//"):
    _linkify.add(_schema, None)

TAGS = {"p", "br", "em", "strong", "a", "ul", "ol", "li", "code", "pre"}
ATTRIBUTES = {"a": {"href"}, "ol": {"start"}}
SCHEMES = {"http", "https", "mailto"}
LINK_REL = "nofollow noopener noreferrer"


def message_html(text: str) -> str:
    """The message as HTML, safe to put in a page or a mail as it is."""
    return nh3.clean(
        _markdown.render(text).strip(),
        tags=TAGS,
        attributes=ATTRIBUTES,
        url_schemes=SCHEMES,
        link_rel=LINK_REL,
        # No relative link: "java%09script:…" would be one; a message links to whole addresses only.
        url_relative="deny",
        strip_comments=True,
    )


def excerpt(text: str, longest: int = 200) -> str:
    """The message's first characters on one line, for a subject, a digest or a chat notice.

    >>> excerpt("Good game!\\n\\nSee you   next week", longest=20)
    'Good game! See you…'
    """
    flat = " ".join(text.split())
    if len(flat) <= longest:
        return flat
    return flat[: longest - 1].rstrip() + "…"
