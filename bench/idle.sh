#!/usr/bin/env bash
# Idle memory: the release binary started on the database with nothing to do (no tenant, no client), read
# BENCH_IDLE_SETTLE seconds (default 3) after /readyz answers: VmRSS, and how much of it is anonymous memory and how
# much mapped files (the Swift runtime and Foundation among them). Target: VmRSS <= 25 MB.
#   SWITCHBOARD_BIN, DATABASE_URL as for http.sh
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init
bench_need_switchboard_and_database
port=""
bench_pick_port port 18690
bench_start_server switchboard "http://127.0.0.1:$port/readyz" -- env PORT="$port" STREAM_PORT=off HOST=127.0.0.1 \
    DATABASE_URL="$DATABASE_URL" LOG_LEVEL=error "$SB_BIN"
pid=${BENCH_PIDS[-1]}
sleep "${BENCH_IDLE_SETTLE:-3}"
field() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$pid/status"; }
rss=$(field VmRSS) anon=$(field RssAnon) file=$(field RssFile)
verdict=PASS
[ "$rss" -le $((25 * 1024)) ] || verdict=FAIL
{
    echo
    echo "## Idle memory"
    echo
    echo "- date: $(bench_date); commit: \`$(bench_commit)\`; binary: \`$SB_BIN\`"
    echo "- VmRSS **$((rss / 1024)).$(( (rss % 1024) * 10 / 1024 )) MB** (target <= 25 MB): anonymous $anon KB, mapped files $file KB"
    echo
    echo "**$verdict**"
} | tee "$BENCH_OUT/idle.md"
