"""service.infra.config: settings from SMALLWORLD_* variables, embedded defaults, refusals."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

import service.infra.config
from service import create_app
from service.infra.config import DEFAULT_SECRET_KEY, ConfigurationError


def test_the_defaults_put_everything_in_the_instance_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    instance = tmp_path / "instance"
    monkeypatch.setenv("SMALLWORLD_INSTANCE_PATH", str(instance))

    app = create_app()

    assert app.instance_path == str(instance)
    assert instance.is_dir()
    assert app.config["ENV"] == "development"
    assert app.config["DATABASE_URL"] == f"sqlite:///{instance / 'smallworld.sqlite'}"
    assert app.config["BROKER_URL"] == f"sqla+sqlite:///{instance / 'broker.sqlite'}"
    assert app.config["MAIL_BACKEND"] == "file"
    assert app.config["MAIL_DIR"] == str(instance / "mail")
    assert app.config["SECRET_KEY"] == DEFAULT_SECRET_KEY


def test_settings_come_from_smallworld_variables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SMALLWORLD_INSTANCE_PATH", str(tmp_path))
    monkeypatch.setenv("SMALLWORLD_DATABASE_URL", "postgresql://db.example/smallworld")
    monkeypatch.setenv("SMALLWORLD_BROKER_URL", "redis://broker.example:6379/0")
    monkeypatch.setenv("SMALLWORLD_MAIL_BACKEND", "smtp")
    monkeypatch.setenv("SMALLWORLD_SMTP_HOST", "mail.example")
    monkeypatch.setenv("SMALLWORLD_SMTP_PORT", "587")
    monkeypatch.setenv("SMALLWORLD_BASE_URL", "https://smallworld.example")

    config = create_app().config

    assert config["DATABASE_URL"] == "postgresql+psycopg://db.example/smallworld"
    assert config["BROKER_URL"] == "redis://broker.example:6379/0"
    assert config["MAIL_BACKEND"] == "smtp"
    assert (config["SMTP_HOST"], config["SMTP_PORT"]) == ("mail.example", 587)
    assert config["BASE_URL"] == "https://smallworld.example"


def test_the_factory_argument_overrides_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SMALLWORLD_BASE_URL", "https://from-environment.example")
    app = create_app({"INSTANCE_PATH": str(tmp_path), "BASE_URL": "https://given.example"})
    assert app.config["BASE_URL"] == "https://given.example"


@pytest.mark.parametrize("secret", [None, "", DEFAULT_SECRET_KEY])
def test_production_refuses_a_missing_or_default_secret_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secret: str | None
) -> None:
    monkeypatch.setenv("SMALLWORLD_INSTANCE_PATH", str(tmp_path))
    monkeypatch.setenv("SMALLWORLD_ENV", "production")
    if secret is not None:
        monkeypatch.setenv("SMALLWORLD_SECRET_KEY", secret)

    with pytest.raises(ConfigurationError, match="SMALLWORLD_SECRET_KEY"):
        create_app()


def test_production_starts_with_a_secret_key_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SMALLWORLD_INSTANCE_PATH", str(tmp_path))
    monkeypatch.setenv("SMALLWORLD_ENV", "production")
    monkeypatch.setenv("SMALLWORLD_SECRET_KEY", "k7Jx2-a-real-random-value-9Qz")

    assert create_app().config["ENV"] == "production"


@pytest.mark.parametrize(("name", "value"), [("SMALLWORLD_ENV", "staging"), ("SMALLWORLD_MAIL_BACKEND", "pigeon")])
def test_an_unknown_choice_is_refused_with_the_allowed_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv("SMALLWORLD_INSTANCE_PATH", str(tmp_path))
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigurationError, match=name):
        create_app()


@pytest.mark.parametrize("value", ["0", "-3", "thirty", "2.5", "true"])
def test_a_mail_retention_that_is_not_a_whole_number_of_days_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("SMALLWORLD_INSTANCE_PATH", str(tmp_path))
    monkeypatch.setenv("SMALLWORLD_MAIL_RETENTION_DAYS", value)
    with pytest.raises(ConfigurationError, match="SMALLWORLD_MAIL_RETENTION_DAYS .* 1 or more"):
        create_app()


def test_mail_is_kept_30_days_unless_told_otherwise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SMALLWORLD_INSTANCE_PATH", str(tmp_path))
    assert create_app().config["MAIL_RETENTION_DAYS"] == 30
    monkeypatch.setenv("SMALLWORLD_MAIL_RETENTION_DAYS", "7")
    assert create_app().config["MAIL_RETENTION_DAYS"] == 7


def test_the_examples_in_the_docstrings_hold() -> None:
    assert doctest.testmod(service.infra.config).failed == 0
