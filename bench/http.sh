#!/usr/bin/env bash
# HTTP round trip, side by side: Switchboard's GET /healthz (async path: suspend -> Swift Task -> resume)
# against the raw-C libmicrohttpd baseline's GET /direct (no suspend) and GET /async (suspend -> worker
# thread -> resume), and against the bridge's floor (bench/bridge-floor: suspend -> Swift task -> resume and
# nothing else, the least any Swift server on this bridge does). Interleaved rounds, medians; prints a table and
# writes $BENCH_OUT/http.md.
#
# Environment (all optional):
#   SWITCHBOARD_BIN      Switchboard binary (default .build/release/switchboard in the repository)
#   DATABASE_URL         passed through to Switchboard
#   BENCH_SECONDS=5 BENCH_ROUNDS=3 BENCH_WARMUP_SECONDS=1 BENCH_WRK_THREADS=2 BENCH_WRK_CONNECTIONS=64
#   BENCH_TARGET_RATIO=0.70   minimum Switchboard / C-async ratio for PASS
#   BENCH_ENFORCE=1           exit 3 on FAIL (default: report only, exit 0)
#   BENCH_C_THREADS           thread-pool size of the C baseline (default: number of cores)
#   BENCH_C_PORT=18090 BENCH_SB_PORT=18190   first ports tried (the next free one is used)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$BENCH_ROOT"

TARGET_RATIO=${BENCH_TARGET_RATIO:-0.70}
SB_BIN=${SWITCHBOARD_BIN:-$BENCH_ROOT/.build/release/switchboard}
C_THREADS=${BENCH_C_THREADS:-$(nproc)}
EXPECTED_BODY='{"status":"ok"}'

bench_init
bench_build_c_baseline
bench_build_bridge_floor

if [ ! -x "$SB_BIN" ]; then
    bench_die "Switchboard binary not found or not executable: $SB_BIN
        build it first (swift build -c release, which 'make bench' does), or set SWITCHBOARD_BIN"
fi
if [ -z "${DATABASE_URL:-}" ]; then
    bench_log "warning: DATABASE_URL is not set; Switchboard may refuse to start ('make bench' provides one)"
fi

c_port="" sb_port="" sb_log_port="" floor_port=""
bench_pick_port c_port "${BENCH_C_PORT:-18090}"
bench_pick_port floor_port "${BENCH_FLOOR_PORT:-18095}"
bench_pick_port sb_port "${BENCH_SB_PORT:-18190}"
bench_pick_port sb_log_port "$((sb_port + 1))"

bench_start_server c-baseline "http://127.0.0.1:$c_port/direct" -- \
    env PORT="$c_port" HOST=127.0.0.1 THREADS="$C_THREADS" "$BENCH_C_BIN"
bench_start_server bridge-floor "http://127.0.0.1:$floor_port/async" -- \
    env PORT="$floor_port" THREADS="$C_THREADS" "$BENCH_FLOOR_BIN"
bench_start_server switchboard "http://127.0.0.1:$sb_port/healthz" -- \
    env PORT="$sb_port" STREAM_PORT=off HOST=127.0.0.1 DATABASE_URL="${DATABASE_URL:-}" LOG_LEVEL=error "$SB_BIN"
# The same with its JSON access log on (one line per request, to a log file), as deployed.
bench_start_server switchboard-logging "http://127.0.0.1:$sb_log_port/healthz" -- \
    env PORT="$sb_log_port" STREAM_PORT=off HOST=127.0.0.1 DATABASE_URL="${DATABASE_URL:-}" LOG_LEVEL=info "$SB_BIN"

keys=(c-direct c-async swift-floor switchboard switchboard-logging)
labels=("C /direct" "C /async" "Swift task floor /async" "Switchboard /healthz" "Switchboard, access log on")
urls=("http://127.0.0.1:$c_port/direct" "http://127.0.0.1:$c_port/async" "http://127.0.0.1:$floor_port/async"
      "http://127.0.0.1:$sb_port/healthz" "http://127.0.0.1:$sb_log_port/healthz")

for i in "${!keys[@]}"; do
    bench_expect_body "${urls[$i]}" "$EXPECTED_BODY" || true
done

load_at_start=$(bench_load)
bench_log "warm-up: ${BENCH_WARMUP_SECONDS}s per target"
for i in "${!keys[@]}"; do
    bench_wrk "${urls[$i]}" "$BENCH_WARMUP_SECONDS" "$BENCH_OUT/raw/http-${keys[$i]}-warmup.txt"
done

declare -A RPS P50 P99 NON2XX SOCKERR
for ((r = 1; r <= BENCH_ROUNDS; r++)); do
    for i in "${!keys[@]}"; do
        k=${keys[$i]}
        raw="$BENCH_OUT/raw/http-$k-r$r.txt"
        bench_wrk "${urls[$i]}" "$BENCH_SECONDS" "$raw"
        read -r rps p50 p99 non2xx sockerr < <(bench_parse_wrk "$raw")
        RPS[$k:$r]=$rps P50[$k:$r]=$p50 P99[$k:$r]=$p99 NON2XX[$k:$r]=$non2xx SOCKERR[$k:$r]=$sockerr
        bench_log "round $r/$BENCH_ROUNDS  $(printf '%-22s %8s req/s  p50 %s ms  p99 %s ms' "${labels[$i]}" "$rps" "$p50" "$p99")"
    done
done

# Medians per target, and the latency of the round that produced the median.
declare -A MED MP50 MP99 ALL ERRS
for k in "${keys[@]}"; do
    vals=() errs=0 nerr=0
    for ((r = 1; r <= BENCH_ROUNDS; r++)); do
        vals+=("${RPS[$k:$r]}")
        nerr=$((nerr + ${NON2XX[$k:$r]}))
        errs=$((errs + ${SOCKERR[$k:$r]}))
    done
    MED[$k]=$(bench_median "${vals[@]}")
    mi=$(( $(bench_median_index "${vals[@]}") + 1 ))
    MP50[$k]=${P50[$k:$mi]}
    MP99[$k]=${P99[$k:$mi]}
    ALL[$k]="${vals[*]}"
    ERRS[$k]="$nerr/$errs"
done

ratio_async=$(bench_ratio "${MED[switchboard]}" "${MED[c-async]}")
ratio_direct=$(bench_ratio "${MED[switchboard]}" "${MED[c-direct]}")
ratio_floor=$(bench_ratio "${MED[swift-floor]}" "${MED[c-async]}")
ratio_over_floor=$(bench_ratio "${MED[switchboard]}" "${MED[swift-floor]}")
ratio_logging=$(bench_ratio "${MED[switchboard-logging]}" "${MED[c-async]}")
sb_non2xx=${ERRS[switchboard]%%/*}

verdict=PASS
reason="Switchboard / C async = $ratio_async >= $TARGET_RATIO"
if [ "$sb_non2xx" -gt 0 ]; then
    verdict=FAIL
    reason="Switchboard answered $sb_non2xx non-2xx responses: the figures are not valid"
elif ! bench_ge "$ratio_async" "$TARGET_RATIO"; then
    verdict=FAIL
    reason="Switchboard / C async = $ratio_async < $TARGET_RATIO"
fi

# ---- plain-text table ----
wrk_shape="wrk -t$BENCH_WRK_THREADS -c$BENCH_WRK_CONNECTIONS -d${BENCH_SECONDS}s --latency"
{
    echo
    echo "HTTP round trip: $wrk_shape, $BENCH_ROUNDS interleaved round(s), median req/s"
    echo "(p50/p99 from the median round; errors = non-2xx/socket errors over all rounds)"
    printf '%-22s %10s %9s %9s %8s   %s\n' target "req/s" "p50 ms" "p99 ms" errors "rounds (req/s)"
    for i in "${!keys[@]}"; do
        k=${keys[$i]}
        printf '%-22s %10s %9s %9s %8s   %s\n' "${labels[$i]}" "${MED[$k]}" "${MP50[$k]}" "${MP99[$k]}" \
            "${ERRS[$k]}" "${ALL[$k]}"
    done
    echo
    printf '%-34s %s\n' "Switchboard / C async:" "$ratio_async   (pass >= $TARGET_RATIO; goal >= 0.95)"
    printf '%-34s %s\n' "Switchboard logging / C async:" "$ratio_logging   (goal >= 0.85)"
    printf '%-34s %s\n' "Swift task floor / C async:" "$ratio_floor   (the bridge alone: suspend -> task -> resume)"
    printf '%-34s %s\n' "Switchboard / Swift task floor:" "$ratio_over_floor"
    printf '%-34s %s\n' "Switchboard / C direct:" "$ratio_direct"
    printf '%-34s %s\n' "C async / C direct:" "$(bench_ratio "${MED[c-async]}" "${MED[c-direct]}")"
    echo "$verdict: $reason"
    echo
}

# ---- markdown snippet ----
md="$BENCH_OUT/http.md"
{
    echo "## HTTP round trip: Switchboard vs raw-C libmicrohttpd"
    echo
    echo "- date: $(bench_date); commit: \`$(bench_commit)\`; machine: $(bench_machine); load average at start: $load_at_start"
    echo "- $BENCH_ROUNDS interleaved round(s) of ${BENCH_SECONDS}s per target after a ${BENCH_WARMUP_SECONDS}s warm-up each; median req/s; p50/p99 from the median round"
    echo "- commands (client and servers share the machine's cores):"
    for i in "${!keys[@]}"; do
        echo "  - ${labels[$i]}: \`$(bench_wrk_cmd "${urls[$i]}" "$BENCH_SECONDS")\`"
    done
    echo "- C baseline: \`bench/c-baseline/mhd-baseline\`, $C_THREADS MHD threads, epoll; /async = suspend -> worker thread -> resume"
    echo "- Swift task floor: \`bench/bridge-floor\`, the same daemon options and threads; /async = suspend -> Swift task on the global executor -> resume, nothing else"
    echo
    echo "| target | req/s (median) | p50 ms | p99 ms | errors (non-2xx/socket) | rounds (req/s) |"
    echo "| --- | ---: | ---: | ---: | ---: | --- |"
    for i in "${!keys[@]}"; do
        k=${keys[$i]}
        echo "| ${labels[$i]} | ${MED[$k]} | ${MP50[$k]} | ${MP99[$k]} | ${ERRS[$k]} | ${ALL[$k]} |"
    done
    echo
    echo "| ratio | value |"
    echo "| --- | ---: |"
    echo "| Switchboard / C async (pass >= $TARGET_RATIO; goal >= 0.95) | $ratio_async |"
    echo "| Switchboard with access log / C async (goal >= 0.85) | $ratio_logging |"
    echo "| Swift task floor / C async | $ratio_floor |"
    echo "| Switchboard / Swift task floor | $ratio_over_floor |"
    echo "| Switchboard / C direct | $ratio_direct |"
    echo "| C async / C direct | $(bench_ratio "${MED[c-async]}" "${MED[c-direct]}") |"
    echo
    echo "**$verdict**: $reason"
} >"$md"
bench_log "wrote $md (raw wrk output in $BENCH_OUT/raw/)"

if [ "$verdict" = FAIL ] && [ "${BENCH_ENFORCE:-0}" = 1 ]; then
    exit 3
fi
