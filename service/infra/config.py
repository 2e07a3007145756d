"""Configuration from the environment.

Every setting is read from an environment variable with the one prefix ``SMALLWORLD_``
(``SMALLWORLD_DATABASE_URL`` becomes ``app.config["DATABASE_URL"]``); values are parsed as
JSON when they can be, so ``SMALLWORLD_SMTP_PORT=587`` is a number. Anything left unset gets a
default that runs the whole service on one machine with no servers: SQLite, an embedded broker
and mail written to files, all inside the instance folder. The README lists every setting.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Flask

PREFIX = "SMALLWORLD"

DEVELOPMENT = "development"
PRODUCTION = "production"

#: The key used when ``SMALLWORLD_SECRET_KEY`` is unset. Anyone can read it here, so links signed
#: with it prove nothing: production refuses to start with it.
DEFAULT_SECRET_KEY = "smallworld-development-key-not-secret"

MAIL_BACKENDS = ("file", "smtp")
SMTP_SECURITY = ("none", "starttls", "ssl")

DEFAULTS: dict[str, Any] = {
    "ENV": DEVELOPMENT,
    "SECRET_KEY": DEFAULT_SECRET_KEY,
    # Keys still accepted when verifying links (key rotation, ARCHITECTURE §7): a JSON list or one string.
    "OLD_SECRET_KEYS": [],
    # Requests larger than this are refused with 413 (bytes).
    "MAX_CONTENT_LENGTH": 64 * 1024,
    "DATABASE_URL": None,
    "BROKER_URL": None,
    "RESULT_BACKEND": None,
    "MAIL_BACKEND": "file",
    "MAIL_DIR": None,
    "SMTP_HOST": "localhost",
    "SMTP_PORT": 25,
    # "none", "starttls" (usually port 587) or "ssl" (implicit TLS, usually port 465).
    "SMTP_SECURITY": "none",
    "SMTP_USERNAME": None,
    "SMTP_PASSWORD": None,
    "SMTP_TIMEOUT": 30,
    "MAIL_FROM": "Small World by Mail <smallworld@localhost>",
    # A mail that fails for a transient reason is retried after MAIL_RETRY_SECONDS, then twice as long
    # each time (at most an hour apart), and marked failed after MAIL_MAX_ATTEMPTS attempts (ARCHITECTURE §6).
    "MAIL_MAX_ATTEMPTS": 12,
    "MAIL_RETRY_SECONDS": 60,
    # A worker holds the mail it sends for this long, renewing the hold while it works: mail held by a
    # worker that died goes out this long later (plus the next outbox sweep), still once (ARCHITECTURE §6).
    "MAIL_LEASE_SECONDS": 20,
    # A deadline sweep this long after the previous one means the service was down: deadlines that fell
    # in the gap are pushed back by its length instead of passing everyone at once (ARCHITECTURE §5).
    "OUTAGE_GUARD_SECONDS": 600,
    # Beat sends the deadline sweep and the outbox sweep this often (seconds). ~30 s in production; the
    # demo uses 1 s so that short turns end on time.
    "SWEEP_SECONDS": 30,
    # Chat notices (service/infra/chat.py, service/domain/chat_notices.py). CHAT_SCHEMES: the apprise
    # services a game's chat may use (a JSON list, or names separated by commas; unset: the built-in list
    # of chat apps and JSON webhooks). CHAT_PRIVATE_HOSTS: allow chats on private networks (never loopback,
    # link-local or metadata addresses). CHAT_LOOPBACK_FOR_TESTS: the tests' chat on 127.0.0.1; production
    # refuses to start with it.
    "CHAT_SCHEMES": None,
    "CHAT_PRIVATE_HOSTS": False,
    "CHAT_LOOPBACK_FOR_TESTS": False,
    # Seconds one notice may take; a notice that fails is retried after CHAT_RETRY_SECONDS, then twice as
    # long each time (at most an hour apart), and marked failed after CHAT_MAX_ATTEMPTS attempts.
    "CHAT_TIMEOUT": 20,
    "CHAT_MAX_ATTEMPTS": 8,
    "CHAT_RETRY_SECONDS": 60,
    # The chat's drain is mail's (service/drain): it holds the notices it posts this long, renewing the hold
    # while it works; far longer than a batch of posts (ARCHITECTURE §6).
    "CHAT_LEASE_SECONDS": 1800,
    "BASE_URL": "http://127.0.0.1:5000",
    # How many reverse proxies stand in front of the web server; their X-Forwarded-For/-Proto are trusted
    # for that many hops (the client's address for rate limits). 0: no proxy, trust no such header.
    "PROXY_COUNT": 0,
    # Rate limits (service/web/rate_limits.py), in Flask-Limiter's notation ("10 per minute; 100 per day").
    "RATELIMIT_ENABLED": True,
    # memory:// counts in each web process; at scale redis://host:6379/2 shares the counts between them.
    "RATELIMIT_STORAGE_URI": "memory://",
    "RATELIMIT_LINKS": "120 per minute",
    "RATELIMIT_BAD_LINKS": "10 per minute; 100 per day",
    "RATELIMIT_ACTIONS": "60 per minute",
    # Sign-in links asked for on the site admins' sign-in form, per client address.
    "RATELIMIT_ADMIN_SIGN_IN": "5 per minute; 30 per day",
    # Strangers must not use the service to mail strangers (ARCHITECTURE §9). Games created per client address:
    "RATELIMIT_NEW_GAMES": "5 per hour; 20 per day",
    # Games created naming one host address (each mails that host a confirmation):
    "RATELIMIT_GAMES_PER_HOST": "10 per day",
    # Invitations mailed to one address, whoever sends them:
    "RATELIMIT_INVITATIONS_PER_ADDRESS": "5 per day",
    # Mails a host has the service send to addresses that never played with that host (invitations, and a seat
    # given to someone else: the newcomer's invitation and the "changed hands" mail to the player who had it),
    # per host address and per client address (service/domain/strangers.py):
    "RATELIMIT_STRANGERS_PER_HOST": "30 per day",
    "RATELIMIT_STRANGERS_PER_CLIENT": "60 per day",
    # Admin acts on one game (each mails every player), by its host or site admins:
    "RATELIMIT_ADMIN_ACTS": "30 per hour; 200 per day",
    # Players' sign-in links and "mail me my links" asked for, per client address and per address asked for
    # (over the address's limit the page answers as ever and nothing is mailed):
    "RATELIMIT_SIGN_IN": "5 per minute; 30 per day",
    "RATELIMIT_SIGN_IN_PER_ADDRESS": "3 per hour; 10 per day",
    # Games waiting for their host's confirmation, per host address, and how long one waits before it lapses.
    "UNCONFIRMED_GAMES_PER_HOST": 1,
    "UNCONFIRMED_GAME_HOURS": 48,
    # Whether the SMTP server (or relay) takes internationalised addresses (SMTPUTF8, RFC 6531). Unless it
    # is known to, addresses with non-ASCII characters before the @ are refused: they could never be mailed.
    "SMTP_INTERNATIONAL_ADDRESSES": False,
    # Orders by mail (service/domain/inbound.py, ARCHITECTURE §10). Turn mails reply to play+<signed token>@ this
    # domain (unset: the domain of MAIL_FROM); mail to it comes in by the SMTP/LMTP listener, which `serve`
    # starts on INBOUND_HOST:INBOUND_PORT (`smallworld inbound` alone, behind a real MTA), or by
    # POST /inbound/mail with INBOUND_SECRET (unset: that endpoint refuses everything).
    "INBOUND_DOMAIN": None,
    "INBOUND_HOST": "127.0.0.1",
    "INBOUND_PORT": 2525,
    "INBOUND_SECRET": None,
    # A larger mail is refused (413 by HTTP, 552 by SMTP), in bytes.
    "INBOUND_MAX_BYTES": 1_000_000,
    # Answers mailed to one address per hour at most; orders beyond it are still carried out.
    "INBOUND_ANSWERS_PER_HOUR": 30,
    # Days a mail's body (and the record of a mail that came in) is kept; then the hourly retention sweep
    # purges it (service/domain/retention.py, docs/PRIVACY.md).
    "MAIL_RETENTION_DAYS": 30,
    # What one mail may cost to read (service/domain/inbound.py, InboundSettings, which says why each is so):
    # mails read per seat and hour (more are refused unread, SMTP 450, HTTP 429), MIME parts and nesting
    # (a mail with more is refused before it is parsed, SMTP 554, HTTP 422), the characters and lines of a
    # reply read for orders or table talk, and the CPU seconds the reading may take (over it: SMTP 451,
    # HTTP 503).
    "INBOUND_MAILS_PER_SEAT_PER_HOUR": 60,
    "INBOUND_MAX_PARTS": 100,
    "INBOUND_MAX_DEPTH": 10,
    "INBOUND_REPLY_CHARS": 4_000,
    "INBOUND_REPLY_LINES": 200,
    "INBOUND_QUOTE_CHARS": 100_000,
    "INBOUND_CPU_SECONDS": 1.0,
    # The operator's address: mail to postmaster@ and abuse@ the inbound domain is forwarded to it (RFC 2142).
    "OPERATOR_EMAIL": None,
}

#: The shortest ``SMALLWORLD_INBOUND_SECRET`` accepted: a shared secret an MTA sends with every mail.
MIN_INBOUND_SECRET = 16


class ConfigurationError(RuntimeError):
    """The configuration cannot work; the message says which variable to fix and how."""


def instance_path_from(overrides: Mapping[str, Any] | None) -> str | None:
    """The instance folder asked for, if any: ``INSTANCE_PATH`` in ``overrides`` or the environment.

    Flask needs it before the app exists (``Flask(instance_path=...)``), so it is read apart
    from the other settings. ``None`` lets Flask choose (``instance/`` beside the code in a
    development checkout).
    """
    path = (overrides or {}).get("INSTANCE_PATH") or os.environ.get(f"{PREFIX}_INSTANCE_PATH")
    return os.path.abspath(path) if path else None


def configure(app: Flask, overrides: Mapping[str, Any] | None = None) -> None:
    """Fill ``app.config`` from defaults, then ``SMALLWORLD_*`` variables, then ``overrides``."""
    config = app.config
    config.from_mapping(DEFAULTS)
    config.from_prefixed_env(PREFIX)
    if overrides:
        config.from_mapping(overrides)

    instance = Path(app.instance_path)
    config["INSTANCE_PATH"] = str(instance)
    config["DATABASE_URL"] = normalise_database_url(
        config["DATABASE_URL"] or f"sqlite:///{instance / 'smallworld.sqlite'}"
    )
    # The embedded broker: kombu's SQLAlchemy transport on its own SQLite file (see
    # service/infra/broker.py for why this one). Kept apart from the game database so the workers'
    # polling never competes with game writes for SQLite's single write lock.
    config["BROKER_URL"] = config["BROKER_URL"] or f"sqla+sqlite:///{instance / 'broker.sqlite'}"
    config["MAIL_DIR"] = str(config["MAIL_DIR"] or instance / "mail")
    config["INBOUND_DOMAIN"] = str(config["INBOUND_DOMAIN"] or _domain_of(config["MAIL_FROM"])).lower()
    old = config["OLD_SECRET_KEYS"]
    config["OLD_SECRET_KEYS"] = [old] if isinstance(old, str) else list(old or [])
    check(config)


def check(config: Mapping[str, Any]) -> None:
    """Raise :class:`ConfigurationError` for a configuration the service must not run with."""
    if config["ENV"] not in (DEVELOPMENT, PRODUCTION):
        raise ConfigurationError(f"{PREFIX}_ENV is {config['ENV']!r}; set it to {PRODUCTION!r} or {DEVELOPMENT!r}.")
    if config["MAIL_BACKEND"] not in MAIL_BACKENDS:
        raise ConfigurationError(
            f"{PREFIX}_MAIL_BACKEND is {config['MAIL_BACKEND']!r}; set it to one of {', '.join(MAIL_BACKENDS)}."
        )
    if config["SMTP_SECURITY"] not in SMTP_SECURITY:
        raise ConfigurationError(
            f"{PREFIX}_SMTP_SECURITY is {config['SMTP_SECURITY']!r}; set it to one of {', '.join(SMTP_SECURITY)}."
        )
    inbound = config.get("INBOUND_SECRET")
    if inbound is not None and (not isinstance(inbound, str) or len(inbound) < MIN_INBOUND_SECRET):
        raise ConfigurationError(
            f"{PREFIX}_INBOUND_SECRET must be at least {MIN_INBOUND_SECRET} characters long (it lets a mail "
            "server hand in orders for every player), for example the output of: "
            "python -c 'import secrets; print(secrets.token_urlsafe(32))'"
        )
    if config["ENV"] == PRODUCTION and config.get("CHAT_LOOPBACK_FOR_TESTS"):
        raise ConfigurationError(
            f"{PREFIX}_CHAT_LOOPBACK_FOR_TESTS is for the tests' own chat server: in production it would let "
            "anyone creating a game make the worker post to this machine's own services. Unset it."
        )
    days = config.get("MAIL_RETENTION_DAYS")
    if isinstance(days, bool) or not isinstance(days, int) or days < 1:
        raise ConfigurationError(
            f"{PREFIX}_MAIL_RETENTION_DAYS is {days!r}; set it to a whole number of days, 1 or more (default 30)."
        )
    secret = config["SECRET_KEY"]
    if config["ENV"] == PRODUCTION and (not secret or secret == DEFAULT_SECRET_KEY):
        raise ConfigurationError(
            f"Refusing to start in production with "
            f"{'the default' if secret else 'no'} secret key: every signed link would be "
            f"forgeable. Set {PREFIX}_SECRET_KEY to a long random value, for example the output "
            f"of: python -c 'import secrets; print(secrets.token_urlsafe(32))'"
        )


def _domain_of(sender: str) -> str:
    """The domain of a ``From`` value.

    >>> _domain_of("Small World by Mail <smallworld@Example.org>")
    'Example.org'
    """
    address = str(sender).rsplit("<", 1)[-1].rstrip("> ")
    return address.rsplit("@", 1)[1] if "@" in address else "localhost"


def normalise_database_url(url: str) -> str:
    """Use the psycopg 3 driver for plain ``postgresql://`` (and ``postgres://``) URLs.

    SQLAlchemy would otherwise pick psycopg2, which the service does not install.

    >>> normalise_database_url("postgres://db.example/smallworld")
    'postgresql+psycopg://db.example/smallworld'
    >>> normalise_database_url("sqlite:///instance/smallworld.sqlite")
    'sqlite:///instance/smallworld.sqlite'
    """
    for scheme in ("postgresql://", "postgres://"):
        if url.startswith(scheme):
            return "postgresql+psycopg://" + url.removeprefix(scheme)
    return url
