"""Finding 6: ``/api/docs`` loaded scripts from CDNs without integrity hashes and needed ``'unsafe-inline'``
(its own, looser content security policy). Now the service draws the page itself from its OpenAPI document,
with no script, under the policy of every other page."""

from __future__ import annotations

import re

from flask import Flask


def test_the_api_docs_page_loads_nothing_from_elsewhere_and_needs_no_inline_script(app: Flask) -> None:
    client = app.test_client()
    page = client.get("/api/docs")
    assert page.status_code == 200
    policy = page.headers["Content-Security-Policy"]
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert "https:" not in policy and "unpkg" not in policy and "jsdelivr" not in policy
    assert re.search(r"script-src 'self'(;|$)", policy)
    html = page.get_data(as_text=True)
    assert not re.search(r"<script(?![^>]*\ssrc=\"/static/)", html), "only the site's own scripts"
    assert not re.search(r"(src|href)=\"https?://", html), "nothing from another site"
    assert "POST /api/games/confirm" in html and "AcceptInvitation" in html
    for old in ("/api/docs/swagger/", "/api/docs/redoc/", "/api/docs/scalar/"):
        assert client.get(old).status_code == 404, old
