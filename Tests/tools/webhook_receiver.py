#!/usr/bin/env python3
"""A webhook receiver for the end-to-end tests, verifying every delivery with the `standardwebhooks` package (an
independent implementation of the Standard Webhooks signature) against the secrets the test gives it.

Prints {"port": N} once listening on 127.0.0.1. Control, by the test:
  POST /_control {"path": "/a", "mode": "ok" | "fail" | "hang" | "gone" | "retry-after:<seconds>"}
  POST /_control {"secrets": ["whsec_…", …]}          secrets to verify with (each one is tried alone)
  GET  /_deliveries                                   every delivery so far, in arrival order
Every other POST is a delivery: recorded (headers, body, which secrets verify it) and answered by its path's mode:
ok 200, fail 500, gone 410, hang (no answer for 60 s), retry-after:N (503 with Retry-After: N)."""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook

lock = threading.Lock()
modes, secrets, deliveries = {}, [], []


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/_deliveries":
            with lock:
                body = json.dumps(deliveries).encode()
            self.reply(200, body, [("Content-Type", "application/json")])
        else:
            self.reply(404)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path == "/_control":
            command = json.loads(body)
            with lock:
                if "mode" in command:
                    modes[command["path"]] = command["mode"]
                if "secrets" in command:
                    secrets[:] = command["secrets"]
            return self.reply(204)
        headers = {name.lower(): value for name, value in self.headers.items()}
        with lock:
            known = list(secrets)
            mode = modes.get(self.path, "ok")
        verified = []
        for index, secret in enumerate(known):
            try:
                Webhook(secret).verify(body, headers)
                verified.append(index)
            except Exception:
                pass
        try:
            payload = json.loads(body)
        except ValueError:
            payload = None
        with lock:
            deliveries.append({"path": self.path, "webhook_id": headers.get("webhook-id"),
                               "webhook_timestamp": headers.get("webhook-timestamp"),
                               "webhook_signature": headers.get("webhook-signature"),
                               "content_type": headers.get("content-type"), "verified_with": verified,
                               "payload": payload, "body": body.decode("utf-8", "replace"), "mode": mode,
                               "received_at": time.time(), "peer_port": self.client_address[1]})
        if mode == "hang":
            time.sleep(60)
            return self.reply(200)
        if mode.startswith("retry-after:"):
            return self.reply(503, b"busy", [("Retry-After", mode.split(":", 1)[1])])
        self.reply({"ok": 200, "fail": 500, "gone": 410}.get(mode, 500), b"ok")


# A listen queue deep enough for a worker's POSTs all connecting at once (the default of 5 drops the rest's SYNs,
# which the kernel resends only after a second).
ThreadingHTTPServer.request_queue_size = 128
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(json.dumps({"port": server.server_address[1]}), flush=True)
server.serve_forever()
