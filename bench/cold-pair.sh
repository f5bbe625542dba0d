#!/usr/bin/env bash
# Distinct cold feed reads of two or more builds side by side: every build runs at once on one database with its page
# cache off (FEED_CACHE=0), and each takes in turn, round after round, reads of a different feed each request (random
# among BENCH_FEED_DISTINCT, 5000, feeds of 20 items; one tenant and set of feeds for all), `wrk -t2 -c64` for
# BENCH_SECONDS. Prints each round's Switchboard CPU per request (from /proc) and each build's median. For telling
# builds apart where the sittings of `feeds.sh` differ by more than the builds do (the database grows and warms between
# runs, and the machine's neighbours change). The table also goes to bench/out/cold-pair.md.
#   DATABASE_URL; COLD_PAIR_BINS="BIN BIN…" (default: SWITCHBOARD_BIN and SWITCHBOARD_BASELINE_BIN);
#   BENCH_ROUNDS (3), BENCH_SECONDS (5), BENCH_FEED_DISTINCT (5000)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$BENCH_ROOT"

bench_init
bench_need_switchboard_and_database
read -r -a BINS <<<"${COLD_PAIR_BINS:-$SB_BIN ${SWITCHBOARD_BASELINE_BIN:-}}"
[ "${#BINS[@]}" -ge 2 ] || bench_die "name two builds or more: COLD_PAIR_BINS, or SWITCHBOARD_BIN and SWITCHBOARD_BASELINE_BIN"
ROUNDS=$BENCH_ROUNDS SECONDS_PER_ROUND=$BENCH_SECONDS DISTINCT=${BENCH_FEED_DISTINCT:-5000}
ADMIN=bench-admin-token-0123456789

declare -a PIDS URLS
for i in "${!BINS[@]}"; do
    [ -x "${BINS[$i]}" ] || bench_die "not an executable: ${BINS[$i]}"
    port=""
    bench_pick_port port $((18750 + 10 * i))
    URLS[$i]="http://127.0.0.1:$port"
    bench_start_server "cold-pair-$i" "${URLS[$i]}/readyz" -- env PORT="$port" STREAM_PORT=off HOST=127.0.0.1 \
        DATABASE_URL="$DATABASE_URL" LOG_LEVEL=error RATE_LIMIT_PER_MINUTE=0 FEED_CACHE=0 \
        SWITCHBOARD_ADMIN_TOKEN=$ADMIN "${BINS[$i]}"
    PIDS[$i]=${BENCH_PIDS[-1]}
done
read -r _ tenant_id token _ etag <<<"$(bench_feed_setup "${URLS[0]}" "$ADMIN" cold-pair)"
[ -n "$etag" ] || exit 1  # bench_feed_setup said why
bench_distinct_feeds "$tenant_id" "$DISTINCT"
script=$(bench_distinct_script)
read_feeds() { # URL SECONDS OUT
    BENCH_FEEDS=$DISTINCT BENCH_AUTH="Bearer $token" BENCH_PREFIX=/v1/feeds/ bench_run wrk -t2 -c64 -d"${2}s" \
        -s "$script" "$1" >"$3" 2>&1 || { cat "$3" >&2; bench_die "wrk failed against $1"; }
}
for i in "${!BINS[@]}"; do read_feeds "${URLS[$i]}" 2 "$BENCH_OUT/raw/cold-pair-$i-warmup.txt"; done

declare -A CPU
for round in $(seq 1 "$ROUNDS"); do
    for i in "${!BINS[@]}"; do
        raw="$BENCH_OUT/raw/cold-pair-$i-$round.txt"
        before=$(bench_pid_cpu_ms "${PIDS[$i]}")
        read_feeds "${URLS[$i]}" "$SECONDS_PER_ROUND" "$raw"
        requests=$(awk '/requests in/ { print $1 }' "$raw")
        [ "${requests:-0}" -gt 0 ] || bench_die "no read completed: $(cat "$raw")"
        ! grep -q "Non-2xx" "$raw" || bench_die "answers that are not 2xx: $(grep Non-2xx "$raw")"
        cpu=$(( ($(bench_pid_cpu_ms "${PIDS[$i]}") - before) * 1000 / requests ))
        CPU[$i]+="$cpu "
        bench_log "round $round, ${BINS[$i]}: $((requests / SECONDS_PER_ROUND)) reads/s, CPU $cpu µs per read"
    done
done

{
    echo "## Distinct cold feed reads, builds side by side on one database"
    echo
    echo "- $(bench_date), commit \`$(bench_commit)\`, $(bench_machine), load $(bench_load)"
    echo "- each round: \`wrk -t2 -c64 -d${SECONDS_PER_ROUND}s\`, a random one of $DISTINCT feeds per read, each build in turn"
    echo
    echo "| build | Switchboard CPU per read, by round (µs) | median |"
    echo "| --- | --- | ---: |"
    for i in "${!BINS[@]}"; do
        # shellcheck disable=SC2086 # the per-round figures are space-separated words
        echo "| \`${BINS[$i]}\` | ${CPU[$i]% } | $(bench_median ${CPU[$i]}) |"
    done
    for i in "${!BINS[@]}"; do
        echo
        # shellcheck disable=SC2086
        bench_measured "Switchboard CPU per distinct cold read, \`${BINS[$i]}\` = $(bench_median ${CPU[$i]}) µs (goal ≤ 60; rounds ${CPU[$i]% })"
    done
} | tee "$BENCH_OUT/cold-pair.md"
