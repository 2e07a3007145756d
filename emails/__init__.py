"""Email: message templates (subject.txt, body.txt, body.html per message), rendering, delivery.

Knows nothing of HTTP or the database; the service's outbox hands it what to send.
"""
