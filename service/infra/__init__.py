"""Infrastructure: configuration, the database and its migrations, the Celery wiring, logging, processes."""
