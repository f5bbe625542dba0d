#!/usr/bin/env bash
# Runs docker/nginx.conf in a real nginx (upstreams pointed at closed loopback ports) and checks that nginx's own
# errors are problem+json: 502 when no replica answers, 413 for a body over the limit, 404 for /metrics.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/nginx-site.sh
source scripts/nginx-site.sh
scripts/ensure-deps.sh --build-only nginx-light curl >/dev/null

dir=$(mktemp -d)
pid=""
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
closed=$(free_port)   # nothing listens there: every upstream connection is refused

run_site_nginx "$dir" "$port" "$closed" "$closed"
pid=$nginx_pid
for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done

failures=0
expect() { # expect STATUS DESCRIPTION CURL-ARGS...
    local status=$1 what=$2
    shift 2
    local out
    out=$(curl -s -D "$dir/headers" -o "$dir/body" -w '%{http_code} %{content_type}' "$@" "http://127.0.0.1:$port$path")
    if [ "$out" != "$status application/problem+json" ] || ! python3 -c '
import json, sys
body = json.load(open(sys.argv[1]))
assert body["status"] == int(sys.argv[2]) and body["title"] and body["type"], body' "$dir/body" "$status"; then
        echo "check-nginx: $what: got '$out': $(head -c 300 "$dir/body")" >&2
        failures=$((failures + 1))
    fi
}
path=/v1/feeds/news
expect 502 "no replica" -H 'Authorization: Bearer x'
grep -qi '^Retry-After: 1' "$dir/headers" || { echo "check-nginx: 502 without Retry-After" >&2; failures=$((failures + 1)); }
path=/v1/feeds/news/items
head -c 1100000 /dev/zero | tr '\0' 'a' >"$dir/big"
expect 413 "body over 1 MiB" -X POST -H 'Content-Type: application/json' --data-binary "@$dir/big"
path=/v1/interactions/x/events
expect 502 "no stream listener"
path=/metrics
expect 404 "/metrics from outside"
[ "$failures" -eq 0 ] || exit 1
echo "check-nginx: nginx's own 404, 413 and 502 answers are problem+json"
