"""Domain operations: one code path per operation, whoever triggers it (web, JSON API, worker, CLI).

Each operation takes a SQLModel ``Session``, does its work, writes the mails it causes to the outbox and
commits once, so a state change and its mails land together or not at all (ARCHITECTURE §6).
"""
