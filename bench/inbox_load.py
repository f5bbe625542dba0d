"""The agents' inbox under load, against one Switchboard process (bench/inbox.sh starts it).

Standard library only (run with `python3 -I`). Phases, in one run so that every figure is compared side by side:

1. A tenant with AGENTS agents, INTERACTIONS interactions (one customer each), assigned round robin.
2. A tenant's message rate, closed loop (POSTERS concurrent posters for RATE_SECONDS), with no inbox stream open,
   then with ANY_WATCHERS `assigned=any` inbox streams open.
3. Every agent opens an `assigned=me` inbox stream (the ANY_WATCHERS ones stay): RSS before and after, per stream.
4. INTERACTION_STREAMS interaction streams (spread over the interactions), then MESSAGES_PER_SECOND customer
   messages a second for LOAD_SECONDS, each on a random interaction. Latency of a message = when a stream received
   an event naming it, less when its POST was sent (one clock: the same machine). Every inbox stream's final view of
   each of its interactions must show the interaction's last message (none dropped), and no stream may end.

Prints a markdown report on stdout; exit status 1 when a target is missed.
"""
import asyncio
import json
import os
import random
import sys
import time

PORT = int(os.environ["SB_PORT"])
STREAM_PORT = int(os.environ.get("SB_STREAM_PORT", PORT))
ADMIN = os.environ["SB_ADMIN"]
PID = int(os.environ["SB_PID"])
AGENTS = int(os.environ.get("INBOX_AGENTS", 200))
ANY_WATCHERS = int(os.environ.get("INBOX_ANY_WATCHERS", 20))
INTERACTIONS = int(os.environ.get("INBOX_INTERACTIONS", 1000))
INTERACTION_STREAMS = int(os.environ.get("INBOX_INTERACTION_STREAMS", 5000))
MESSAGES_PER_SECOND = int(os.environ.get("INBOX_MESSAGES_PER_SECOND", 300))
LOAD_SECONDS = int(os.environ.get("INBOX_LOAD_SECONDS", 20))
RATE_SECONDS = int(os.environ.get("INBOX_RATE_SECONDS", 8))
POSTERS = int(os.environ.get("INBOX_POSTERS", 32))
SEED = int(os.environ.get("INBOX_SEED", 7))


async def call(method, path, token=None, body=None, port=PORT):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    data = json.dumps(body).encode() if body is not None else b""
    head = f"{method} {path} HTTP/1.1\r\nHost: b\r\nConnection: close\r\nContent-Length: {len(data)}\r\n"
    if token:
        head += f"Authorization: Bearer {token}\r\n"
    if body is not None:
        head += "Content-Type: application/json\r\n"
    writer.write(head.encode() + b"\r\n" + data)
    await writer.drain()
    raw = await reader.read()
    writer.close()
    head, _, payload = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, (json.loads(payload) if payload.strip().startswith(b"{") else None)


async def gather_limited(coroutines, limit=32):
    semaphore = asyncio.Semaphore(limit)

    async def run(coroutine):
        async with semaphore:
            return await coroutine
    return await asyncio.gather(*(run(c) for c in coroutines))


def cpu_ms(pid):
    """User and system CPU of a process so far, in milliseconds."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def postgres_cpu_ms():
    """CPU of every postgres process, in milliseconds (the database serves this bench alone)."""
    total = 0.0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/comm") as comm:
                    if comm.read().strip() != "postgres":
                        continue
                total += cpu_ms(int(entry))
            except OSError:
                continue
    return total


def rss_kb():
    with open(f"/proc/{PID}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Stream:
    """One SSE connection (HTTP/1.0: the body is the raw event stream), parsed as it arrives."""

    def __init__(self, path, token, on_event):
        self.path, self.token, self.on_event = path, token, on_event
        self.ended = False
        self.ready = asyncio.Event()
        self.task = None

    async def run(self):
        reader, writer = await asyncio.open_connection("127.0.0.1", STREAM_PORT)
        writer.write(f"GET {self.path} HTTP/1.0\r\nHost: b\r\nAccept: text/event-stream\r\n"
                     f"Authorization: Bearer {self.token}\r\n\r\n".encode())
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        if b" 200 " not in head.split(b"\r\n", 1)[0]:
            raise RuntimeError(f"{self.path}: {head[:60]!r}")
        self.ready.set()
        buffer = b""
        try:
            while True:
                chunk = await reader.read(65536)
                if not chunk:
                    break
                buffer += chunk
                while b"\n\n" in buffer:
                    block, buffer = buffer.split(b"\n\n", 1)
                    event, data = "message", []
                    for line in block.split(b"\n"):
                        if line.startswith(b"event: "):
                            event = line[7:].decode()
                        elif line.startswith(b"data: "):
                            data.append(line[6:])
                    if data:
                        self.on_event(event, b"\n".join(data))
        finally:
            self.ended = True
            writer.close()

    def start(self):
        self.task = asyncio.ensure_future(self.run())
        return self

    def stop(self):
        self.task.cancel()


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


async def main():
    rng = random.Random(SEED)
    status, tenant = await call("POST", "/v1/admin/tenants", ADMIN, {"name": "Inbox bench"})
    key = tenant["api_key"]

    async def session(user, role):
        return (await call("POST", "/v1/sessions", key, {"user_id": user, "role": role}))[1]["token"]
    agents = await gather_limited([session(f"agent-{n}", "agent") for n in range(AGENTS)])
    customers = await gather_limited([session(f"customer-{n}", "customer") for n in range(INTERACTIONS)])
    created = await gather_limited([call("POST", "/v1/interactions", c, {"subject": f"bench {n}"})
                                    for n, c in enumerate(customers)])
    ids = [body["id"] for _, body in created]
    owner = {i: n % AGENTS for n, i in enumerate(ids)}
    await gather_limited([call("POST", f"/v1/interactions/{i}/assign", key, {"agent_id": f"agent-{owner[i]}"})
                          for i in ids])
    token_of = dict(zip(ids, customers))

    sent_at = {}        # message id -> send time
    last_message = {}   # interaction -> its last message id (as acknowledged)

    async def post(interaction):
        started = time.monotonic()
        status, body = await call("POST", f"/v1/interactions/{interaction}/messages", token_of[interaction],
                                  {"text": "hello from the bench"})
        if status == 201:
            sent_at[body["id"]] = started
            last_message[interaction] = body["id"]
        return status

    async def closed_loop(seconds):
        """Message POSTs per second, and Switchboard's and Postgres's CPU per message (µs)."""
        done = 0
        deadline = time.monotonic() + seconds
        server_before, database_before = cpu_ms(PID), postgres_cpu_ms()

        async def poster():
            nonlocal done
            while time.monotonic() < deadline:
                if await post(rng.choice(ids)) == 201:
                    done += 1
        await asyncio.gather(*(poster() for _ in range(POSTERS)))
        await asyncio.sleep(1)  # what the last messages set off (batches, events) is counted too
        server = (cpu_ms(PID) - server_before) * 1000 / max(done, 1)
        database = (postgres_cpu_ms() - database_before) * 1000 / max(done, 1)
        return done / seconds, server, database

    # Phase 2: the message rate without and with the `any` watchers.
    rate_without, server_without, database_without = await closed_loop(RATE_SECONDS)
    inbox_latency, interaction_latency = [], []
    views = {}          # (watcher, interaction) -> last message id seen
    lagging = [0]

    def inbox_handler(watcher):
        def handle(event, data):
            now = time.monotonic()
            if event == "reconnect":
                lagging[0] += 1
            if event != "interaction":
                return
            entry = json.loads(data)
            preview = entry.get("last_message")
            if preview and preview["kind"] == "message":
                views[(watcher, entry["id"])] = preview["id"]
                if preview["id"] in sent_at:
                    inbox_latency.append(now - sent_at[preview["id"]])
        return handle

    any_watchers = [Stream("/v1/inbox/events?assigned=any", agents[n], inbox_handler(f"any-{n}")).start()
                    for n in range(ANY_WATCHERS)]
    await asyncio.wait_for(asyncio.gather(*(s.ready.wait() for s in any_watchers)), 60)
    rate_with, server_with, database_with = await closed_loop(RATE_SECONDS)

    # Phase 3: every agent's `assigned=me` stream; RSS per inbox stream.
    await asyncio.sleep(1)
    inbox_latency.clear()
    before = rss_kb()
    me_watchers = [Stream("/v1/inbox/events?assigned=me", agents[n], inbox_handler(f"me-{n}")).start()
                   for n in range(AGENTS)]
    await asyncio.wait_for(asyncio.gather(*(s.ready.wait() for s in me_watchers)), 60)
    await asyncio.sleep(2)
    per_inbox_kb = (rss_kb() - before) / AGENTS

    # Phase 4: interaction streams, then the paced load.
    def interaction_handler(event, data):
        if event == "message":
            message = json.loads(data)
            if message["id"] in sent_at:
                interaction_latency.append(time.monotonic() - sent_at[message["id"]])
    streams = []
    for n in range(INTERACTION_STREAMS):
        interaction = ids[n % len(ids)]
        streams.append(Stream(f"/v1/interactions/{interaction}/events", token_of[interaction], interaction_handler).start())
        if n % 200 == 199:
            await asyncio.sleep(0.05)
    await asyncio.wait_for(asyncio.gather(*(s.ready.wait() for s in streams)), 120)
    await asyncio.sleep(2)
    inbox_latency.clear()
    interaction_latency.clear()
    sent_before = len(sent_at)
    pending = set()
    start = time.monotonic()
    for n in range(MESSAGES_PER_SECOND * LOAD_SECONDS):
        delay = start + n / MESSAGES_PER_SECOND - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        task = asyncio.ensure_future(post(rng.choice(ids)))
        pending.add(task)
        task.add_done_callback(pending.discard)
    await asyncio.gather(*pending)
    achieved = (len(sent_at) - sent_before) / (time.monotonic() - start)
    await asyncio.sleep(5)

    # Every inbox view shows each of its interactions' last message.
    missing = 0
    for n in range(ANY_WATCHERS):
        missing += sum(1 for i, m in last_message.items() if views.get((f"any-{n}", i)) != m)
    for n in range(AGENTS):
        missing += sum(1 for i, m in last_message.items() if owner[i] == n and views.get((f"me-{n}", i)) != m)
    ended = sum(1 for s in any_watchers + me_watchers + streams if s.ended)
    for s in any_watchers + me_watchers + streams:
        s.stop()

    inbox_p50, inbox_p99 = percentile(inbox_latency, 50) * 1000, percentile(inbox_latency, 99) * 1000
    stream_p50, stream_p99 = percentile(interaction_latency, 50) * 1000, percentile(interaction_latency, 99) * 1000
    ratio = rate_with / rate_without if rate_without else float("nan")
    failures = []
    if missing:
        failures.append(f"{missing} inbox views lack their interaction's last message")
    if ended or lagging[0]:
        failures.append(f"{ended} streams ended, {lagging[0]} reconnect events")
    if not inbox_p99 <= 1.5 * stream_p99:
        failures.append(f"inbox p99 {inbox_p99:.0f} ms > 1.5 x interaction-stream p99 {stream_p99:.0f} ms")
    if not inbox_p99 < 1000:
        failures.append(f"inbox p99 {inbox_p99:.0f} ms >= 1 s")
    print("## Inbox streams under load\n")
    print(f"- {AGENTS} agents each with an `assigned=me` inbox stream, {ANY_WATCHERS} of them also `assigned=any`; "
          f"{INTERACTION_STREAMS} interaction streams over {INTERACTIONS} interactions (one customer each, assigned "
          f"round robin); {MESSAGES_PER_SECOND} customer messages/s for {LOAD_SECONDS} s on random interactions "
          f"(achieved {achieved:.0f}/s); client: `bench/inbox_load.py` (asyncio, one process, same machine)\n")
    print("| measure | value |\n| --- | ---: |")
    print(f"| inbox event latency p50 / p99 (ms) | {inbox_p50:.1f} / **{inbox_p99:.1f}** |")
    print(f"| interaction-stream event latency p50 / p99 (ms) | {stream_p50:.1f} / {stream_p99:.1f} |")
    print(f"| inbox p99 / interaction-stream p99 (target <= 1.5) | **{inbox_p99 / stream_p99:.2f}** |")
    print(f"| inbox events received (latency samples) | {len(inbox_latency)} |")
    print(f"| inbox views missing their last message | {missing} |")
    print(f"| streams ended / `reconnect` events | {ended} / {lagging[0]} |")
    print(f"| message POSTs/s, closed loop ({POSTERS} posters), no inbox stream | {rate_without:.0f} |")
    print(f"| the same with {ANY_WATCHERS} `assigned=any` inbox streams | {rate_with:.0f} (ratio {ratio:.2f}) |")
    print(f"| CPU per message POST without / with them, Switchboard (µs) | {server_without:.0f} / {server_with:.0f} |")
    print(f"| CPU per message POST without / with them, Postgres (µs) | {database_without:.0f} / {database_with:.0f} |")
    print(f"| RSS per inbox stream (KB) | {per_inbox_kb:.1f} |")
    print()
    if failures:
        print("**FAIL**: " + "; ".join(failures))
        return 1
    print("**PASS**: every inbox change delivered, no stream closed, inbox p99 within 1.5x the interaction streams' and under 1 s")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
