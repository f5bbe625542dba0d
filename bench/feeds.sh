#!/usr/bin/env bash
# Feed reads, side by side: a hot feed page (served from memory, on the libmicrohttpd thread) against the raw-C
# baseline's direct route and against the same number of bytes served from memory by raw C (`/page`), and cold reads
# (FEED_CACHE=0: every request read from Postgres, still deduplicated) with their p50/p99 latency. Target: hot >= 0.60
# of C /direct, measured in the same run; the same-bytes ratio is reported against its 0.90 goal. A third C route
# does the hot feed's own work too (bench/c-baseline/feed.c: token and page looked up under locks, request id,
# conditional request, four headers on a response made per request, counters), to say how much of the same-bytes gap
# any server honouring the feed's contract on libmicrohttpd has to pay.
# Then the database path with nothing shared: cold reads of a different feed each time (random among
# BENCH_FEED_DISTINCT feeds of 20 items, default 5,000), with Switchboard's and Postgres's CPU per request
# (process CPU time / requests; the goal for Switchboard is 60 µs), and the Postgres statements per request
# (pg_stat_statements): Switchboard reads pages that miss its cache together in one statement.
# The reference for both is FastAPI + uvicorn (2 workers, uvloop, httptools) + asyncpg serving the same bytes from
# the same tables (bench/fastapi/app.py; its pinned packages go into bench/.venv from PyPI on first use): hot pages from
# its memory (goal: Switchboard >= 8x) and one query per request over the same distinct feeds (goal: >= 2x).
#   SWITCHBOARD_BIN, DATABASE_URL as for http.sh; BENCH_FEED_TARGET_RATIO (default 0.60); BENCH_FASTAPI=0 skips the
#   reference (as does a machine without PyPI, with a note)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init
TARGET_RATIO=${BENCH_FEED_TARGET_RATIO:-0.60}
bench_need_switchboard_and_database
bench_build_c_baseline
ADMIN=bench-admin-token-0123456789

c_port="" page_port="" hot_port="" cold_port=""
bench_pick_port c_port "${BENCH_C_PORT:-18090}"
bench_pick_port page_port $((c_port + 1))
bench_pick_port hot_port 18290
bench_pick_port cold_port 18291
# No stream listener: by default it takes PORT + 1, which is the next server's port here.
common=(HOST=127.0.0.1 STREAM_PORT=off DATABASE_URL="$DATABASE_URL" LOG_LEVEL=error RATE_LIMIT_PER_MINUTE=0 SWITCHBOARD_ADMIN_TOKEN=$ADMIN)
bench_start_server c-baseline "http://127.0.0.1:$c_port/direct" -- env PORT="$c_port" HOST=127.0.0.1 "$BENCH_C_BIN"
bench_start_server switchboard-hot "http://127.0.0.1:$hot_port/readyz" -- env PORT="$hot_port" "${common[@]}" "$SB_BIN"
hot_pid=${BENCH_PIDS[-1]}
bench_start_server switchboard-cold "http://127.0.0.1:$cold_port/readyz" -- env PORT="$cold_port" FEED_CACHE=0 "${common[@]}" "$SB_BIN"
cold_pid=${BENCH_PIDS[-1]}

# A tenant, a customer session, and a feed of 20 items (one page at the default limit).
read -r _ tenant_id token bytes etag <<<"$(bench_feed_setup "http://127.0.0.1:$hot_port" "$ADMIN" bench)"
[ -n "$etag" ] || exit 1  # bench_feed_setup said why
auth="Authorization: Bearer $token"
bench_log "feed page: 20 items, $bytes bytes, ETag $etag"
# The same C server also answers /v1/feeds/launch with the hot feed's obligations (bench/c-baseline/feed.c).
bench_start_server c-page "http://127.0.0.1:$page_port/page" -- env PORT="$page_port" HOST=127.0.0.1 PAGE_BYTES="$bytes" \
    FEED_TOKEN="$token" FEED_KEY=launch FEED_ETAG="$etag" "$BENCH_C_BIN"
page_pid=${BENCH_PIDS[-1]}

# The FastAPI reference, on the same database and tenant.
fastapi=""
if [ "${BENCH_FASTAPI:-1}" != 0 ]; then
    if venv=$("$BENCH_ROOT/bench/fastapi/setup.sh"); then
        fa_port=""
        bench_pick_port fa_port 18292
        bench_start_server fastapi "http://127.0.0.1:$fa_port/hot/feeds/launch" -- env DATABASE_URL="$DATABASE_URL" \
            BENCH_TENANT="$tenant_id" "$venv/bin/uvicorn" app:app --app-dir "$BENCH_ROOT/bench/fastapi" --workers 2 \
            --loop uvloop --http httptools --log-level warning --no-access-log --host 127.0.0.1 --port "$fa_port"
        fa_pid=${BENCH_PIDS[-1]}
        fastapi="http://127.0.0.1:$fa_port"
        fa_bytes=$(curl -sf "$fastapi/hot/feeds/launch" | wc -c)
        [ "$fa_bytes" = "$bytes" ] || bench_die "FastAPI's page is $fa_bytes bytes, Switchboard's $bytes: not the same page"
    else
        bench_log "note: the FastAPI reference could not be installed (bench/fastapi/setup.sh); its rows are skipped"
    fi
fi

c_feed_status=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$page_port/v1/feeds/launch" -H "$auth")
c_feed_bytes=$(curl -sf "http://127.0.0.1:$page_port/v1/feeds/launch" -H "$auth" | wc -c)
[ "$c_feed_status" = 200 ] && [ "$c_feed_bytes" = "$bytes" ] \
    || bench_die "C /v1/feeds/launch answered $c_feed_status with $c_feed_bytes bytes, not 200 with $bytes"
keys=(c-direct c-page c-feed hot cold)
labels=("C /direct" "C /page (same bytes)" "C feed (same work)" "Switchboard hot feed" "Switchboard cold feed")
urls=("http://127.0.0.1:$c_port/direct" "http://127.0.0.1:$page_port/page" "http://127.0.0.1:$page_port/v1/feeds/launch"
      "http://127.0.0.1:$hot_port/v1/feeds/launch" "http://127.0.0.1:$cold_port/v1/feeds/launch")
headers=("" "" "$auth" "$auth" "$auth")
if [ -n "$fastapi" ]; then
    keys+=(fa-hot) labels+=("FastAPI hot (memory)") urls+=("$fastapi/hot/feeds/launch") headers+=("")
fi
for i in "${!keys[@]}"; do
    bench_wrk "${urls[$i]}" "$BENCH_WARMUP_SECONDS" "$BENCH_OUT/raw/feeds-${keys[$i]}-warmup.txt" "${headers[$i]}"
done
# The same-bytes pair also by the server's own CPU per request: less at the mercy of how the shared cores are
# scheduled between wrk and the server than requests a second are.
declare -A RPS P50 P99 NON2XX SCPU
declare -A server_pid=([c-page]=$page_pid [c-feed]=$page_pid [hot]=$hot_pid)
for ((r = 1; r <= BENCH_ROUNDS; r++)); do
    for i in "${!keys[@]}"; do
        k=${keys[$i]}
        raw="$BENCH_OUT/raw/feeds-$k-r$r.txt"
        pid=${server_pid[$k]:-}
        [ -z "$pid" ] || cpu_before=$(bench_pid_cpu_ms "$pid")
        bench_wrk "${urls[$i]}" "$BENCH_SECONDS" "$raw" "${headers[$i]}"
        read -r rps p50 p99 non2xx _ < <(bench_parse_wrk "$raw")
        RPS[$k:$r]=$rps P50[$k:$r]=$p50 P99[$k:$r]=$p99 NON2XX[$k:$r]=$non2xx
        cpu_note=""
        if [ -n "$pid" ]; then
            requests=$(awk '/requests in/ { print $1 }' "$raw")
            # Tenths of a microsecond: C's figure is around 15 µs.
            SCPU[$k]+="$(( ($(bench_pid_cpu_ms "$pid") - cpu_before) * 10000 / requests )) "
            last=${SCPU[$k]% }
            cpu_note="  server CPU/request $(bench_tenths "${last##* }") µs"
        fi
        bench_log "round $r/$BENCH_ROUNDS  $(printf '%-24s %8s req/s  p50 %s ms  p99 %s ms' "${labels[$i]}" "$rps" "$p50" "$p99")$cpu_note"
    done
done
# shellcheck disable=SC2086 # the per-round figures are space-separated words
page_cpu=$(bench_median ${SCPU[c-page]}) hot_cpu=$(bench_median ${SCPU[hot]})
same_bytes_cpu=$(bench_ratio "$page_cpu" "$hot_cpu")
# shellcheck disable=SC2086
c_feed_cpu=$(bench_median ${SCPU[c-feed]})
same_work_cpu=$(bench_ratio "$c_feed_cpu" "$hot_cpu") c_work_cpu=$(bench_ratio "$page_cpu" "$c_feed_cpu")
declare -A MED MP50 MP99 ERR
bench_summarize_rounds "${keys[@]}"
ratio=$(bench_ratio "${MED[hot]}" "${MED[c-direct]}")
same_bytes=$(bench_ratio "${MED[hot]}" "${MED[c-page]}")
same_work=$(bench_ratio "${MED[hot]}" "${MED[c-feed]}") c_work=$(bench_ratio "${MED[c-feed]}" "${MED[c-page]}")
verdict=PASS
reason="hot feed / C direct = $ratio >= $TARGET_RATIO"
if [ "${ERR[hot]}" -gt 0 ] || [ "${ERR[cold]}" -gt 0 ]; then
    verdict=FAIL; reason="non-2xx answers: hot ${ERR[hot]}, cold ${ERR[cold]}"
elif ! bench_ge "$ratio" "$TARGET_RATIO"; then
    verdict=FAIL; reason="hot feed / C direct = $ratio < $TARGET_RATIO"
fi
# The database path with nothing shared: a different feed for (almost) every request.
DISTINCT=${BENCH_FEED_DISTINCT:-5000}
bench_distinct_feeds "$tenant_id" "$DISTINCT"
distinct_script=$(bench_distinct_script)
distinct_run() { # BASE-URL PATH-PREFIX SECONDS OUT
    BENCH_FEEDS=$DISTINCT BENCH_AUTH="Bearer $token" BENCH_PREFIX=$2 bench_run wrk -t"$BENCH_WRK_THREADS" \
        -c"$BENCH_WRK_CONNECTIONS" -d"${3}s" --latency -s "$distinct_script" "$1" >"$4" 2>&1 \
        || { cat "$4" >&2; bench_die "wrk failed against the distinct feeds of $1"; }
}
# Who serves the distinct feeds: Switchboard (cache off), and FastAPI when it runs; interleaved round by round.
d_keys=(distinct) d_bases=("http://127.0.0.1:$cold_port") d_prefixes=(/v1/feeds/) d_labels=("cold, distinct feeds")
d_cpu=("bench_pid_cpu_ms $cold_pid") d_pid=("$cold_pid")
if [ -n "$fastapi" ]; then
    d_keys+=(fa-distinct) d_bases+=("$fastapi") d_prefixes+=(/feeds/) d_labels+=("FastAPI, distinct feeds")
    d_cpu+=("bench_tree_cpu_ms $fa_pid") d_pid+=("$fa_pid")
fi
declare -A DCPU DPG DSTMT DCS
# Statements Postgres ran, from pg_stat_statements (empty when it is not loaded): concurrent reads of different feeds
# share statements in Switchboard (batched), so requests and statements are counted apart.
psql "$DATABASE_URL" -qAt -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null 2>&1 || true
pg_calls() { psql "$DATABASE_URL" -qAt -c "SELECT sum(calls) FROM pg_stat_statements" 2>/dev/null || true; }
for i in "${!d_keys[@]}"; do
    distinct_run "${d_bases[$i]}" "${d_prefixes[$i]}" "$BENCH_WARMUP_SECONDS" "$BENCH_OUT/raw/feeds-${d_keys[$i]}-warmup.txt"
done
for ((r = 1; r <= BENCH_ROUNDS; r++)); do
    for i in "${!d_keys[@]}"; do
        k=${d_keys[$i]}
        raw="$BENCH_OUT/raw/feeds-$k-r$r.txt"
        cpu_before=$(${d_cpu[$i]}) pg_before=$(bench_cpu_ms postgres) calls_before=$(pg_calls)
        cs_before=$(bench_ctx_switches "${d_pid[$i]}")
        distinct_run "${d_bases[$i]}" "${d_prefixes[$i]}" "$BENCH_SECONDS" "$raw"
        cpu_ms=$(( $(${d_cpu[$i]}) - cpu_before )) pg_ms=$(( $(bench_cpu_ms postgres) - pg_before )) calls_after=$(pg_calls)
        switches=$(( $(bench_ctx_switches "${d_pid[$i]}") - cs_before ))
        read -r rps p50 p99 non2xx _ < <(bench_parse_wrk "$raw")
        requests=$(awk '/requests in/ { print $1 }' "$raw")
        statements=n/a
        if [ -n "$calls_before" ] && [ -n "$calls_after" ]; then
            # One counted statement is the first count's own query.
            statements=$(awk -v c=$(( calls_after - calls_before - 1 )) -v n="$requests" 'BEGIN { printf "%.2f", c / n }')
        fi
        RPS[$k:$r]=$rps P50[$k:$r]=$p50 P99[$k:$r]=$p99 NON2XX[$k:$r]=$non2xx
        DCPU[$k]+="$(( cpu_ms * 1000 / requests )) " DPG[$k]+="$(( pg_ms * 1000 / requests )) " DSTMT[$k]+="$statements "
        DCS[$k]+="$(awk -v c="$switches" -v n="$requests" 'BEGIN { printf "%.2f", c / n }') "
        bench_log "round $r/$BENCH_ROUNDS  $(printf '%-24s %8s req/s  p50 %s ms  p99 %s ms  CPU/request: server %s µs, Postgres %s µs  statements/request %s' \
            "${d_labels[$i]}" "$rps" "$p50" "$p99" "$(( cpu_ms * 1000 / requests ))" "$(( pg_ms * 1000 / requests ))" "$statements")"
    done
done
bench_summarize_rounds "${d_keys[@]}"
# shellcheck disable=SC2086 # the per-round figures are space-separated words
sb_us=$(bench_median ${DCPU[distinct]}) pg_us=$(bench_median ${DPG[distinct]}) sb_cs=$(bench_median ${DCS[distinct]})
[ "${ERR[distinct]}" -eq 0 ] || { verdict=FAIL; reason="$reason; non-2xx answers on distinct feeds: ${ERR[distinct]}"; }
fa_hot_ratio=n/a fa_cold_ratio=n/a fa_us=n/a fa_pg_us=n/a
if [ -n "$fastapi" ]; then
    fa_hot_ratio=$(bench_ratio "${MED[hot]}" "${MED[fa-hot]}")
    fa_cold_ratio=$(bench_ratio "${MED[distinct]}" "${MED[fa-distinct]}")
    # shellcheck disable=SC2086
    fa_us=$(bench_median ${DCPU[fa-distinct]}) fa_pg_us=$(bench_median ${DPG[fa-distinct]})
fi
{
    echo
    echo "Feed reads: wrk -t$BENCH_WRK_THREADS -c$BENCH_WRK_CONNECTIONS -d${BENCH_SECONDS}s, $BENCH_ROUNDS interleaved rounds, medians; page of 20 items ($bytes bytes)"
    printf '%-24s %10s %9s %9s %8s\n' target "req/s" "p50 ms" "p99 ms" non-2xx
    for i in "${!keys[@]}"; do
        k=${keys[$i]}
        printf '%-24s %10s %9s %9s %8s\n' "${labels[$i]}" "${MED[$k]}" "${MP50[$k]}" "${MP99[$k]}" "${ERR[$k]}"
    done
    for i in "${!d_keys[@]}"; do
        k=${d_keys[$i]}
        printf '%-24s %10s %9s %9s %8s\n' "${d_labels[$i]}" "${MED[$k]}" "${MP50[$k]}" "${MP99[$k]}" "${ERR[$k]}"
    done
    echo "cold, distinct feeds ($DISTINCT): CPU per request, medians of the rounds: Switchboard $sb_us µs (goal <= 60), Postgres $pg_us µs; Postgres statements per request, by round: ${DSTMT[distinct]}"
    echo "FastAPI, distinct feeds: CPU per request: FastAPI $fa_us µs, Postgres $fa_pg_us µs; Postgres statements per request, by round: ${DSTMT[fa-distinct]:-n/a}"
    echo "hot feed / FastAPI hot: $fa_hot_ratio (goal >= 8)"
    echo "cold distinct feeds / FastAPI cold distinct: $fa_cold_ratio (goal >= 2)"
    echo "hot feed / C direct: $ratio (target >= $TARGET_RATIO)"
    echo "hot feed / C same bytes: $same_bytes (goal >= 0.90)"
    echo "the same pair by server CPU per request (C / Switchboard): $same_bytes_cpu (C $(bench_tenths "$page_cpu") µs, Switchboard $(bench_tenths "$hot_cpu") µs)"
    echo "hot feed / C feed with the same work: $same_work; by server CPU per request (C / Switchboard): $same_work_cpu (C $(bench_tenths "$c_feed_cpu") µs)"
    echo "C feed with the same work / C same bytes (what the feed's own work leaves of C's speed): $c_work; by CPU $c_work_cpu"
    echo "$verdict: $reason"
} | tee "$BENCH_OUT/feeds.txt"
{
    echo "## Feed reads: hot (memory) and cold (FEED_CACHE=0) vs raw-C direct"
    echo
    echo "- date: $(bench_date); commit: \`$(bench_commit)\`; machine: $(bench_machine)"
    echo "- \`wrk -t$BENCH_WRK_THREADS -c$BENCH_WRK_CONNECTIONS -d${BENCH_SECONDS}s --latency -H 'Authorization: Bearer …'\`, $BENCH_ROUNDS interleaved rounds, medians; page of 20 items ($bytes bytes)"
    echo
    echo "| target | req/s (median) | p50 ms | p99 ms | non-2xx |"
    echo "| --- | ---: | ---: | ---: | ---: |"
    for i in "${!keys[@]}"; do
        k=${keys[$i]}
        echo "| ${labels[$i]} | ${MED[$k]} | ${MP50[$k]} | ${MP99[$k]} | ${ERR[$k]} |"
    done
    echo "| Switchboard cold, a different feed each request (random among $DISTINCT; reads arriving together share a statement) | ${MED[distinct]} | ${MP50[distinct]} | ${MP99[distinct]} | ${ERR[distinct]} |"
    [ -z "$fastapi" ] || echo "| FastAPI, the same distinct feeds (one query per request) | ${MED[fa-distinct]} | ${MP50[fa-distinct]} | ${MP99[fa-distinct]} | ${ERR[fa-distinct]} |"
    echo
    echo "Cold reads of distinct feeds, CPU per request (medians of the rounds): Switchboard **$sb_us µs** (goal ≤ 60), Postgres $pg_us µs; FastAPI $fa_us µs, Postgres $fa_pg_us µs. Postgres statements per request, by round: Switchboard ${DSTMT[distinct]}(concurrent reads of different feeds share statements); FastAPI ${DSTMT[fa-distinct]:-n/a}."
    echo
    echo "Against FastAPI in the same run: hot feed **$fa_hot_ratio×** (goal ≥ 8), cold distinct feeds **$fa_cold_ratio×** (goal ≥ 2)."
    echo
    echo "Hot feed / C with the same bytes from memory: **$same_bytes** (goal ≥ 0.90); by server CPU per request, C / Switchboard: **$same_bytes_cpu** (C $(bench_tenths "$page_cpu") µs, Switchboard $(bench_tenths "$hot_cpu") µs)."
    echo
    echo "Hot feed / C doing the hot feed's work (\`bench/c-baseline/feed.c\`): **$same_work**; by server CPU per request, C / Switchboard: **$same_work_cpu** (C $(bench_tenths "$c_feed_cpu") µs). That C route / C with the same bytes: $c_work (by CPU $c_work_cpu)."
    echo
    echo "**$verdict**: $reason"
    echo
    # The performance goals, one line each for the goals table (medians of the rounds).
    bench_verdict "hot feed ÷ C doing the same work, by server CPU per request (C / Switchboard) = $same_work_cpu (goal ≥ 0.85; C $(bench_tenths "$c_feed_cpu") µs, Switchboard $(bench_tenths "$hot_cpu") µs)" "$same_work_cpu" 0.85
    echo
    bench_verdict "cold reads of distinct feeds, Switchboard CPU per request = $sb_us µs (goal ≤ 60; rounds ${DCPU[distinct]% })" 60 "$sb_us"
    echo
    bench_measured "cold reads of distinct feeds, Switchboard's context switches per request = $sb_cs (rounds ${DCS[distinct]% })"
} >"$BENCH_OUT/feeds.md"
