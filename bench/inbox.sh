#!/usr/bin/env bash
# The agents' inbox under load (bench/inbox_load.py): 200 agents' `assigned=me` inbox streams and 20 `assigned=any`
# ones beside 5,000 interaction streams while customers post 300 messages a second — every inbox change delivered,
# inbox p99 against the interaction streams' p99 in the same run; a tenant's message rate with and without 20 inbox
# watchers; RSS per inbox stream.
#   SWITCHBOARD_BIN, DATABASE_URL as for http.sh; INBOX_* (see bench/inbox_load.py) change the sizes
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init
bench_need_switchboard_and_database
ADMIN=bench-admin-token-0123456789
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

port="" stream_port=""
bench_pick_port port 18790
bench_pick_port stream_port $((port + 1))
bench_start_server switchboard "http://127.0.0.1:$port/readyz" -- env PORT="$port" STREAM_PORT="$stream_port" \
    HOST=127.0.0.1 DATABASE_URL="$DATABASE_URL" LOG_LEVEL=error RATE_LIMIT_PER_MINUTE=0 SWITCHBOARD_ADMIN_TOKEN=$ADMIN \
    HTTP_CONNECTION_LIMIT=30000 HTTP_CONNECTIONS_PER_ADDRESS=0 DATABASE_POOL_SIZE=20 "$SB_BIN"
out="$BENCH_OUT/inbox.md"
status=0
SB_PORT=$port SB_STREAM_PORT=$stream_port SB_ADMIN=$ADMIN SB_PID=${BENCH_PIDS[-1]} \
    bench_run python3 -I "$BENCH_DIR/inbox_load.py" >"$out.tmp" || status=$?
{ cat "$out.tmp"; echo; echo "$(bench_date), commit \`$(bench_commit)\`, $(bench_machine), load $(bench_load)"; } >"$out"
rm -f "$out.tmp"
cat "$out" >&2
exit "$status"
