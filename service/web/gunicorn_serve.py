"""gunicorn settings of ``smallworld serve`` (``--config python:service.web.gunicorn_serve``): the service's
log line format and access log, signed links cut out, as deploy/gunicorn.conf.py gives them in production."""

from service.infra.logfmt import gunicorn_logconfig
from service.web.access_log import ACCESS_LOG_FORMAT, RedactingLogger

logconfig_dict = gunicorn_logconfig("web")
access_log_format = ACCESS_LOG_FORMAT
logger_class = RedactingLogger
