# shellcheck shell=bash
# Shared helpers for Switchboard's benchmarks. Source it from a bench script:
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#   bench_init                                  # cleanup trap: servers started below are killed at exit
#   bench_build_c_baseline                      # bench/c-baseline/mhd-baseline, rebuilt when the source changed
#   bench_build_message_peer                    # bench/c-baseline/mhd-message, rebuilt when its source changed
#   bench_build_bridge_floor                    # bench/bridge-floor, sets $BENCH_FLOOR_BIN
#   bench_pick_port port 18090                  # sets $port to a free port
#   bench_start_server c "http://127.0.0.1:$port/direct" -- env PORT=$port "$BENCH_C_BIN"
#   bench_wrk "http://127.0.0.1:$port/direct" 5 "$BENCH_OUT/raw/c-direct.txt"
#   read -r rps p50 p99 non2xx sockerr < <(bench_parse_wrk "$BENCH_OUT/raw/c-direct.txt")
#   bench_median 3 1 2        -> 2        bench_median_index 3 1 2 -> 2
#   bench_ratio 70000 100000  -> 0.70          bench_tenths 153 -> 15.3
#
# Every helper reports problems on stderr and returns non-zero; bench scripts run under `set -euo pipefail`.

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_ROOT=$(cd "$BENCH_DIR/.." && pwd)
BENCH_OUT=${BENCH_OUT:-$BENCH_DIR/out}
BENCH_C_SRC=$BENCH_DIR/c-baseline/baseline.c
BENCH_C_BIN=$BENCH_DIR/c-baseline/mhd-baseline
BENCH_MESSAGE_BIN=$BENCH_DIR/c-baseline/mhd-message
BENCH_SSE_BIN=$BENCH_DIR/c-baseline/mhd-sse

# Every program counted under valgrind runs with this: glibc's memset and memcpy then never use `rep stosb`/`rep movsb`,
# whose every byte valgrind counts as an instruction. Without it, libmicrohttpd zeroing a connection's memory pool after
# each request (16 KiB in Switchboard, 32 KiB by default in the C peers) counted as 24,000 and 48,000 instructions, more
# than half of a C request's total, for work that takes the processor well under a microsecond.
BENCH_VALGRIND_TUNABLES=glibc.cpu.x86_rep_stosb_threshold=1000000000:glibc.cpu.x86_rep_movsb_threshold=1000000000

# wrk load shape, shared by every HTTP benchmark so that figures stay comparable.
BENCH_SECONDS=${BENCH_SECONDS:-5}
BENCH_ROUNDS=${BENCH_ROUNDS:-3}
BENCH_WRK_THREADS=${BENCH_WRK_THREADS:-2}
BENCH_WRK_CONNECTIONS=${BENCH_WRK_CONNECTIONS:-64}
BENCH_WARMUP_SECONDS=${BENCH_WARMUP_SECONDS:-1}
BENCH_READY_TIMEOUT=${BENCH_READY_TIMEOUT:-30}

BENCH_PIDS=()   # servers started by bench_start_server
BENCH_NAMES=()

bench_log() { printf '[bench] %s\n' "$*" >&2; }
bench_die() { printf '[bench] error: %s\n' "$*" >&2; exit 1; }

# Installs the cleanup trap. Call once, early, in every top-level bench script.
bench_init() {
    trap _bench_on_exit EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    mkdir -p "$BENCH_OUT/raw" "$BENCH_OUT/logs"
    command -v wrk >/dev/null || bench_die "wrk not found (apt-get install -y wrk)"
    command -v curl >/dev/null || bench_die "curl not found (apt-get install -y curl)"
}

_bench_on_exit() {
    local rc=$? n
    trap - EXIT INT TERM
    if [ -n "$BENCH_CHILD" ] && kill -0 "$BENCH_CHILD" 2>/dev/null; then
        kill -TERM "$BENCH_CHILD" 2>/dev/null || true
        for ((n = 0; n < 100; n++)); do
            kill -0 "$BENCH_CHILD" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$BENCH_CHILD" 2>/dev/null || true
        wait "$BENCH_CHILD" 2>/dev/null || true
    fi
    bench_stop_servers
    exit "$rc"
}

# bench_run COMMAND [ARGS...]: runs COMMAND as a child that the exit trap stops when the script is
# interrupted (bash delays traps until a foreground command ends: a 5 s wrk or a whole sub-benchmark).
# Returns COMMAND's status.
BENCH_CHILD=""
bench_run() {
    local rc=0
    "$@" &
    BENCH_CHILD=$!
    wait "$BENCH_CHILD" || rc=$?
    BENCH_CHILD=""
    return "$rc"
}

# bench_stop_servers: stops every server this script started: SIGTERM, up to 5 s grace, then SIGKILL.
# Runs at exit by itself; call it directly to free the machine between benchmarks.
bench_stop_servers() {
    local i pid n
    for i in "${!BENCH_PIDS[@]}"; do
        kill -TERM "${BENCH_PIDS[$i]}" 2>/dev/null || true
    done
    for i in "${!BENCH_PIDS[@]}"; do
        pid=${BENCH_PIDS[$i]}
        for ((n = 0; n < 50; n++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            bench_log "${BENCH_NAMES[$i]} (pid $pid) ignored SIGTERM for 5 s: killing it"
            kill -KILL "$pid" 2>/dev/null || true
        fi
        wait "$pid" 2>/dev/null || true
    done
    BENCH_PIDS=()
    BENCH_NAMES=()
}

# bench_build_bridge_floor: builds bench/bridge-floor (suspend -> Swift task -> resume and nothing else) in release
# mode with the flags of Switchboard's build; sets BENCH_FLOOR_BIN.
bench_build_bridge_floor() {
    local package=$BENCH_DIR/bridge-floor
    bench_log "building $package (swift build -c release)"
    "${SWIFT:-swift}" build -c release --static-swift-stdlib --package-path "$package" >"$BENCH_OUT/raw/bridge-floor-build.txt" 2>&1 \
        || { cat "$BENCH_OUT/raw/bridge-floor-build.txt" >&2; bench_die "bench/bridge-floor failed to build"; }
    if grep -q 'warning:' "$BENCH_OUT/raw/bridge-floor-build.txt"; then
        grep 'warning:' "$BENCH_OUT/raw/bridge-floor-build.txt" >&2
        bench_die "bench/bridge-floor must build without warnings"
    fi
    BENCH_FLOOR_BIN=$package/.build/release/bridge-floor
}

# bench_build_c OUTPUT WHAT SOURCE "INCLUDED..." FLAGS...: compiles SOURCE into OUTPUT with gcc -O2 -Wall and FLAGS
# (after the source, so that libraries link), zero warnings required, if OUTPUT is missing or older than SOURCE or
# any file it includes (INCLUDED, relative to bench/c-baseline). WHAT names it in messages.
bench_build_c() {
    local output=$1 what=$2 source=$3 included=$4 file warnings
    shift 4
    local stale=0
    [ -x "$output" ] && [ "$output" -nt "$source" ] || stale=1
    for file in $included; do [ "$output" -nt "$BENCH_DIR/c-baseline/$file" ] || stale=1; done
    [ "$stale" = 1 ] || return 0
    bench_log "building $output"
    warnings=$(gcc -O2 -Wall -o "$output" "$source" "$@" 2>&1) \
        || { printf '%s\n' "$warnings" >&2; bench_die "$what failed to build (libmicrohttpd-dev, libpq-dev?)"; }
    if [ -n "$warnings" ]; then
        printf '%s\n' "$warnings" >&2
        bench_die "$what must build without warnings"
    fi
}

# bench_build_c_baseline: the raw-C libmicrohttpd baseline, $BENCH_C_BIN (baseline.c, with feed.c, handoff.h and
# process.h).
bench_build_c_baseline() {
    bench_build_c "$BENCH_C_BIN" "the C baseline" "$BENCH_C_SRC" "feed.c handoff.h process.h" -lmicrohttpd -lpthread
}

# bench_build_message_peer: a message POST in C with libpq, $BENCH_MESSAGE_BIN (message.c, with handoff.h and
# process.h).
bench_build_message_peer() {
    bench_build_c "$BENCH_MESSAGE_BIN" "the C message peer" "$BENCH_DIR/c-baseline/message.c" "handoff.h process.h" \
        -Wextra -I/usr/include/postgresql -lmicrohttpd -lpq -lpthread
}

# bench_port_free PORT: true when nothing accepts connections on 127.0.0.1:PORT.
bench_port_free() {
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# bench_pick_port VAR START: sets VAR to the first free port from START upwards, skipping ports already
# handed out by this script. (Sets a variable rather than printing, so that it works outside a subshell.)
BENCH_PORTS_TAKEN=" "
bench_pick_port() {
    local p
    for ((p = $2; p < $2 + 200; p++)); do
        case "$BENCH_PORTS_TAKEN" in *" $p "*) continue ;; esac
        if bench_port_free "$p"; then
            BENCH_PORTS_TAKEN+="$p "
            printf -v "$1" '%s' "$p"
            return 0
        fi
    done
    bench_die "no free port in $2..$(($2 + 199))"
}

# bench_start_server NAME READY_URL -- COMMAND [ARGS...]
# Starts COMMAND in the background (stdout+stderr to $BENCH_OUT/logs/NAME.log), registers it for cleanup
# and polls READY_URL with curl until it answers 2xx (timeout $BENCH_READY_TIMEOUT s). Fails, showing
# the log tail, if the server exits or never answers. Use `env VAR=value cmd` to pass an environment.
# Must not be called in a subshell ($(...)): the pid has to be recorded in this shell.
bench_start_server() {
    local name=$1 url=$2
    shift 2
    [ "${1:-}" = "--" ] && shift
    [ $# -gt 0 ] || bench_die "bench_start_server: no command for $name"
    local log="$BENCH_OUT/logs/$name.log"
    "$@" >"$log" 2>&1 </dev/null &
    local pid=$!
    BENCH_PIDS+=("$pid")
    BENCH_NAMES+=("$name")
    local deadline=$((SECONDS + BENCH_READY_TIMEOUT))
    while :; do
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -n 20 "$log" >&2 || true
            bench_die "$name exited before it was ready (log: $log)"
        fi
        if curl -sf -o /dev/null --max-time 2 "$url"; then
            break
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            tail -n 20 "$log" >&2 || true
            bench_die "$name did not answer $url within ${BENCH_READY_TIMEOUT}s (log: $log)"
        fi
        sleep 0.2
    done
    # The answer must come from our process, not from something else already on the port: a server that could not
    # listen exits at once, so it is checked again a moment later (a Switchboard's stream listener on PORT + 1 once
    # answered for a second Switchboard that had failed to start there).
    sleep 0.5
    kill -0 "$pid" 2>/dev/null || { tail -n 5 "$log" >&2 || true
        bench_die "$name exited right after something answered on its port (taken by another server?)"; }
    bench_log "$name ready (pid $pid): $url"
}

# bench_expect_body URL EXPECTED: warns (returns 1) when URL's body differs from EXPECTED, so that every
# side of a comparison is known to do the same work.
bench_expect_body() {
    local got
    got=$(curl -s --max-time 5 "$1" || true)
    if [ "$got" != "$2" ]; then
        bench_log "warning: $1 answered '$got', expected '$2'"
        return 1
    fi
}

# bench_wrk_cmd URL SECONDS: prints the wrk command line used for measurements.
bench_wrk_cmd() {
    echo "wrk -t$BENCH_WRK_THREADS -c$BENCH_WRK_CONNECTIONS -d${2}s --latency $1"
}

# bench_wrk URL SECONDS [OUTFILE]: runs wrk, output to OUTFILE (or stdout).
bench_wrk() {
    local url=$1 secs=$2 out=${3:-/dev/stdout} header=${4:-}
    local extra=()
    [ -n "$header" ] && extra=(-H "$header")
    bench_run wrk -t"$BENCH_WRK_THREADS" -c"$BENCH_WRK_CONNECTIONS" -d"${secs}s" --latency ${extra[@]+"${extra[@]}"} "$url" >"$out" 2>&1 \
        || { cat "$out" >&2 || true; bench_die "wrk failed against $url"; }
}

# bench_parse_wrk FILE: prints "RPS P50_MS P99_MS NON2XX SOCKET_ERRORS" from wrk --latency output
# (RPS rounded to an integer, latencies in milliseconds).
bench_parse_wrk() {
    awk '
        function ms(v,   n, u) {
            n = v + 0; u = v; sub(/^[0-9.]+/, "", u)
            if (u == "us") return n / 1000
            if (u == "ms") return n
            if (u == "s")  return n * 1000
            if (u == "m")  return n * 60000
            return -1
        }
        /^Requests\/sec:/                 { rps = $2 }
        /^[ \t]+50%[ \t]/                  { p50 = ms($2) }
        /^[ \t]+99%[ \t]/                  { p99 = ms($2) }
        /Non-2xx or 3xx responses:/        { non2xx = $NF }
        /Socket errors:/ {
            line = $0; gsub(/[^0-9 ]/, " ", line); n = split(line, f, " ")
            for (i = 1; i <= n; i++) sockerr += f[i]
        }
        END {
            if (rps == "") { print "no Requests/sec line in wrk output" > "/dev/stderr"; exit 1 }
            printf "%d %.3f %.3f %d %d\n", rps + 0.5, p50, p99, non2xx + 0, sockerr + 0
        }' "$1"
}

# bench_median V...: the median (for an even count, the lower of the two middle values, so that it is
# always a value some round actually produced).
bench_median() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# bench_median_index V...: 0-based index of the round whose value bench_median picks.
bench_median_index() {
    local m i=0 v
    m=$(bench_median "$@")
    for v in "$@"; do
        if [ "$v" = "$m" ]; then echo "$i"; return 0; fi
        i=$((i + 1))
    done
    return 1
}

# bench_summarize_rounds KEY...: for each KEY, from the per-round globals RPS[KEY:r], P50[KEY:r], P99[KEY:r] and
# NON2XX[KEY:r] (r = 1..BENCH_ROUNDS), sets MED[KEY] (median req/s), MP50[KEY] and MP99[KEY] (latencies of the
# round that median comes from) and ERR[KEY] (non-2xx answers over all rounds). The caller declares the four result
# arrays (`declare -A MED MP50 MP99 ERR`).
bench_summarize_rounds() {
    local k r mi errs vals
    for k in "$@"; do
        vals=() errs=0
        for ((r = 1; r <= BENCH_ROUNDS; r++)); do vals+=("${RPS[$k:$r]}"); errs=$((errs + ${NON2XX[$k:$r]})); done
        MED[$k]=$(bench_median "${vals[@]}")
        mi=$(( $(bench_median_index "${vals[@]}") + 1 ))
        MP50[$k]=${P50[$k:$mi]} MP99[$k]=${P99[$k:$mi]} ERR[$k]=$errs
    done
}

# bench_cpu_ms COMM...: CPU time in milliseconds (user + system) spent so far by every live process whose command
# name is one of COMM, plus what their exited children spent (a PostgreSQL cluster's backends that ended count
# through the postmaster). Differences of two readings tell what a run cost each party.
bench_cpu_ms() {
    local tick
    tick=$(getconf CLK_TCK)
    # One line per process (cat goes on past a process that exits meanwhile; awk would stop there).
    { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v tick="$tick" -v names=" $* " '
        {
            line = $0; comm = line; sub(/^[0-9]+ \(/, "", comm); sub(/\) [^)]*$/, "", comm)
            if (index(names, " " comm " ") == 0) next
            sub(/^.*\) /, "", line); split(line, f, " ")
            # After the name: f[1] is the state, so utime..cstime (fields 14..17 of stat) are f[12]..f[15].
            total += f[12] + f[13] + f[14] + f[15]
        }
        END { printf "%d\n", total * 1000 / tick }'
}

# bench_pid_cpu_ms PID: CPU time in milliseconds (user + system) process PID has spent so far.
bench_pid_cpu_ms() {
    awk -v tick="$(getconf CLK_TCK)" '{ line = $0; sub(/^.*\) /, "", line); split(line, f, " ")
        printf "%d\n", (f[12] + f[13]) * 1000 / tick }' "/proc/$1/stat"
}

# bench_need_switchboard_and_database: sets SB_BIN (SWITCHBOARD_BIN, else the release build) and stops unless it is
# an executable and DATABASE_URL is set.
bench_need_switchboard_and_database() {
    SB_BIN=${SWITCHBOARD_BIN:-$BENCH_ROOT/.build/release/switchboard}
    [ -x "$SB_BIN" ] || bench_die "Switchboard binary not found at $SB_BIN (make bench builds it)"
    [ -n "${DATABASE_URL:-}" ] || bench_die "DATABASE_URL is required (make bench and scripts/with-temp-postgres.sh provide one)"
}

# bench_build_client NAME: builds the load client bench/sse-client/NAME from NAME.c when it is older than its sources
# (warnings are errors); sets BENCH_CLIENT to its path.
bench_build_client() {
    BENCH_CLIENT=$BENCH_DIR/sse-client/$1
    [ "$BENCH_CLIENT" -nt "$BENCH_DIR/sse-client/$1.c" ] && [ "$BENCH_CLIENT" -nt "$BENCH_DIR/sse-client/client_common.h" ] \
        || gcc -O2 -Wall -Werror -o "$BENCH_CLIENT" "$BENCH_DIR/sse-client/$1.c" || bench_die "cannot build the $1 client"
}

# bench_tree_cpu_ms PID: CPU time in milliseconds (user + system) spent so far by process PID and every live process
# below it (a uvicorn master and its workers).
bench_tree_cpu_ms() {
    { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v tick="$(getconf CLK_TCK)" -v root="$1" '
        {
            line = $0; pid = $1; sub(/^.*\) /, "", line); split(line, f, " ")
            parent[pid] = f[2]; cpu[pid] = f[12] + f[13]
        }
        END {
            for (pid in cpu) {
                for (p = pid; p != "" && p != 0 && p != root; p = parent[p]) {}
                if (p == root) total += cpu[pid]
            }
            printf "%d\n", total * 1000 / tick
        }'
}

# bench_ratio A B: A/B with two decimals ("n/a" when B is 0).
bench_ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "n/a"; else printf "%.2f\n", a / b }'
}

# bench_tenths N: N tenths as a decimal with one digit (153 -> 15.3).
bench_tenths() {
    awk -v n="$1" 'BEGIN { printf "%.1f\n", n / 10 }'
}

# bench_ge A B: true when A >= B (decimal numbers).
bench_ge() {
    awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'
}

bench_commit() { git -C "$BENCH_ROOT" rev-parse --short HEAD 2>/dev/null || echo "none"; }
bench_date() { date -u '+%Y-%m-%d %H:%M UTC'; }
bench_load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?"; }
bench_machine() { echo "$(nproc) cores, $(uname -m), $(uname -r)"; }

# bench_callgrind_per_request NAME READY-URL N1 N2 CLIENT BINARY [VAR=VALUE...]: sets BENCH_IR to the user-space
# instructions per request of BINARY (started with the VARs in its environment, under callgrind, as bench_start_server
# starts a server) between a run in which CLIENT served it N1 requests and one in which it served N2 (CLIENT is a
# command given the count); the difference of the two runs' totals over N2 - N1 leaves out start-up and shutdown.
# Stops every server this script started after each run (callgrind writes its totals as the server exits).
# With BENCH_IR_CACHE=1 the runs are under cachegrind's cache simulation (the caches of this machine) instead, and
# BENCH_I1 is also set: the first-level instruction-cache misses per request (empty otherwise).
BENCH_IR=0
BENCH_I1=""
bench_callgrind_per_request() {
    local name=$1 ready=$2 n1=$3 n2=$4 client=$5 binary=$6 out="$BENCH_OUT/raw/$1.callgrind" n totals=() misses=()
    local tool=(--tool=callgrind --callgrind-out-file="$out")
    [ "${BENCH_IR_CACHE:-0}" = 1 ] && tool=(--tool=cachegrind --cache-sim=yes --cachegrind-out-file="$out")
    shift 6
    for n in "$n1" "$n2"; do
        rm -f "$out"
        bench_start_server "$name" "$ready" -- env "$@" GLIBC_TUNABLES="$BENCH_VALGRIND_TUNABLES" \
            valgrind "${tool[@]}" "$binary"
        "$client" "$n"
        bench_stop_servers
        # The totals line: callgrind's has the instructions alone; cachegrind's has them, then the I1 misses, …
        # BENCH_IR_KEEP=DIR keeps each run's file there, for callgrind_annotate (the difference of the two is the requests').
        [ -n "${BENCH_IR_KEEP:-}" ] && cp "$out" "$BENCH_IR_KEEP/$name-$n.callgrind"
        totals+=("$(awk '/^summary:/ {print $2}' "$out" 2>/dev/null)")
        misses+=("$(awk '/^summary:/ {print $3}' "$out" 2>/dev/null)")
        [ -n "${totals[-1]}" ] || bench_die "$name: valgrind wrote no totals (log: $BENCH_OUT/logs/$name.log)"
    done
    rm -f "$out"
    BENCH_IR=$(((totals[1] - totals[0]) / (n2 - n1)))
    BENCH_I1=""
    [ "${BENCH_IR_CACHE:-0}" = 1 ] && BENCH_I1=$(((misses[1] - misses[0]) / (n2 - n1)))
    return 0
}

# bench_verdict WHAT A B: a verdict line for the goals table, `**PASS**: WHAT` when A >= B, else `**FAIL**: WHAT`
# (for an upper bound, pass the bound as A and the figure as B).
bench_verdict() { if bench_ge "$2" "$3"; then echo "**PASS**: $1"; else echo "**FAIL**: $1"; fi; }

# bench_measured WHAT: a line for the goals table with a figure that has no bound of its own (one to compare
# builds by, such as context switches per request): `**MEASURED**: WHAT`.
bench_measured() { echo "**MEASURED**: $1"; }

# bench_ctx_switches PID: the context switches of every thread of PID and of its children (uvicorn's workers),
# voluntary and involuntary, from /proc: the count `perf stat -e context-switches` reads, without perf.
bench_ctx_switches() {
    local pids
    pids="$1 $(pgrep -P "$1" | tr '\n' ' ' || true)"
    # A thread that ends between the glob and cat's read fails cat: that is not an error here (under pipefail it
    # ended the calling benchmark without a word).
    for pid in $pids; do cat /proc/"$pid"/task/*/status 2>/dev/null || true; done \
        | awk '/ctxt_switches/ { total += $2 } END { print total + 0 }'
}

# bench_customer_interaction BASE ADMIN NAME: a new tenant NAME (made with the admin token ADMIN) on the Switchboard at
# BASE, a customer "c" of it and one interaction of theirs; prints "TOKEN ID" (the customer's token, the interaction's
# id), for the event-stream benchmarks' subscribers.
bench_customer_interaction() {
    local base=$1 admin=$2 name=$3 api_key token id
    api_key=$(curl -sf -X POST "$base/v1/admin/tenants" -H "Authorization: Bearer $admin" \
        -H 'Content-Type: application/json' -d "{\"name\":\"$name\"}" | bench_json_field api_key)
    token=$(curl -sf -X POST "$base/v1/sessions" -H "Authorization: Bearer $api_key" \
        -H 'Content-Type: application/json' -d '{"user_id":"c","role":"customer"}' | bench_json_field token)
    id=$(curl -sf -X POST "$base/v1/interactions" -H "Authorization: Bearer $token" \
        -H 'Content-Type: application/json' -d "{\"subject\":\"$name\"}" | bench_json_field id)
    [ -n "$token" ] && [ -n "$id" ] || bench_die "could not set up a customer's interaction on $base"
    echo "$token $id"
}

# bench_feed_setup BASE ADMIN NAME: a new tenant NAME (made with the admin token ADMIN) on the Switchboard at BASE, a
# customer session of it, and its feed "launch" of 20 items (one page at the default limit); prints "API_KEY
# TENANT_ID TOKEN BYTES ETAG" (the page's size and entity tag, for the C baseline to serve the same page).
bench_feed_setup() {
    local base=$1 admin=$2 name=$3 tenant api_key tenant_id token bytes etag i
    tenant=$(curl -sf -X POST "$base/v1/admin/tenants" -H "Authorization: Bearer $admin" \
        -H 'Content-Type: application/json' -d "{\"name\":\"$name\"}")
    api_key=$(echo "$tenant" | bench_json_field api_key)
    tenant_id=$(echo "$tenant" | bench_json_field id)
    token=$(curl -sf -X POST "$base/v1/sessions" -H "Authorization: Bearer $api_key" \
        -H 'Content-Type: application/json' -d '{"user_id":"bench","role":"customer"}' | bench_json_field token)
    for i in $(seq 1 20); do
        curl -sf -o /dev/null -X POST "$base/v1/feeds/launch/items" -H "Authorization: Bearer $api_key" \
            -H 'Content-Type: application/json' \
            -d "{\"title\":\"Item $i\",\"body\":\"Body of item $i, long enough to look like a real teaser line.\",\"url\":\"https://example.com/$i\"}"
    done
    bytes=$(curl -sf "$base/v1/feeds/launch" -H "Authorization: Bearer $token" | wc -c)
    etag=$(curl -sf -o /dev/null -D - "$base/v1/feeds/launch" -H "Authorization: Bearer $token" | tr -d '\r' \
        | awk -F': ' 'tolower($1) == "etag" { print $2 }')
    [ -n "$token" ] && [ -n "$etag" ] || bench_die "could not set up a feed on $base"
    echo "$api_key $tenant_id $token $bytes $etag"
}

# bench_json_field NAME: the field NAME of the JSON object on stdin.
bench_json_field() { python3 -I -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

# bench_webhook_drain [URL]: waits until no webhook message is pending in URL (default DATABASE_URL; at most 300 s).
# It asks whether one exists (a probe of the pending index), not how many: a count read the whole outbox every
# 0.2 s, in the CPU the benchmarks charge to Postgres.
bench_webhook_drain() {
    local url=${1:-$DATABASE_URL} deadline=$((SECONDS + 300))
    while [ "$(psql "$url" -Atqc "SELECT EXISTS (SELECT 1 FROM webhook_messages WHERE status = 'pending')")" != f ]; do
        [ "$SECONDS" -lt "$deadline" ] || bench_die "the webhook outbox did not drain within 300 s"
        sleep 0.2
    done
}

# bench_event_burst URL COUNT: commits COUNT message events in one transaction in URL, spread over the interactions
# whose customer_id is 'burst' (COUNT / 100 each, for 100 of them), as an agent's messages.
bench_event_burst() {
    psql "$1" -q <<SQL
DO \$\$
DECLARE i record;
BEGIN
    FOR k IN 1 .. $2 / 100 LOOP
        FOR i IN SELECT id FROM interactions WHERE customer_id = 'burst' LOOP
            WITH next AS (UPDATE interactions SET last_seq = last_seq + 1 WHERE id = i.id RETURNING last_seq)
            INSERT INTO interaction_events (interaction_id, seq, kind, payload)
            SELECT i.id, last_seq, 'message', jsonb_build_object('id', gen_random_uuid(), 'sender_id', 'agent-1',
                   'sender_role', 'agent', 'text', 'Your order ships today.') FROM next;
        END LOOP;
    END LOOP;
END \$\$;
SQL
}

# bench_distinct_feeds TENANT COUNT: COUNT more feeds of tenant TENANT, d1 … dCOUNT, of 20 items each (feeds read cold,
# a different one each request).
bench_distinct_feeds() {
    psql "$DATABASE_URL" -q -v tenant="$1" -v feeds="$2" <<'SQL'
INSERT INTO feeds (tenant_id, key) SELECT :'tenant'::uuid, 'd' || n FROM generate_series(1, :feeds) AS n;
INSERT INTO feed_items (feed_id, title, body, url, published_at)
SELECT f.id, 'Item ' || k, 'Body of item ' || k || ', long enough to look like a real teaser line.',
       'https://example.com/' || k, now() - k * interval '1 minute'
FROM feeds f, generate_series(1, 20) AS k WHERE f.tenant_id = :'tenant'::uuid AND f.key LIKE 'd%';
ANALYZE feeds;
ANALYZE feed_items;
SQL
}

# bench_distinct_script: writes the wrk script that asks for a random one of the distinct feeds (BENCH_FEEDS of them,
# under BENCH_PREFIX, with BENCH_AUTH) and prints its path.
bench_distinct_script() {
    cat >"$BENCH_OUT/raw/feeds-distinct.lua" <<'LUA'
local feeds = tonumber(os.getenv("BENCH_FEEDS"))
local auth = os.getenv("BENCH_AUTH")
local prefix = os.getenv("BENCH_PREFIX")
-- Every wrk thread has its own Lua state: seeded alike, the threads would ask for the same feeds in the same order,
-- and concurrent asks for one feed are shared (deduplicated), which this run must not measure.
local threads = 0
function setup(thread)
    threads = threads + 1
    thread:set("thread_number", threads)
end
function init(args)
    math.randomseed(os.time() * 1000 + thread_number)
end
request = function()
    return wrk.format("GET", prefix .. "d" .. math.random(1, feeds), { ["Authorization"] = auth })
end
LUA
    echo "$BENCH_OUT/raw/feeds-distinct.lua"
}
