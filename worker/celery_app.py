"""The Celery app for the ``celery`` command: ``celery -A worker.celery_app worker``.

``smallworld worker`` and ``smallworld beat`` start the same app; this module is for running
Celery's own command line (``inspect``, ``purge``, ``events``…) against the service.
"""

from service import create_app

flask_app = create_app()
celery = flask_app.extensions["celery"]
