"""The web: HTTP entry points (pages, JSON API, admin pages, signed links), their templates and static files."""
