#!/usr/bin/env bash
# User-space instructions per message POST, counted by valgrind (callgrind): the write path's own work, which a timed
# run on this shared machine cannot tell apart by a few percent. A server under callgrind opens a tenant, an agent
# and an interaction, then takes N1 and, in a second run, N2 text messages from the agent, one at a time over one
# kept-alive connection; the difference of the two runs' totals over N2 - N1 leaves out start-up, the set-up and
# shutdown. Postgres and the kernel are not in the count (see bench/writes.sh for those).
# With SWITCHBOARD_BASELINE_BIN set, that build is counted the same way, and the ratio is printed. The C peer
# (bench/c-baseline/message.c: the same POST's work in the leanest C, the same statement) is counted the same way on an
# interaction Switchboard opened, and Switchboard's count over C's is printed: the work a Swift POST adds.
#   SWITCHBOARD_BIN, DATABASE_URL as for http.sh; BENCH_IR_POSTS="200 600" (N1 N2); BENCH_IR_CACHE=1 counts under
#   cachegrind's simulation of this machine's caches instead and adds each build's first-level instruction-cache misses
#   per POST (code that does not stay in the cache costs cycles a count of instructions does not show);
#   BENCH_IR_KEEP=DIR keeps every run's callgrind file there (for callgrind_annotate)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$BENCH_ROOT"

SB_BIN=${SWITCHBOARD_BIN:-$BENCH_ROOT/.build/release/switchboard}
read -r N1 N2 <<<"${BENCH_IR_POSTS:-200 600}"
command -v valgrind >/dev/null || bench_die "valgrind is needed (apt-get install valgrind)"
bench_init
bench_need_switchboard_and_database
bench_build_message_peer
ADMIN=bench-admin-token-0123456789

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

port=""
bench_pick_port port 18590
# How every Switchboard here runs (counted or not).
sb_env=(PORT="$port" HOST=127.0.0.1 STREAM_PORT=off LOG_LEVEL=error RATE_LIMIT_PER_MINUTE=0
    SWITCHBOARD_ADMIN_TOKEN=$ADMIN DATABASE_URL="$DATABASE_URL")
messages() { python3 -I "$BENCH_ROOT/bench/post_client.py" "$port" "$1" "$ADMIN"; }
declare -A IR I1
builds=("switchboard|$SB_BIN")
[ -n "${SWITCHBOARD_BASELINE_BIN:-}" ] && builds+=("baseline|$SWITCHBOARD_BASELINE_BIN")
for build in "${builds[@]}"; do
    IFS='|' read -r key binary <<<"$build"
    # This valgrind cannot read the toolchain's DWARF 5; symbols are enough for a count.
    strip --strip-debug -o "$work/$key" "$binary"
    BENCH_READY_TIMEOUT=180 bench_callgrind_per_request "$key-post-ir" "http://127.0.0.1:$port/readyz" "$N1" "$N2" \
        messages "$work/$key" "${sb_env[@]}"
    IR[$key]=$BENCH_IR I1[$key]=$BENCH_I1
    bench_log "$(printf '%-12s %d instructions per message POST%s' "$key" "${IR[$key]}" "${BENCH_I1:+, $BENCH_I1 I1 misses}")"
done

# The C peer, on a tenant and an interaction that Switchboard (not counted) opens for it.
bench_start_server opener "http://127.0.0.1:$port/readyz" -- env "${sb_env[@]}" "$SB_BIN"
read -r peer_tenant peer_interaction < <(python3 -I "$BENCH_ROOT/bench/post_client.py" --open "$port" "$ADMIN")
bench_stop_servers
PEER_TOKEN=bench-c-message-peer-token-0123456789
peer_messages() { python3 -I "$BENCH_ROOT/bench/post_client.py" --peer "$port" "$1" "$PEER_TOKEN" "$peer_interaction"; }
BENCH_READY_TIMEOUT=180 bench_callgrind_per_request "c-post-ir" "http://127.0.0.1:$port/healthz" "$N1" "$N2" \
    peer_messages "$BENCH_MESSAGE_BIN" PORT="$port" HOST=127.0.0.1 DATABASE_URL="$DATABASE_URL" WORKERS=10 \
    MESSAGE_SQL="$BENCH_DIR/c-baseline/message.sql" MESSAGE_TOKEN=$PEER_TOKEN MESSAGE_TENANT="$peer_tenant"
IR[c]=$BENCH_IR I1[c]=$BENCH_I1
bench_log "$(printf '%-12s %d instructions per message POST%s' "C peer" "${IR[c]}" "${BENCH_I1:+, $BENCH_I1 I1 misses}")"

{
    echo "## User-space instructions per message POST (callgrind)"
    echo
    echo "- $(bench_date), commit \`$(bench_commit)\`; $N1 and $N2 sequential POSTs over one connection, difference of the two"
    echo "  runs' totals / $((N2 - N1))"
    echo
    echo "| build | instructions per POST |"
    echo "| --- | ---: |"
    echo "| \`$SB_BIN\` | ${IR[switchboard]} |"
    echo "| C (\`bench/c-baseline/message.c\`), the same statement | ${IR[c]} |"
    if [ -n "${IR[baseline]:-}" ]; then
        echo "| \`$SWITCHBOARD_BASELINE_BIN\` (baseline) | ${IR[baseline]} |"
        echo
        echo "This build / the baseline: $(bench_ratio "${IR[switchboard]}" "${IR[baseline]}")"
    fi
    echo
    bench_measured "user-space instructions per message POST = ${IR[switchboard]} (the write path's own work; Postgres and the kernel are not in it)"
    echo
    bench_measured "user-space instructions per message POST, Switchboard ÷ C doing the same POST = $(bench_ratio "${IR[switchboard]}" "${IR[c]}") (C: ${IR[c]})"
    if [ -n "${I1[switchboard]}" ]; then
        echo
        bench_measured "first-level instruction-cache misses per message POST (cachegrind) = ${I1[switchboard]} (C: ${I1[c]})"
    fi
} | tee "$BENCH_OUT/post-instructions.md"
