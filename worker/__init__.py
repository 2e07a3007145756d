"""Celery app and thin tasks: each opens the app's session, calls a domain operation, commits."""
