#!/usr/bin/env bash
# Runs docker/nginx.conf in a real nginx in front of a real Switchboard (BIN, on DATABASE_URL) and checks how event
# streams travel: to the replica's main port, in a fresh upstream connection each, so the front hands a stream with
# a short head to the streams' daemon and one with a long head (3.5 KB, more than that daemon's 4 KiB per connection
# would take) to the API's daemon; both are served and get a message posted through nginx.
#   scripts/check-nginx-streams.sh BIN   (DATABASE_URL set)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/nginx-site.sh
source scripts/nginx-site.sh
bin=$1
: "${DATABASE_URL:?DATABASE_URL must be set}"
scripts/ensure-deps.sh --build-only nginx-light curl >/dev/null

dir=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "check-nginx-streams: $*" >&2; [ -f "$dir/server.log" ] && tail -5 "$dir/server.log" >&2; exit 1; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port) stream_port=$(free_port) front=$(free_port)
admin=check-nginx-admin-token-0123456789 metrics=check-nginx-metrics-token-0123456789

env PORT="$port" STREAM_PORT="$stream_port" HOST=127.0.0.1 DATABASE_URL="$DATABASE_URL" LOG_LEVEL=error RATE_LIMIT_PER_MINUTE=0 \
    METRICS_TOKEN=$metrics SWITCHBOARD_ADMIN_TOKEN=$admin "$bin" >"$dir/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 300); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$port/readyz" >/dev/null || fail "Switchboard did not become ready"

run_site_nginx "$dir" "$front" "$port" "$stream_port"
pids+=("$nginx_pid")
base="http://127.0.0.1:$front"
for _ in $(seq 1 50); do curl -sf -o /dev/null "$base/healthz" && break; sleep 0.1; done

json() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
api_key=$(curl -sf -X POST "$base/v1/admin/tenants" -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' \
    -d '{"name":"nginx"}' | json api_key)
token=$(curl -sf -X POST "$base/v1/sessions" -H "Authorization: Bearer $api_key" -H 'Content-Type: application/json' \
    -d '{"user_id":"c","role":"customer"}' | json token)
id=$(curl -sf -X POST "$base/v1/interactions" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -d '{"subject":"through nginx"}' | json id)
padding=$(python3 -c "print('p' * 3500)")
curl -s -N -m 20 "$base/v1/interactions/$id/events" -H "Authorization: Bearer $token" >"$dir/short.txt" &
pids+=($!)
curl -s -N -m 20 "$base/v1/interactions/$id/events" -H "Authorization: Bearer $token" -H "X-Padding: $padding" \
    >"$dir/long.txt" &
pids+=($!)
gauge() { curl -sf "http://127.0.0.1:$port/metrics" -H "Authorization: Bearer $metrics" | awk -v d="$1" \
    '$1 == "switchboard_http_open_streams{daemon=\"" d "\"}" { print $2 }'; }
for _ in $(seq 1 100); do [ "$(gauge main)" = 1 ] && [ "$(gauge streams)" = 1 ] && break; sleep 0.1; done
[ "$(gauge streams)" = 1 ] || fail "the short-headed stream is not in the streams' daemon (streams: $(gauge streams))"
[ "$(gauge main)" = 1 ] || fail "the long-headed stream is not in the API's daemon (main: $(gauge main))"
curl -sf -o /dev/null -X POST "$base/v1/interactions/$id/messages" -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' -d '{"text":"hello through nginx"}' || fail "posting through nginx failed"
for name in short long; do
    for _ in $(seq 1 100); do grep -q 'hello through nginx' "$dir/$name.txt" && break; sleep 0.1; done
    grep -q 'hello through nginx' "$dir/$name.txt" || fail "the $name-headed stream did not get the message"
done
echo "check-nginx-streams: through nginx, a short-headed stream is held by the streams' daemon, a 3.5 KB head by the API's; both got the message"
