#!/usr/bin/env bash
# The bus across replicas: two Switchboard processes on one database; every interaction followed by one event
# stream on each; messages posted through both replicas in turn at increasing rates (BUS_RATES, per second, each for
# BENCH_SECONDS, at most BUS_INFLIGHT POSTs in flight), for BUS_INTERACTIONS interactions (space-separated list: one
# series per count). For each rate: the rate achieved, POST p50/p99, publish→delivery p50/p99 on the replica that
# took the POST and on the other one, deliveries lost and duplicated. The sustainable rate is the highest at which
# the other replica's p99 stays under BUS_P99_TARGET_MS (250) with nothing lost; the series stops once POSTs
# saturate (achieved < 90 % of asked).
#   SWITCHBOARD_BIN, DATABASE_URL as for http.sh
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init
RATES=${BUS_RATES:-"250 500 1000 1500 2000 2500 3000"}
COUNTS=${BUS_INTERACTIONS:-"100 1000"}
INFLIGHT=${BUS_INFLIGHT:-32}
P99_TARGET=${BUS_P99_TARGET_MS:-250}
bench_need_switchboard_and_database
bench_build_client bus_latency
CLIENT=$BENCH_CLIENT
ADMIN=bench-admin-token-0123456789
max_count=0
for n in $COUNTS; do [ "$n" -gt "$max_count" ] && max_count=$n; done

declare -a API STREAM
for r in 0 1; do
    api="" stream=""
    bench_pick_port api $((18590 + r * 10))
    bench_pick_port stream $((api + 1))
    API[$r]=$api STREAM[$r]=$stream
    bench_start_server "replica-$r" "http://127.0.0.1:$api/readyz" -- env PORT="$api" STREAM_PORT="$stream" HOST=127.0.0.1 \
        DATABASE_URL="$DATABASE_URL" LOG_LEVEL=error RATE_LIMIT_PER_MINUTE=0 SWITCHBOARD_ADMIN_TOKEN=$ADMIN \
        HTTP_CONNECTIONS_PER_ADDRESS=0 STREAMS_PER_PRINCIPAL=$((max_count + 100)) ${BUS_SERVER_ENV:-} "$SB_BIN"
done

json() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
base="http://127.0.0.1:${API[0]}"
api_key=$(curl -sf -X POST "$base/v1/admin/tenants" -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
    -d '{"name":"bus"}' | json api_key)
token=$(curl -sf -X POST "$base/v1/sessions" -H "Authorization: Bearer $api_key" -H 'Content-Type: application/json' \
    -d '{"user_id":"c","role":"customer"}' | json token)
ids="$BENCH_OUT/raw/bus-interactions.txt"
# Opened through the API on one keep-alive connection.
python3 - "${API[0]}" "$token" "$max_count" >"$ids" <<'PY'
import http.client, json, sys
port, token, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
connection = http.client.HTTPConnection("127.0.0.1", port)
for _ in range(count):
    connection.request("POST", "/v1/interactions", body="{}",
                       headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    response = connection.getresponse()
    body = response.read()
    assert response.status == 201, body
    print(json.loads(body)["id"])
PY

sustainable=() saturation=() rows=()
for n in $COUNTS; do
    head -n "$n" "$ids" >"$BENCH_OUT/raw/bus-ids-$n.txt"
    best="none" saturated="not reached (up to ${RATES##* }/s)"
    for rate in $RATES; do
        out="$BENCH_OUT/raw/bus-$n-$rate.txt"
        bench_run "$CLIENT" 127.0.0.1 "${API[0]}" "${STREAM[0]}" "${API[1]}" "${STREAM[1]}" "$token" \
            "$BENCH_OUT/raw/bus-ids-$n.txt" "$rate" "$BENCH_SECONDS" "$INFLIGHT" >"$out" 2>&1 \
            || { cat "$out" >&2; bench_die "the bus client failed"; }
        read -r _ sent acked failed achieved pp50 pp99 sp50 sp99 op50 op99 lost dup closed < <(grep '^RESULT' "$out")
        bench_log "$(printf '%5s interactions %5s/s asked: %5s/s, POST p99 %s ms, same p50/p99 %s/%s ms, other p50/p99 %s/%s ms, lost %s, dup %s, streams closed %s' \
            "$n" "$rate" "$achieved" "$pp99" "$sp50" "$sp99" "$op50" "$op99" "$lost" "$dup" "$closed")"
        rows+=("$(printf '| %s | %s | %s | %s / %s | %s / %s | %s / %s | %s | %s | %s | %s |' "$n" "$rate" "$achieved" \
            "$pp50" "$pp99" "$sp50" "$sp99" "$op50" "$op99" "$lost" "$dup" "$closed" "$failed")")
        if [ "$lost" = 0 ] && [ "$failed" = 0 ] && [ "$closed" = 0 ] && bench_ge "$P99_TARGET" "$op99" && bench_ge "$achieved" "$(awk -v r="$rate" 'BEGIN { print r * 0.9 }')"; then
            best=$rate
        fi
        if ! bench_ge "$achieved" "$(awk -v r="$rate" 'BEGIN { print r * 0.9 }')"; then
            saturated="POSTs at $achieved/s when $rate/s was asked"
            break
        fi
    done
    sustainable+=("$n interactions: $best/s")
    saturation+=("$n interactions: $saturated")
done
{
    echo
    echo "## The bus across replicas"
    echo
    echo "- date: $(bench_date); commit: \`$(bench_commit)\`; machine: $(bench_machine)"
    echo "- two replicas on one database; each interaction followed by one stream on each replica; messages posted"
    echo "  through both in turn, ${BENCH_SECONDS} s per rate, at most $INFLIGHT in flight; latencies from the POST sent"
    echo "  to the stream's event (ms)"
    echo
    echo "| interactions | asked/s | achieved/s | POST p50 / p99 | same replica p50 / p99 | other replica p50 / p99 | lost | dup | streams closed | failed POSTs |"
    echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    printf '%s\n' "${rows[@]}"
    echo
    echo "Sustainable (other replica's p99 <= $P99_TARGET ms, nothing lost): ${sustainable[*]}."
    echo "Saturation: ${saturation[*]}."
} | tee "$BENCH_OUT/bus.md"
