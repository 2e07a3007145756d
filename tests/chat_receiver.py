"""A chat for the tests: a tiny HTTP server in a thread that takes apprise's ``json://`` notifications.

It keeps every request's JSON body, answers with the status the test chose (200, or 500 to play a chat
that fails) and the body it chose (``answer``: a server's own error text), and can be stopped to play a
chat that is down. With ``location`` set it answers ``307`` to that address instead (a redirector).
``on_post``, if set, is called with each body once it is kept and before the answer (a chat slow to
answer, or one that holds a notice).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ChatReceiver:
    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.status = 200
        self.answer = b""
        self.location: str | None = None
        self.on_post: Callable[[dict[str, Any]], None] | None = None
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                receiver.paths.append(self.path)
                try:
                    body = json.loads(raw or b"null")
                except ValueError:  # a chat service that posts plain text (ntfy)
                    body = {"text": raw.decode("utf-8", "replace")}
                receiver.bodies.append(body)
                if receiver.on_post is not None:
                    receiver.on_post(body)
                if receiver.location is not None:
                    self.send_response(307)
                    self.send_header("Location", receiver.location)
                else:
                    self.send_response(receiver.status)
                self.send_header("Content-Length", str(len(receiver.answer)))
                self.end_headers()
                self.wfile.write(receiver.answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The apprise address of this chat (plain-HTTP JSON webhook)."""
        return f"json://127.0.0.1:{self.port}/hook/s3cr3t-hook-token"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def chat_receiver() -> Iterator[ChatReceiver]:
    receiver = ChatReceiver()
    receiver.thread.start()
    try:
        yield receiver
    finally:
        with suppress(OSError):
            receiver.stop()
