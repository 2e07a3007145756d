"""The leased drain (ARCHITECTURE §6): the one way rows written in a change's transaction are sent afterwards,
used by mail (``service.domain.delivery``) and by chat notices (``service.domain.chat_notices``).

A queue is a table of rows to send (``status``, ``attempts``, ``next_attempt_at``, ``claimed_by``,
``last_error``, ``sent_at``). This package owns everything a queue's drain does but the sending itself:
claiming the due rows under a lease and holding it (``service.drain.leases``), the batch loop, retries with
backoff, the outcomes written together every fraction of a second, the report, the settings' shape and the
body of the worker's task (``service.drain.queue``). A queue supplies only what differs (a
:class:`~service.drain.queue.Queue`): its table and the read of what a send needs, how a row is sent (SMTP,
an HTTP post), why a row is not to be sent any more, and which failures are worth a retry.
"""
