"""Security headers on every response (service/web/security.py), whatever the route and whatever the status."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flask import Flask, render_template_string

from service.web.security import API_DOCS_PREFIX

from ..api.conftest import bearer, create_game, new_game_body, seat_link, token_of

REQUIRED = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


def assert_secure_headers(response: Any, where: str) -> None:
    for name, value in REQUIRED.items():
        assert response.headers.get(name) == value, f"{where}: {name} is {response.headers.get(name)!r}"
    policy = response.headers.get("Content-Security-Policy", "")
    assert "frame-ancestors 'none'" in policy, f"{where}: {policy!r}"
    assert "base-uri 'none'" in policy, f"{where}: {policy!r}"
    if not where.startswith(API_DOCS_PREFIX):
        assert "unsafe-inline" not in policy and "unsafe-eval" not in policy, f"{where}: {policy!r}"
        assert "default-src 'none'" in policy
        assert re.search(r"script-src 'self'(;| 'nonce-)", policy), f"{where}: {policy!r}"


def assert_nothing_inline_the_policy_would_block(response: Any, where: str) -> None:
    """No inline script or style without this response's nonce, no style attribute, no on* handler."""
    page = response.get_data(as_text=True)
    policy = response.headers["Content-Security-Policy"]
    nonce = re.search(r"'nonce-([^']+)'", policy)
    for tag in re.findall(r"<(?:script|style)\b[^>]*>", page):
        if "src=" not in tag:
            assert nonce and f'nonce="{nonce[1]}"' in tag, f"{where}: {tag} would be blocked"
    assert not re.search(r"\sstyle=\"", page), f"{where}: a style attribute, ignored under the policy"
    assert not re.search(r"\son[a-z]+=\"", page), f"{where}: an inline event handler, blocked by the policy"


def sample_url(rule: Any, token: str) -> str:
    """A URL for ``rule`` with plausible arguments: 1 for numbers, a real turn token for ``<token>``."""
    values = {}
    for name, converter in rule._converters.items():
        values[name] = 1 if type(converter).__name__ in ("IntegerConverter", "FloatConverter") else token
    path = rule.rule
    for name, value in values.items():
        path = re.sub(rf"<(?:[^:<>]+:)?{name}>", str(value), path)
    return path


@pytest.fixture
def started(make_app: Callable[..., Flask]) -> Iterator[tuple[Flask, Any, str]]:
    app = make_app()
    client = app.test_client()
    created = create_game(client, new_game_body(2, start_when_all_accepted=False))
    assert created.status_code == 201
    token = token_of(created.get_json()["admin_url"])
    yield app, client, token


def test_every_route_answers_with_the_security_headers_for_every_method(started: tuple[Flask, Any, str]) -> None:
    app, client, token = started
    seen = 0
    for rule in app.url_map.iter_rules():
        url = sample_url(rule, token)
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            response = client.open(url, method=method, headers=bearer(token), json={})
            assert response.status_code < 500, (method, url, response.get_data(as_text=True)[:300])
            assert_secure_headers(response, url)
            if response.mimetype == "text/html" and not url.startswith(API_DOCS_PREFIX):
                assert_nothing_inline_the_policy_would_block(response, url)
            seen += 1
    assert seen > 20


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status"),
    [
        ("GET", "/no/such/page", {}, 404),
        ("GET", "/api/no-such-thing", {}, 404),
        ("DELETE", "/api/games", {}, 405),
        ("POST", "/api/games", {"data": "x" * 100_000, "content_type": "application/json"}, 413),
        ("POST", "/api/games", {"data": "{oops", "content_type": "application/json"}, 400),
        ("GET", "/api/games/1", {}, 403),
        ("GET", "/play/not-a-token", {}, 403),
        ("GET", "/health", {}, 200),
    ],
)
def test_error_responses_carry_the_headers_too(
    started: tuple[Flask, Any, str], method: str, path: str, kwargs: dict[str, Any], status: int
) -> None:
    _, client, _ = started
    response = client.open(path, method=method, **kwargs)
    assert response.status_code == status
    assert_secure_headers(response, path)


def test_pages_and_api_answers_are_not_cached(started: tuple[Flask, Any, str]) -> None:
    _, client, _ = started
    for path in ("/api/games/1", "/play/not-a-token", "/health", "/api/openapi.json"):
        assert client.get(path).headers["Cache-Control"] == "no-store", path


def test_a_page_that_uses_an_inline_block_gets_a_fresh_nonce_for_it(make_app: Callable[..., Flask]) -> None:
    app = make_app()

    @app.get("/inline-test")
    def inline() -> str:
        return render_template_string(
            '<style nonce="{{ csp_nonce() }}">p{}</style><script nonce="{{ csp_nonce() }}">1</script>'
        )

    client = app.test_client()
    nonces = []
    for _ in range(2):
        response = client.get("/inline-test")
        nonce = re.search(r'nonce="([^"]+)"', response.get_data(as_text=True))
        assert nonce is not None
        policy = response.headers["Content-Security-Policy"]
        assert f"script-src 'self' 'nonce-{nonce[1]}'" in policy and f"style-src 'self' 'nonce-{nonce[1]}'" in policy
        nonces.append(nonce[1])
    assert nonces[0] != nonces[1] and len(nonces[0]) >= 16
    assert "nonce" not in client.get("/health").headers["Content-Security-Policy"]


def test_the_api_documentation_page_is_served_under_the_site_s_one_policy(started: tuple[Flask, Any, str]) -> None:
    """The docs page is drawn by the service itself: no script or style from a CDN, no 'unsafe-inline'."""
    _, client, _ = started
    response = client.get(API_DOCS_PREFIX)
    assert response.status_code == 200
    assert_secure_headers(response, "/api/docs (checked as any page)")
    assert_nothing_inline_the_policy_would_block(response, API_DOCS_PREFIX)
    page = response.get_data(as_text=True)
    assert "http://" not in page.replace("http://localhost", "") and "https://" not in page
    assert "POST /api/games" in page and "CreateGame" in page
    assert response.headers["Referrer-Policy"] == "no-referrer"


def test_strict_transport_security_only_over_https(started: tuple[Flask, Any, str]) -> None:
    _, client, _ = started
    assert "Strict-Transport-Security" not in client.get("/health").headers
    secure = client.get("/health", base_url="https://localhost")
    assert secure.headers["Strict-Transport-Security"].startswith("max-age=")


def test_the_session_cookie_is_httponly_and_same_site(started: tuple[Flask, Any, str], make_app: Any) -> None:
    app, client, _ = started
    created = create_game(client, new_game_body(2, start_when_all_accepted=False)).get_json()
    assert created
    with app.app_context():
        from sqlmodel import Session, select

        from service.domain.models import OutboxMail
        from service.infra.db import get_engine

        with Session(get_engine(app)) as session:
            mail = session.exec(select(OutboxMail).where(OutboxMail.template == "invitation")).first()
            assert mail is not None
            turn = token_of(seat_link(app, mail, session))
    response = client.get(f"/play/{turn}")
    assert response.status_code == 302
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie
    https_app = make_app(BASE_URL="https://smallworld.example", INSTANCE_PATH=app.instance_path)
    assert https_app.config["SESSION_COOKIE_SECURE"] is True


def test_behind_a_proxy_the_forwarded_address_counts_only_when_configured(make_app: Callable[..., Flask]) -> None:
    from flask import request

    for proxies, expected in ((0, "127.0.0.1"), (1, "203.0.113.7")):
        app = make_app(PROXY_COUNT=proxies)

        @app.get("/whoami")
        def whoami() -> str:
            return request.remote_addr or ""

        response = app.test_client().get("/whoami", headers={"X-Forwarded-For": "203.0.113.7"})
        assert response.get_data(as_text=True) == expected


def test_a_session_cookie_signed_with_an_old_key_still_opens_after_rotation(make_app: Callable[..., Flask]) -> None:
    from flask import session

    old = make_app(SECRET_KEY="old-key")
    rotated = make_app(SECRET_KEY="new-key", OLD_SECRET_KEYS=["old-key"])
    dropped = make_app(SECRET_KEY="new-key")
    for app in (old, rotated, dropped):

        @app.get("/seat-in-session")
        def seat() -> str:
            session.setdefault("seat", {"game": 1, "seat": 0})
            return str(session.get("seat", {}).get("game"))

    client = old.test_client()
    client.get("/seat-in-session")
    cookie = client.get_cookie("session")
    assert cookie is not None
    for app, expected in ((rotated, True), (dropped, False)):
        other = app.test_client()
        other.set_cookie("session", cookie.value)
        with other.session_transaction() as opened:
            assert ("seat" in opened) is expected


def test_the_session_cookies_serializer_is_made_once_per_set_of_keys(make_app: Callable[..., Flask]) -> None:
    from itsdangerous import BadSignature

    app = make_app(SECRET_KEY="first-key")
    cookies = app.session_interface
    made = cookies.get_signing_serializer(app)
    assert made is not None and cookies.get_signing_serializer(app) is made
    # Another key (a test changing a live app's configuration): a serializer of the new keys, with which a
    # cookie signed with the old one still opens.
    signed_before = made.dumps({"seat": 1})
    app.config.update(SECRET_KEY="second-key", SECRET_KEY_FALLBACKS=["first-key"])
    rotated = cookies.get_signing_serializer(app)
    assert rotated is not None and rotated is not made
    assert rotated.loads(signed_before) == {"seat": 1}
    with pytest.raises(BadSignature):  # signed with the new key, which the first serializer does not know
        made.loads(rotated.dumps({"seat": 2}))
