from tests.smtp import smtp_server  # noqa: F401  (fixture)
