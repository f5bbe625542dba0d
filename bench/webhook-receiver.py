#!/usr/bin/env python3
"""The benchmark's webhook receiver: answers every POST 204 at once and counts; GET /count reports the count.
Standard library only. Usage: webhook-receiver.py PORT"""
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

count = 0
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        global count
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with lock:
            count += 1
        self.send_response(204)
        self.end_headers()

    def do_GET(self):
        with lock:
            body = str(count).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
server.daemon_threads = True
server.request_queue_size = 1024
server.serve_forever()
