"""Clients for bench/attachments.sh, standard library only.

  many URL INTERACTION TOKEN FILE COUNT   uploads FILE COUNT times over 4 keep-alive connections; prints the ids
  slow URL INTERACTION TOKEN COUNT SECONDS
                                          COUNT uploads at once, each sending 64 KB a second for SECONDS seconds
                                          (a phone on a slow network); prints how many were answered 201
"""
import http.client
import json
import socket
import sys
import threading
import time
from urllib.parse import urlsplit


def many(url, interaction, token, path, count):
    body = open(path, "rb").read()
    parts = urlsplit(url)
    ids, lock, failures = [], threading.Lock(), []
    per_thread = [count // 4 + (1 if n < count % 4 else 0) for n in range(4)]

    def worker(n):
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        for _ in range(n):
            connection.request("POST", f"/v1/interactions/{interaction}/attachments", body=body,
                               headers={"Authorization": f"Bearer {token}", "Content-Type": "text/plain"})
            response = connection.getresponse()
            data = response.read()
            with lock:
                if response.status == 201:
                    ids.append(json.loads(data)["id"])
                else:
                    failures.append(f"{response.status} {data[:200]!r}")

    threads = [threading.Thread(target=worker, args=(n,)) for n in per_thread]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        print(f"{len(failures)} uploads failed, first: {failures[0]}", file=sys.stderr)
    print("\n".join(ids))


def slow(url, interaction, token, count, seconds):
    parts = urlsplit(url)
    chunk = b"s" * 65536
    statuses = []
    lock = threading.Lock()

    def one(index):
        time.sleep(index * 0.05)
        with socket.create_connection((parts.hostname, parts.port), timeout=seconds + 30) as s:
            s.sendall((f"POST /v1/interactions/{interaction}/attachments HTTP/1.1\r\nHost: bench\r\n"
                       f"Authorization: Bearer {token}\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                       f"Content-Length: {len(chunk) * seconds}\r\n\r\n").encode())
            for n in range(seconds):
                if n:
                    time.sleep(1)
                s.sendall(chunk)
            answer = b""
            while b"\r\n" not in answer:
                data = s.recv(4096)
                if not data:
                    break
                answer += data
        with lock:
            statuses.append(answer.split(b" ", 2)[1].decode() if answer.startswith(b"HTTP/") else "none")

    threads = [threading.Thread(target=one, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(sum(1 for status in statuses if status == "201"))


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    if command == "many":
        many(args[0], args[1], args[2], args[3], int(args[4]))
    elif command == "slow":
        slow(args[0], args[1], args[2], int(args[3]), int(args[4]))
    else:
        sys.exit(__doc__)
