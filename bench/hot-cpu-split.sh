#!/usr/bin/env bash
# The hot feed's CPU per request split into user and system time, beside C's feed route doing the same work
# (bench/c-baseline/feed.c): rounds of `wrk -t2 -c64` (BENCH_ROUNDS, default 4; BENCH_SPLIT_SECONDS each, default 3)
# against each server in turn, reading the server's user and system time and its threads' voluntary and involuntary
# context switches from /proc before and after. It shows which part of the CPU the gap between them is in: the
# kernel's work for a request (a recvfrom and a sendmsg) is the same for both.
#   SWITCHBOARD_BIN, DATABASE_URL as for http.sh
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

# sample PID: "user_ticks system_ticks voluntary involuntary" for the process and all its threads.
sample() {
    echo "$(awk '{ print $14, $15 }' /proc/"$1"/stat)" \
        "$(cat /proc/"$1"/task/*/status | awk '/^voluntary/ { v += $2 } /^nonvoluntary/ { n += $2 } END { print v, n }')"
}
ticks=$(getconf CLK_TCK)
printf '%-6s %-12s %9s %12s %12s %12s %14s\n' round server requests "user µs/req" "system µs/req" "voluntary/req" \
    "involuntary/req"
for round in $(seq 1 "$ROUNDS"); do
    for side in "switchboard $sb_pid $sb_port" "C $c_pid $c_port"; do
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
done
