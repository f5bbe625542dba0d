#!/usr/bin/env bash
# User-space instructions per request, counted by valgrind (callgrind): Switchboard's GET /healthz against the raw-C
# baseline's GET /async (suspend -> worker thread -> resume) and GET /direct. Unlike req/s and CPU time on this shared
# 2-core machine, an instruction count does not move with the neighbours, so two builds can be told apart by a few
# percent. It sees only what runs in user space (the kernel's share, about 60 % of a request's CPU, is not in it) and
# nothing of cache misses or lock contention: a check on the code's own work, beside the timed benchmarks, not instead.
#
# Each target serves N1 and then N2 requests, one at a time over one kept-alive connection, in two runs of the server
# under callgrind; the difference of the two totals over N2 - N1 leaves out start-up and shutdown.
#   SWITCHBOARD_BIN, DATABASE_URL as for http.sh; BENCH_IR_REQUESTS="500 2500" (N1 N2)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$BENCH_ROOT"

SB_BIN=${SWITCHBOARD_BIN:-$BENCH_ROOT/.build/release/switchboard}
read -r N1 N2 <<<"${BENCH_IR_REQUESTS:-500 2500}"
command -v valgrind >/dev/null || bench_die "valgrind is needed (apt-get install valgrind)"
bench_init
bench_build_c_baseline
[ -x "$SB_BIN" ] || bench_die "Switchboard binary not found or not executable: $SB_BIN"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# This valgrind cannot read the toolchain's DWARF 5; symbols are enough for a count.
strip --strip-debug -o "$work/switchboard" "$SB_BIN"

# Sends N requests for PATH to PORT, one after another on one connection, each answer read in full.
cat >"$work/client.py" <<'PY'
import http.client, sys
port, count, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
for _ in range(count):
    connection.request("GET", path)
    response = connection.getresponse()
    response.read()
    if response.status != 200:
        sys.exit(f"{path}: status {response.status}")
PY

port=""
bench_pick_port port 18490

requests() { python3 "$work/client.py" "$port" "$1" "$path"; } # COUNT: for the target in hand ($path)
declare -A IR
targets=("c-direct|$BENCH_C_BIN|/direct|/direct" "c-async|$BENCH_C_BIN|/direct|/async"
         "switchboard|$work/switchboard|/healthz|/healthz")
for target in "${targets[@]}"; do
    IFS='|' read -r key binary ready path <<<"$target"
    BENCH_READY_TIMEOUT=120 bench_callgrind_per_request "$key-ir" "http://127.0.0.1:$port$ready" "$N1" "$N2" requests \
        "$binary" PORT="$port" THREADS=2 HOST=127.0.0.1 STREAM_PORT=off LOG_LEVEL=error DATABASE_URL="${DATABASE_URL:-}"
    IR[$key]=$BENCH_IR
    bench_log "$(printf '%-12s %s: %d instructions per request' "$key" "$path" "${IR[$key]}")"
done

{
    echo "## User-space instructions per request (callgrind)"
    echo
    echo "- $N1 and $N2 sequential requests over one connection, difference of the two runs' totals / $((N2 - N1))"
    echo
    echo "| target | instructions per request |"
    echo "| --- | ---: |"
    echo "| C \`/direct\` (answered on the server's thread) | ${IR[c-direct]} |"
    echo "| C \`/async\` (suspend → worker thread → resume) | ${IR[c-async]} |"
    echo "| Switchboard \`/healthz\` (suspend → Swift task → resume) | ${IR[switchboard]} |"
    echo
    echo "Switchboard / C async: $(bench_ratio "${IR[switchboard]}" "${IR[c-async]}")"
} | tee "$BENCH_OUT/instructions.md"
