#!/usr/bin/env bash
# Thread hops of a message POST at rest: one client sends BENCH_SWITCH_POSTS text messages (default 2,000), one at a
# time over one kept-alive connection (bench/post_client.py), and the server's context switches and CPU are read from
# /proc before and after, in total and per thread. At rest every wait is a hop between threads that load would
# otherwise share among requests, so this counts what one request costs in them.
# The same binary runs with TASKS_ON_REACTOR=1 (requests' tasks on the database reactor's thread) and =0 (on the
# global executor), in alternating rounds (BENCH_ROUNDS), so both are measured under the same load of the machine.
#   SWITCHBOARD_BIN, DATABASE_URL as for http.sh
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init
bench_need_switchboard_and_database
N=${BENCH_SWITCH_POSTS:-2000}
ADMIN=bench-admin-token-0123456789
port=""
bench_pick_port port 18595

# per_thread PID: "name switches" for each thread of PID, one per line (threads of one name summed).
per_thread() {
    for task in /proc/"$1"/task/*; do
        echo "$(tr ' ' _ <"$task/comm") $(awk '/ctxt_switches/ { s += $2 } END { print s + 0 }' "$task/status")"
    done | awk '{ s[$1] += $2 } END { for (n in s) print n, s[n] }' | sort
}

declare -A CS CPU
rows=()
for ((r = 1; r <= BENCH_ROUNDS; r++)); do
    for setting in 1 0; do
        bench_start_server "post-switches-$setting" "http://127.0.0.1:$port/readyz" -- env TASKS_ON_REACTOR=$setting \
            PORT="$port" HOST=127.0.0.1 STREAM_PORT=off LOG_LEVEL=error RATE_LIMIT_PER_MINUTE=0 \
            SWITCHBOARD_ADMIN_TOKEN=$ADMIN DATABASE_URL="$DATABASE_URL" "$SB_BIN"
        pid=${BENCH_PIDS[-1]}
        python3 -I "$BENCH_ROOT/bench/post_client.py" "$port" 200 "$ADMIN" >/dev/null  # warm-up
        cs0=$(bench_ctx_switches "$pid") cpu0=$(bench_pid_cpu_ms "$pid")
        per_thread "$pid" >"$BENCH_OUT/raw/post-switches-$setting-before.txt"
        python3 -I "$BENCH_ROOT/bench/post_client.py" "$port" "$N" "$ADMIN" >/dev/null
        cs1=$(bench_ctx_switches "$pid") cpu1=$(bench_pid_cpu_ms "$pid")
        per_thread "$pid" >"$BENCH_OUT/raw/post-switches-$setting-after.txt"
        bench_stop_servers
        CS[$setting]+="$(python3 -c "print(f'{($cs1 - $cs0) / $N:.2f}')") "
        CPU[$setting]+="$(python3 -c "print(round(($cpu1 - $cpu0) * 1000 / $N))") "
        threads=$(join "$BENCH_OUT/raw/post-switches-$setting-before.txt" "$BENCH_OUT/raw/post-switches-$setting-after.txt" \
            | awk -v n="$N" '{ d = ($3 - $2) / n; if (d >= 0.05) printf "%s %.2f, ", $1, d }')
        rows+=("| $r | $setting | $(echo "${CS[$setting]}" | awk '{print $NF}') | $(echo "${CPU[$setting]}" | awk '{print $NF}') | ${threads%, } |")
        bench_log "round $r TASKS_ON_REACTOR=$setting: ${rows[-1]}"
    done
done
# shellcheck disable=SC2086
on_cs=$(bench_median ${CS[1]}) off_cs=$(bench_median ${CS[0]}) on_cpu=$(bench_median ${CPU[1]}) off_cpu=$(bench_median ${CPU[0]})
{
    echo
    echo "## A message POST at rest: context switches and CPU, requests on the reactor's thread or not"
    echo
    echo "- date: $(bench_date); commit: \`$(bench_commit)\`; binary: \`$SB_BIN\`; $N POSTs one at a time per round"
    echo
    echo "| round | TASKS_ON_REACTOR | context switches per POST | server CPU per POST (µs) | per thread (switches per POST) |"
    echo "| --- | --- | ---: | ---: | --- |"
    printf '%s\n' "${rows[@]}"
    echo
    bench_measured "a message POST at rest, requests on the reactor: $on_cs context switches, $on_cpu µs of server CPU (rounds ${CS[1]% }; ${CPU[1]% } µs)"
    bench_measured "a message POST at rest, requests on the global executor: $off_cs context switches, $off_cpu µs (rounds ${CS[0]% }; ${CPU[0]% } µs)"
} | tee "$BENCH_OUT/post-switches.md"
