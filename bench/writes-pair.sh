#!/usr/bin/env bash
# Two builds' writes side by side: SWITCHBOARD_BIN and SWITCHBOARD_BASELINE_BIN run at once on one database, each with
# a tenant, an agent and WRITES_INTERACTIONS (200) open interactions of its own, and take the same loads in turn,
# round after round, so that the machine's moods fall on both: message POSTs (bench/writes.lua), read positions that
# move (bench/writes_read.lua), interactions opened (bench/writes_create.lua), claims and unassignments
# (bench/writes_assign.lua), each `wrk -t2 -c32` for BENCH_SECONDS (5), with `synchronous_commit = off`. Prints each
# run's CPU and context switches per request, and per write the median of this build ÷ the baseline's CPU.
#   SWITCHBOARD_BIN, SWITCHBOARD_BASELINE_BIN, DATABASE_URL; BENCH_SECONDS (5), BENCH_ROUNDS (3),
#   WRITES_PAIR_KINDS ("post read create claim")
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$BENCH_ROOT"

bench_init
bench_need_switchboard_and_database
BASE_BIN=${SWITCHBOARD_BASELINE_BIN:-}
[ -x "$BASE_BIN" ] || bench_die "SWITCHBOARD_BASELINE_BIN must name the build to compare with"
INTERACTIONS=${WRITES_INTERACTIONS:-200}
read -r -a KINDS <<<"${WRITES_PAIR_KINDS:-post read create claim}"
ADMIN=bench-admin-token-0123456789
database=$(psql "$DATABASE_URL" -qAt -c "SELECT current_database()")
psql "$DATABASE_URL" -q -c "ALTER DATABASE \"$database\" SET synchronous_commit = off"
trap 'psql "$DATABASE_URL" -q -c "ALTER DATABASE \"$database\" RESET synchronous_commit" || true; _bench_on_exit' EXIT

field() { grep -o "\"$1\":\"[^\"]*\"" | head -1 | cut -d'"' -f4; }
declare -A PID URL AGENT CUSTOMER IDS CPU CS
builds=(build baseline)
for build in "${builds[@]}"; do
    port=""
    bench_pick_port port "$([ "$build" = build ] && echo 18710 || echo 18730)"
    binary=$SB_BIN
    [ "$build" = baseline ] && binary=$BASE_BIN
    URL[$build]="http://127.0.0.1:$port"
    bench_start_server "pair-$build" "${URL[$build]}/readyz" -- env PORT="$port" STREAM_PORT=off HOST=127.0.0.1 \
        DATABASE_URL="$DATABASE_URL" LOG_LEVEL=error RATE_LIMIT_PER_MINUTE=0 SWITCHBOARD_ADMIN_TOKEN=$ADMIN "$binary"
    PID[$build]=${BENCH_PIDS[-1]}
    post() { curl -sf -X POST "${URL[$build]}$1" -H "Authorization: Bearer $2" -H 'Content-Type: application/json' -d "$3"; }
    key=$(post /v1/admin/tenants "$ADMIN" "{\"name\":\"Pair $build\"}" | field api_key)
    AGENT[$build]=$(post /v1/sessions "$key" '{"user_id":"agent-1","role":"agent","ttl_seconds":86400}' | field token)
    IDS[$build]=$BENCH_OUT/raw/writes-pair-$build-ids.txt
    : >"${IDS[$build]}"
    for ((n = 0; n < INTERACTIONS; n++)); do
        CUSTOMER[$build]=$(post /v1/sessions "$key" "{\"user_id\":\"customer-$n\",\"role\":\"customer\",\"ttl_seconds\":86400}" | field token)
        post /v1/interactions "${CUSTOMER[$build]}" '{"subject":"writes"}' | field id >>"${IDS[$build]}"
    done
done

# run BUILD KIND ROUND: one load against one build; records its CPU and context switches per request.
run() {
    local build=$1 kind=$2 round=$3 raw="$BENCH_OUT/raw/writes-pair-$1-$2-$3.txt" url=${URL[$1]} pid=${PID[$1]}
    local cpu_before cs_before reads="$BENCH_OUT/raw/writes-pair-$1-reads.txt"
    if [ "$kind" = read ]; then
        # Each read moves its position one event on: start where the positions stand now.
        psql "$DATABASE_URL" -qAt -F ' ' -c "SELECT i.id, coalesce(r.read_through, 0) + 1
            FROM unnest(string_to_array('$(paste -sd, "${IDS[$build]}")', ',')::uuid[]) WITH ORDINALITY AS t(id, n)
            JOIN interactions i ON i.id = t.id
            LEFT JOIN interaction_reads r ON r.interaction_id = i.id AND r.reader_role = 'agent' AND r.reader_id = 'agent-1'
            ORDER BY t.n" >"$reads"
    fi
    cpu_before=$(bench_pid_cpu_ms "$pid") cs_before=$(bench_ctx_switches "$pid")
    case $kind in
        post) WRITES_IDS=${IDS[$build]} WRITES_TOKEN=${AGENT[$build]} WRITES_IDEMPOTENT=0 WRITES_PATH=/v1/interactions/ \
                  bench_run wrk -t2 -c32 -d"${BENCH_SECONDS}s" -s "$BENCH_DIR/writes.lua" "$url" >"$raw" 2>&1 ;;
        read) WRITES_READS=$reads WRITES_TOKEN=${AGENT[$build]} WRK_THREADS=2 \
                  bench_run wrk -t2 -c32 -d"${BENCH_SECONDS}s" -s "$BENCH_DIR/writes_read.lua" "$url" >"$raw" 2>&1 ;;
        create) WRITES_TOKEN=${CUSTOMER[$build]} \
                  bench_run wrk -t2 -c32 -d"${BENCH_SECONDS}s" -s "$BENCH_DIR/writes_create.lua" "$url" >"$raw" 2>&1 ;;
        claim) WRITES_IDS=${IDS[$build]} WRITES_TOKEN=${AGENT[$build]} \
                  bench_run wrk -t2 -c32 -d"${BENCH_SECONDS}s" -s "$BENCH_DIR/writes_assign.lua" "$url" >"$raw" 2>&1 ;;
        *) bench_die "unknown write '$kind' (known: post read create claim)" ;;
    esac
    local requests cpu cs
    requests=$(awk '/requests in/ { print $1 }' "$raw")
    [ "${requests:-0}" -gt 0 ] || bench_die "no request completed ($build, $kind): $(cat "$raw")"
    ! grep -q "Non-2xx" "$raw" || bench_die "answers that are not 2xx ($build, $kind): $(grep Non-2xx "$raw")"
    cpu=$(( ($(bench_pid_cpu_ms "$pid") - cpu_before) * 1000 / requests ))
    cs=$(( $(bench_ctx_switches "$pid") - cs_before ))
    CPU[$build-$kind-$round]=$cpu CS[$build-$kind-$round]="$(( cs * 10 / requests / 10 )).$(( cs * 10 / requests % 10 ))"
    bench_log "round $round, $kind, $build: $((requests / BENCH_SECONDS))/s, CPU $cpu µs, ${CS[$build-$kind-$round]} context switches per request"
}

for ((r = 1; r <= BENCH_ROUNDS; r++)); do
    for kind in "${KINDS[@]}"; do
        # Which build goes first alternates, so neither always follows the other's load.
        if ((r % 2)); then run build "$kind" "$r"; run baseline "$kind" "$r"; else run baseline "$kind" "$r"; run build "$kind" "$r"; fi
    done
done

out="$BENCH_OUT/writes-pair.md"
{
    echo "## Writes, two builds side by side"
    echo
    echo "- $(bench_date), commit \`$(bench_commit)\`, $(bench_machine), load $(bench_load); \`synchronous_commit = off\`"
    echo "- build \`$SB_BIN\`, baseline \`$BASE_BIN\`; \`wrk -t2 -c32 -d${BENCH_SECONDS}s\` per run, the two in turn"
    echo
    echo "| write | round | build CPU µs/request | baseline CPU µs/request | build ÷ baseline | context switches (build / baseline) |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: |"
    for kind in "${KINDS[@]}"; do
        for ((r = 1; r <= BENCH_ROUNDS; r++)); do
            echo "| $kind | $r | ${CPU[build-$kind-$r]} | ${CPU[baseline-$kind-$r]} | $(bench_ratio "${CPU[build-$kind-$r]}" "${CPU[baseline-$kind-$r]}") | ${CS[build-$kind-$r]} / ${CS[baseline-$kind-$r]} |"
        done
    done
    echo
    for kind in "${KINDS[@]}"; do
        ratios=()
        for ((r = 1; r <= BENCH_ROUNDS; r++)); do ratios+=("$(bench_ratio "${CPU[build-$kind-$r]}" "${CPU[baseline-$kind-$r]}")"); done
        bench_measured "$kind: this build's CPU per request ÷ the baseline's = $(bench_median "${ratios[@]}") (rounds ${ratios[*]})"
        echo
    done
} | tee "$out"
bench_log "wrote $out"
