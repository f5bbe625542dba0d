"""User-space instructions per request, counted by valgrind's callgrind, for the hot feed page (answered from memory on
libmicrohttpd's thread) and /healthz (the async path), for one or more builds side by side (by hand; `make bench`'s
bench/instructions.sh counts /healthz against C only).

Each target serves N1 and then N2 requests one at a time over one kept-alive connection, after 20 that put the token
and the page in memory, in two runs of the server under callgrind; the difference of the two totals over N2 - N1 leaves
out start-up and shutdown. The feed (20 items, as bench/feeds.sh) is set up once by the first build, natively.

    scripts/with-temp-postgres.sh python3 bench/feed-instructions.py before=/tmp/sb-old after=.build/release/switchboard

A build labelled `c` is the raw-C baseline (`bench/c-baseline/mhd-baseline`, built by `bench/lib.sh`): it answers
the feed's path from memory with the hot feed's work (bench/c-baseline/feed.c: the token checked, the page looked up
and held, ETag and request id) for a page of the same bytes, and `/healthz` becomes its `/async` (suspend, a worker
thread, resume), as bench/instructions.sh counts it:

    scripts/with-temp-postgres.sh python3 bench/feed-instructions.py c=bench/c-baseline/mhd-baseline now=/tmp/sb

Strip the binaries first (`strip --strip-debug`): this valgrind cannot read the toolchain's DWARF 5.
Environment: IR_REQUESTS="300 1300" (N1 N2), IR_PATHS="/v1/feeds/launch /healthz", IR_PORT=18777, IR_KEEP=DIR (keeps
each callgrind file there, for callgrind_annotate); IR_CACHE=1 runs cachegrind with its cache simulation (the caches of
the machine it runs on) instead, and prints per request the instructions, first-level instruction-cache misses and
first-level data-cache read and write misses (cg_diff and cg_annotate --sort=I1mr on two kept files show by
function where the instruction misses fall).
IR_HEAD=app sends each counted request with the head of a mobile app's SDK (User-Agent, Accept, Accept-Language,
Accept-Encoding, an app version and a device id, beside Host and Authorization) instead of Python's three fields.
IR_THREADS=1 counts only the threads that queue responses (libmicrohttpd's own, where the hot feed is answered):
background work (timers, pollers) grows with how long a run lasts under valgrind, not with its requests, and moves
whole-process counts by a thousand or more a request between sittings.
"""
import http.client, json, os, shutil, signal, subprocess, sys, tempfile, time

N1, N2 = map(int, os.environ.get("IR_REQUESTS", "300 1300").split())
PATHS = os.environ.get("IR_PATHS", "/v1/feeds/launch /healthz").split()
PORT = int(os.environ.get("IR_PORT", "18777"))
KEEP = os.environ.get("IR_KEEP")
CACHE = os.environ.get("IR_CACHE") == "1"
THREADS = os.environ.get("IR_THREADS") == "1"
# What a banking app's SDK sends with every request, beside Host and Authorization (IR_HEAD=app).
APP_HEAD = {"User-Agent": "Switchboard-iOS/3.4.1 (iPhone15,2; iOS 17.4.1; Scale/3.00)", "Accept": "application/json",
            "Accept-Language": "en-GB,en;q=0.9", "Accept-Encoding": "gzip, deflate, br",
            "X-App-Version": "7.12.0 (20261201.1)", "X-Device-ID": "6F9619FF-8B86-D011-B42D-00C04FC964FF"}
EXTRA = APP_HEAD if os.environ.get("IR_HEAD") == "app" else {}
# cachegrind's totals line, in this order: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw.
CACHE_EVENTS = {"instructions": 0, "I1 misses": 1, "D1 read misses": 4, "D1 write misses": 7}
ADMIN = "bench-admin-token-0123456789"
builds = [argument.split("=", 1) for argument in sys.argv[1:]]
if not builds or "DATABASE_URL" not in os.environ:
    sys.exit(__doc__)
env = dict(os.environ, PORT=str(PORT), HOST="127.0.0.1", STREAM_PORT="off", LOG_LEVEL="error",
           RATE_LIMIT_PER_MINUTE="0", SWITCHBOARD_ADMIN_TOKEN=ADMIN)
# What bench/lib.sh's BENCH_VALGRIND_TUNABLES says, for the same reason: memset and memcpy without `rep stosb`/`rep movsb`,
# whose every byte valgrind counts as an instruction (libmicrohttpd zeroes a connection's pool after each request).
VALGRIND_ENV = {"GLIBC_TUNABLES": subprocess.run(
    ["bash", "-c", f'source "{os.path.dirname(os.path.abspath(__file__))}/lib.sh"; echo "$BENCH_VALGRIND_TUNABLES"'],
    capture_output=True, text=True, check=True).stdout.strip()}
work = tempfile.mkdtemp()


def call(method, path, token=None, body=None, connection=None, extra=None):
    connection = connection or http.client.HTTPConnection("127.0.0.1", PORT, timeout=120)
    headers = {"Content-Type": "application/json"} if body else {}
    headers.update(extra or {})
    if token:
        headers["Authorization"] = "Bearer " + token
    connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    return response.status, response.read()


def start(command, extra=None, ready="/readyz"):
    server = subprocess.Popen(command, env=dict(env, **(extra or {})), stdout=subprocess.DEVNULL,
                              stderr=open(f"{work}/server.log", "a"))
    deadline = time.time() + 300
    while time.time() < deadline:
        try:
            if call("GET", ready)[0] == 200:
                return server
        except OSError:
            pass
        time.sleep(0.5)
    server.kill()
    sys.exit(f"not ready in 300 s (log: {work}/server.log)")


def stop(server):
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=300)


# The feed is set up by the first Switchboard build (the C baseline has no API to set it up with).
switchboards = [binary for label, binary in builds if label != "c"]
if not switchboards:
    sys.exit("at least one Switchboard build is needed to set the feed up")
server = start([switchboards[0]])
_, tenant = call("POST", "/v1/admin/tenants", ADMIN, '{"name":"instructions"}')
api_key = json.loads(tenant)["api_key"]
_, session = call("POST", "/v1/sessions", api_key, '{"user_id":"instructions","role":"customer"}')
token = json.loads(session)["token"]
for i in range(1, 21):
    call("POST", "/v1/feeds/launch/items", api_key,
         json.dumps({"title": f"Item {i}", "body": f"Body of item {i}, long enough to look like a real teaser line.",
                     "url": f"https://example.com/{i}"}))
# What the C baseline serves in the feed's place: a page of the same bytes under the same token and ETag.
page = http.client.HTTPConnection("127.0.0.1", PORT, timeout=120)
page.request("GET", "/v1/feeds/launch", headers={"Authorization": "Bearer " + token})
answer = page.getresponse()
C_ENV = {"PAGE_BYTES": str(len(answer.read())), "FEED_TOKEN": token, "FEED_KEY": "launch",
         "FEED_ETAG": answer.getheader("ETag")}
page.close()
stop(server)


def served_path(label, path):
    """The path a build is asked: the C baseline's counterpart of `/healthz` is its `/async`."""
    return "/async" if label == "c" and path == "/healthz" else path


def total(label, binary, path, count):
    out = f"{work}/callgrind.out"
    for name in os.listdir(work):
        if name.startswith("callgrind.out"):
            os.remove(os.path.join(work, name))
    tool = ["--tool=cachegrind", "--cache-sim=yes", "--cachegrind-out-file=" + out] if CACHE else \
        ["--tool=callgrind", "--callgrind-out-file=" + out] + (["--separate-threads=yes"] if THREADS else [])
    command = ["valgrind", *tool, binary]
    server = start(command, dict(C_ENV, **VALGRIND_ENV), ready="/direct") if label == "c" else \
        start(command, VALGRIND_ENV)
    path = served_path(label, path)
    auth = token if path.startswith("/v1/") else None
    connection = http.client.HTTPConnection("127.0.0.1", PORT, timeout=120)
    for _ in range(20):
        call("GET", path, auth, connection=connection, extra=EXTRA)
    for _ in range(count):
        status, _ = call("GET", path, auth, connection=connection, extra=EXTRA)
        if status != 200:
            sys.exit(f"{label} {path}: status {status}")
    connection.close()
    stop(server)
    outputs = sorted(os.path.join(work, name) for name in os.listdir(work) if name.startswith("callgrind.out"))
    if THREADS:
        # One file per thread: libmicrohttpd's (they run its code, and no Swift task: the pool's threads and the main
        # thread run jobs). Every one of them, whether or not it served this run's connection, so that both runs of a
        # build count the same threads.
        def served_by_libmicrohttpd(text):
            return "libmicrohttpd" in text and "swift_job_run" not in text
        outputs = [output for output in outputs if served_by_libmicrohttpd(open(output).read())]
    totals = None
    for output in outputs:
        if KEEP:
            suffix = output[len(out):]
            shutil.copy(output, os.path.join(KEEP, f"{label}-{path.strip('/').replace('/', '_')}-{count}.out{suffix}"))
        summary = [line for line in open(output) if line.startswith(("summary:", "totals:"))][:1]
        if summary:
            fields = [int(field) for field in summary[0].split()[1:]]
            totals = fields if totals is None else [a + b for a, b in zip(totals, fields)]
    if totals is None:
        sys.exit(f"{label}: valgrind wrote no totals")
    return totals


for path in PATHS:
    for label, binary in builds:
        first = total(label, binary, path, N1)
        second = total(label, binary, path, N2)
        shown = served_path(label, path)
        per = [(b - a) // (N2 - N1) for a, b in zip(first, second)]
        if CACHE:
            figures = ", ".join(f"{name} {per[index]}" for name, index in CACHE_EVENTS.items())
            print(f"{label:12} {shown:18} per request: {figures}", flush=True)
        else:
            print(f"{label:12} {shown:18} {per[0]:8d} instructions per request", flush=True)
shutil.rmtree(work)
