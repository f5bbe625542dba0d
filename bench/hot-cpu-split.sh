#!/usr/bin/env bash
# The hot feed's CPU per request split into user and system time, beside C's feed route doing the same work
# (bench/c-baseline/feed.c): rounds of `wrk -t2 -c64` (BENCH_ROUNDS, default 4; BENCH_SPLIT_SECONDS each, default 3)
# against each server in turn, reading the server's user and system time and its threads' voluntary and involuntary
# context switches from /proc before and after. It shows which part of the CPU the gap between them is in: the
# kernel's work for a request (a recvfrom and a sendmsg) is the same for both.
# With SWITCHBOARD_BASELINE_BIN, a second build ("baseline") takes its turn in every round too, on the same database
# and feed, and each build's median ratio to C (C's CPU ÷ the build's, per round) is printed at the end: two builds
# told apart in one sitting, where sittings differ by more than the builds do.
#   SWITCHBOARD_BIN, DATABASE_URL as for http.sh; SWITCHBOARD_BASELINE_BIN (optional)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init
bench_need_switchboard_and_database
bench_build_c_baseline
ROUNDS=${BENCH_ROUNDS:-4}
SECONDS_PER_ROUND=${BENCH_SPLIT_SECONDS:-3}
ADMIN=bench-admin-token-0123456789
sb_port="" c_port=""
bench_pick_port sb_port 18690
bench_pick_port c_port 18890
bench_start_server switchboard-split "http://127.0.0.1:$sb_port/readyz" -- env PORT="$sb_port" HOST=127.0.0.1 \
    STREAM_PORT=off LOG_LEVEL=error RATE_LIMIT_PER_MINUTE=0 SWITCHBOARD_ADMIN_TOKEN="$ADMIN" "$SWITCHBOARD_BIN"
sb_pid=${BENCH_PIDS[-1]}
read -r _ _ token bytes etag <<<"$(bench_feed_setup "http://127.0.0.1:$sb_port" "$ADMIN" split)"
[ -n "$etag" ] || exit 1  # bench_feed_setup said why
bench_start_server c-split "http://127.0.0.1:$c_port/direct" -- env PORT="$c_port" HOST=127.0.0.1 \
    PAGE_BYTES="$bytes" FEED_TOKEN="$token" FEED_KEY=launch FEED_ETAG="$etag" "$BENCH_C_BIN"
c_pid=${BENCH_PIDS[-1]}
sides=("switchboard $sb_pid $sb_port" "C $c_pid $c_port")
if [ -n "${SWITCHBOARD_BASELINE_BIN:-}" ]; then
    # The same tenant and feed (one database): the baseline reads the token and the page as its own.
    base_port=""
    bench_pick_port base_port 18790
    bench_start_server baseline-split "http://127.0.0.1:$base_port/readyz" -- env PORT="$base_port" HOST=127.0.0.1 \
        STREAM_PORT=off LOG_LEVEL=error RATE_LIMIT_PER_MINUTE=0 SWITCHBOARD_ADMIN_TOKEN="$ADMIN" \
        "$SWITCHBOARD_BASELINE_BIN"
    sides+=("baseline ${BENCH_PIDS[-1]} $base_port")
fi

# sample PID: "user_ticks system_ticks voluntary involuntary" for the process and all its threads.
sample() {
    echo "$(awk '{ print $14, $15 }' /proc/"$1"/stat)" \
        "$(cat /proc/"$1"/task/*/status | awk '/^voluntary/ { v += $2 } /^nonvoluntary/ { n += $2 } END { print v, n }')"
}
ticks=$(getconf CLK_TCK)
printf '%-6s %-12s %9s %12s %12s %12s %14s\n' round server requests "user µs/req" "system µs/req" "voluntary/req" \
    "involuntary/req"
table=$(mktemp)
for round in $(seq 1 "$ROUNDS"); do
    for side in "${sides[@]}"; do
        set -- $side
        url="http://127.0.0.1:$3/v1/feeds/launch"
        wrk -t2 -c64 -d1s -H "Authorization: Bearer $token" "$url" >/dev/null
        before=$(sample "$2")
        requests=$(wrk -t2 -c64 -d"${SECONDS_PER_ROUND}s" -H "Authorization: Bearer $token" "$url" \
            | awk '/requests in/ { print $1 }')
        after=$(sample "$2")
        python3 -I - "$round" "$1" "$requests" "$ticks" $before $after <<'PY'
import sys
round_, side, requests, ticks = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
a = list(map(int, sys.argv[5:9])); b = list(map(int, sys.argv[9:13]))
per = lambda i: (b[i] - a[i]) / requests
print(f"{round_:<6} {side:<12} {requests:9d} {per(0) * 1e6 / ticks:12.2f} {per(1) * 1e6 / ticks:12.2f} "
      f"{per(2):12.3f} {per(3):14.3f}")
PY
    done
done | tee "$table"
# Each build's CPU per request (user + system) against C's in the same round; the median over the rounds.
python3 -I - "$table" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1]) if line[:1].isdigit()]
total = {(row[0], row[1]): float(row[3]) + float(row[4]) for row in rows}
for build in ("switchboard", "baseline"):
    ratios = [total[(r, "C")] / total[(r, b)] for (r, b) in total if b == build and (r, "C") in total]
    if ratios:
        print(f"{build}: C's CPU per request ÷ this build's, median of {len(ratios)} rounds = "
              f"{statistics.median(ratios):.3f} (rounds {' '.join(f'{x:.2f}' for x in ratios)})")
PY
rm -f "$table"
