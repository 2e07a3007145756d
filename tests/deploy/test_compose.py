"""deploy/: the compose file validates and describes the production process set; the env example names every
setting; the gunicorn settings load; the Dockerfile copies every package.

``docker-compose config`` (Debian's docker-compose 1.29, which validates against the Compose Specification
schema without a Docker engine) runs when installed; CI installs it (.ci/run) and requires it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from service.infra import queues
from service.infra.config import DEFAULTS, PREFIX
from tests.conftest import service_unavailable

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
APP_SERVICES = {"migrate", "web", "worker", "mail-worker", "beat", "inbound"}


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    return document


def env_with_secrets(tmp_path: Path, **overrides: str) -> Path:
    """A copy of deploy/ with a .env made from env.example, its three secrets filled in."""
    folder = tmp_path / "deploy"
    folder.mkdir()
    shutil.copy(DEPLOY / "compose.yaml", folder / "compose.yaml")
    values = {"SMALLWORLD_SECRET_KEY": "k", "POSTGRES_PASSWORD": "p", "REDIS_PASSWORD": "r", **overrides}
    lines = []
    for line in (DEPLOY / "env.example").read_text().splitlines():
        name = line.split("=", 1)[0]
        lines.append(f"{name}={values[name]}" if name in values else line)
    (folder / ".env").write_text("\n".join(lines) + "\n")
    return folder


def docker_compose() -> str:
    found = shutil.which("docker-compose")
    if found is None:
        service_unavailable("docker-compose is not installed (apt-get install --no-install-recommends docker-compose)")
    return found


def test_docker_compose_validates_the_file(tmp_path: Path) -> None:
    folder = env_with_secrets(tmp_path)
    checked = subprocess.run([docker_compose(), "config", "-q"], cwd=folder, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    resolved = yaml.safe_load(
        subprocess.run([docker_compose(), "config"], cwd=folder, capture_output=True, text=True, check=True).stdout
    )
    web = resolved["services"]["web"]["environment"]
    assert web["SMALLWORLD_ENV"] == "production"
    assert web["SMALLWORLD_DATABASE_URL"] == "postgresql://smallworld:p@postgres:5432/smallworld"
    assert web["SMALLWORLD_BROKER_URL"] == "redis://:r@redis:6379/0"
    assert web["SMALLWORLD_RATELIMIT_STORAGE_URI"] == "redis://:r@redis:6379/2"


def test_docker_compose_refuses_to_run_without_the_passwords(tmp_path: Path) -> None:
    folder = env_with_secrets(tmp_path, POSTGRES_PASSWORD="")
    checked = subprocess.run([docker_compose(), "config", "-q"], cwd=folder, capture_output=True, text=True)
    assert checked.returncode != 0 and "set POSTGRES_PASSWORD in deploy/.env" in checked.stderr


def test_the_services_are_the_production_process_set(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == APP_SERVICES | {"postgres", "redis", "mailpit"}
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])
    assert services["migrate"]["command"] == ["smallworld", "db", "upgrade"]
    assert services["migrate"]["restart"] == "no"
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    for name in APP_SERVICES - {"migrate"}:
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully", name
    assert services["web"]["command"][:3] == ["gunicorn", "--config", "/etc/smallworld/gunicorn.conf.py"]
    assert services["beat"]["command"] == ["smallworld", "beat", "--max-interval", "5"]  # a dead beat's lock: 25 s
    assert "deploy" not in services["beat"] and "scale" not in services["beat"]  # one beat, never scaled
    assert services["mailpit"]["profiles"] == ["staging"]
    assert services["inbound"]["command"][:2] == ["smallworld", "inbound"]  # orders by mail (SMTP)
    # Every app service runs the one image, with the same settings.
    assert len({services[name]["image"] for name in APP_SERVICES}) == 1
    assert all(services[name]["env_file"] == ".env" for name in APP_SERVICES)


def test_the_workers_consume_every_queue_between_them(compose: dict[str, Any]) -> None:
    consumed = set()
    for name in ("worker", "mail-worker"):
        command = compose["services"][name]["command"]
        assert command[:2] == ["smallworld", "worker"]
        consumed |= set(command[command.index("-Q") + 1].split(","))
    assert consumed == set(queues.ALL)


def test_the_env_example_names_every_setting() -> None:
    text = (DEPLOY / "env.example").read_text()
    named = set(re.findall(rf"^#? ?{PREFIX}_([A-Z_]+)=", text, flags=re.MULTILINE))
    missing = {*DEFAULTS, "INSTANCE_PATH"} - named
    assert not missing, f"deploy/env.example does not mention {sorted(missing)}"
    unknown = named - {*DEFAULTS, "INSTANCE_PATH"}
    assert not unknown, f"deploy/env.example names settings the service does not read: {sorted(unknown)}"
    assert re.search(r"^SMALLWORLD_SECRET_KEY=$", text, flags=re.MULTILINE)  # never a usable default


def gunicorn_settings() -> tuple[Any, dict[str, Any]]:
    """gunicorn's configuration as deploy/gunicorn.conf.py sets it, and the file's names."""
    from gunicorn.config import Config

    config = Config()
    namespace: dict[str, Any] = {"__file__": str(DEPLOY / "gunicorn.conf.py")}
    exec(compile((DEPLOY / "gunicorn.conf.py").read_text(), "gunicorn.conf.py", "exec"), namespace)
    for name, value in namespace.items():
        if name in config.settings:
            config.set(name, value)
    return config, namespace


def test_the_gunicorn_settings_load_and_redact_signed_links() -> None:
    config, namespace = gunicorn_settings()
    from service.domain.links import redacted_path as redacted
    from service.web.access_log import RedactingLogger

    assert config.worker_class_str == "gthread" and config.threads >= 1 and not config.preload_app
    assert config.logger_class is RedactingLogger  # it cuts every secret link kind out (tests/web/test_access_log.py)
    assert redacted("/play/eyJnIjoxfQ.a.b") == "/play/…"
    assert redacted("/unsubscribe/x.y.z?w=1") == "/unsubscribe/…?w=1"
    assert redacted("/api/games/1") == "/api/games/1"
    assert redacted("/admin/games/1") == "/admin/games/1"


@pytest.mark.parametrize(
    "access_log_format",
    [
        None,  # the file's own
        '%(h)s %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s "%(f)s" "%(a)s" %(D)s %(L)s %(p)s',  # every plain atom
        "%(U)s %({x-request-id}i)s %({content-type}o)s %({wsgi.url_scheme}e)s",  # headers and environ
    ],
)
def test_the_access_log_line_is_gunicorns_with_the_signed_links_cut_out(access_log_format: str | None) -> None:
    import base64
    import datetime
    import types

    from gunicorn.glogging import Logger

    config, namespace = gunicorn_settings()
    if access_log_format is not None:
        config.set("access_log_format", access_log_format)
    config.set("logconfig_dict", {})  # gunicorn's own handlers: this test only formats lines
    environ = {
        "REQUEST_METHOD": "GET",
        "RAW_URI": "/play/eyJnIjoxfQ.a.b?x=1",
        "PATH_INFO": "/play/eyJnIjoxfQ.a.b",
        "QUERY_STRING": "x=1",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "192.0.2.7",
        "HTTP_USER_AGENT": "curl/8",
        "HTTP_REFERER": "https://example.org/",
        "HTTP_AUTHORIZATION": "Basic " + base64.b64encode(b"ann:secret").decode(),
        "HTTP_X_REQUEST_ID": "r-1",
        "wsgi.url_scheme": "https",
    }
    request = types.SimpleNamespace(headers=[("X-REQUEST-ID", "r-1"), ("USER-AGENT", "curl/8")])
    response = types.SimpleNamespace(status="200 OK", sent=123, headers=[("Content-Type", "text/html")])
    took = datetime.timedelta(microseconds=4321)

    def line(logger: Any) -> str:
        atoms = logger.atoms_wrapper_class(logger.atoms(response, request, environ, took))
        atoms["t"] = "[now]"
        atoms["p"] = "<pid>"
        return str(config.access_log_format % atoms)

    ours, gunicorns = line(namespace["RedactingLogger"](config)), line(Logger(config))
    assert ours == gunicorns.replace("/eyJnIjoxfQ.a.b", "/…")
    assert "eyJ" not in ours and ("/play/…" in ours)


@pytest.mark.processes
def test_the_web_server_logs_every_line_with_time_level_and_process(tmp_path: Path) -> None:
    """gunicorn with deploy/gunicorn.conf.py: its own lines and its access log in the service's line format
    (service.infra.logfmt), as the workers and beat write theirs."""
    import sys
    import time
    import urllib.request

    from tests.processes import free_port, service_environment

    port = free_port()
    env = service_environment(tmp_path / "instance", GUNICORN_BIND=f"127.0.0.1:{port}", WEB_CONCURRENCY="1")
    subprocess.run([str(Path(sys.executable).parent / "smallworld"), "db", "upgrade"], env=env, check=True)
    log = tmp_path / "web.log"
    with log.open("wb") as output:
        web = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "--config", str(DEPLOY / "gunicorn.conf.py"), "service:create_app()"],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
                    assert answer.status == 200
                    break
            except OSError:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
    finally:
        web.terminate()
        web.wait(timeout=30)
    lines = log.read_text().splitlines()
    line = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (INFO|WARNING|ERROR) web\[\d+\] [\w.]+: ")
    assert lines and all(line.match(text) for text in lines), lines
    assert any('gunicorn.access: 127.0.0.1 "GET /health HTTP/1.1" 200' in text for text in lines), lines


def test_the_image_gets_every_package_and_the_web_settings() -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = {pattern.rstrip("*") for pattern in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]}
    copied = set(re.findall(r"^COPY (\w+) \./\1$", dockerfile, flags=re.MULTILINE))
    assert packages <= copied, f"the image misses {sorted(packages - copied)}"
    assert "--constraint constraints.txt" in dockerfile
    assert "COPY deploy/gunicorn.conf.py /etc/smallworld/gunicorn.conf.py" in dockerfile
    assert re.search(r"^USER smallworld$", dockerfile, flags=re.MULTILINE)  # never root


def test_every_systemd_unit_restarts_its_process_whatever_its_exit_and_never_gives_up() -> None:
    units = sorted((DEPLOY / "systemd").glob("*.service"))
    assert [u.name for u in units] == [
        "smallworld-beat.service",
        "smallworld-inbound.service",
        "smallworld-web.service",
        "smallworld-worker@.service",
    ]
    for unit in units:
        settings = dict(
            line.split("=", 1) for line in unit.read_text().splitlines() if "=" in line and not line.startswith("#")
        )
        assert settings["Restart"] == "always", unit.name  # on-failure would leave a worker that exited 0 down
        assert settings["StartLimitIntervalSec"] == "0", unit.name
        assert int(settings["RestartSec"]) <= 5, unit.name
    beat = (DEPLOY / "systemd" / "smallworld-beat.service").read_text()
    assert "smallworld beat --max-interval 5" in beat  # as compose.yaml runs it
