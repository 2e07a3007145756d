"""gunicorn settings of ``smallworld serve`` (``--config python:service.infra.gunicorn_serve``): the service's
log line format for the web server, as deploy/gunicorn.conf.py gives it in production."""

from service.infra.logfmt import gunicorn_logconfig

logconfig_dict = gunicorn_logconfig("web")
