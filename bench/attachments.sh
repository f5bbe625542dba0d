#!/usr/bin/env bash
# Attachments: uploads and downloads of 1 MB and 10 MB files, and what an attachment adds to a message POST.
#   - upload: ATTACH_UPLOADS (8) uploads of each size, 4 at a time (curl), MB/s and CPU per MB of Switchboard and
#     Postgres;
#   - download: `wrk -t2 -c8` on GET /v1/attachments/{id} beside nginx serving the same bytes from a file
#     (sendfile, one worker): MB/s and their ratio;
#   - API requests (GET an interaction, wrk -t2 -c8) with 20 slow uploads in flight (64 KB a second each) beside the
#     same without: their p99 and its ratio (goal ≤ 1.5);
#   - the message path: POSTs with one (1 KB) attachment each beside plain POSTs, wrk -t2 -c16: POST/s and Switchboard
#     CPU per POST.
#   SWITCHBOARD_BIN, DATABASE_URL as for http.sh; BENCH_SECONDS (5), BENCH_ROUNDS (3)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init
bench_need_switchboard_and_database
ADMIN=bench-admin-token-0123456789
UPLOADS=${ATTACH_UPLOADS:-8}
port=""
bench_pick_port port 18960
bench_start_server switchboard "http://127.0.0.1:$port/readyz" -- env PORT="$port" STREAM_PORT=off HOST=127.0.0.1 \
    DATABASE_URL="$DATABASE_URL" LOG_LEVEL=error RATE_LIMIT_PER_MINUTE=0 SWITCHBOARD_ADMIN_TOKEN=$ADMIN \
    ATTACHMENT_UPLOADS_PER_MINUTE=1000000 ATTACHMENT_MAX_BYTES=$((11 << 20)) "$SB_BIN"
sb_pid=${BENCH_PIDS[-1]}
url="http://127.0.0.1:$port"
json() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
key=$(curl -sf -X POST "$url/v1/admin/tenants" -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
    -d '{"name":"Attachments"}' | json '["api_key"]')
session() { curl -sf -X POST "$url/v1/sessions" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
    -d "{\"user_id\":\"$1\",\"role\":\"$2\",\"ttl_seconds\":86400}" | json '["token"]'; }
customer=$(session customer-1 customer)
agent=$(session agent-1 agent)
interaction=$(curl -sf -X POST "$url/v1/interactions" -H "Authorization: Bearer $customer" \
    -H 'Content-Type: application/json' -d '{"subject":"files"}' | json '["id"]')

files="$BENCH_OUT/attachments"
mkdir -p "$files"
for size in 1 10; do  # MB of text (valid UTF-8: every byte is checked, as a photo's containers are parsed)
    python3 -c "import sys; sys.stdout.write(('x' * 63 + '\n') * ($size * 1048576 // 64))" >"$files/$size.txt"
done

upload() {  # upload FILE: prints the attachment id
    curl -sf -X POST "$url/v1/interactions/$interaction/attachments" -H "Authorization: Bearer $customer" \
        -H 'Content-Type: text/plain' --data-binary @"$1" | json '["id"]'
}

rows=()
declare -A sample
for size in 1 10; do
    for ((r = 1; r <= BENCH_ROUNDS; r++)); do
        sb_before=$(bench_pid_cpu_ms "$sb_pid") pg_before=$(bench_cpu_ms postgres)
        started=$(date +%s%N)
        ids=$(for ((n = 0; n < UPLOADS; n++)); do echo "$files/$size.txt"; done \
            | xargs -P 4 -I{} sh -c "curl -sf -o /dev/null -w '%{http_code}\n' -X POST '$url/v1/interactions/$interaction/attachments' \
                 -H 'Authorization: Bearer $customer' -H 'Content-Type: text/plain' --data-binary @{}")
        elapsed_ms=$(( ($(date +%s%N) - started) / 1000000 ))
        sb_ms=$(( $(bench_pid_cpu_ms "$sb_pid") - sb_before )) pg_ms=$(( $(bench_cpu_ms postgres) - pg_before ))
        ok=$(grep -c '^201$' <<<"$ids" || true)
        [ "$ok" = "$UPLOADS" ] || bench_die "uploads of $size MB: $ok of $UPLOADS answered 201"
        mb=$(( size * UPLOADS ))
        rows+=("| upload, $size MB × $UPLOADS (4 at a time) | $r | $(( mb * 1000 * 10 / elapsed_ms / 10 )).$(( mb * 1000 * 10 / elapsed_ms % 10 )) MB/s | | $(( sb_ms / mb )) | $(( pg_ms / mb )) |")
        bench_log "upload $size MB, round $r: $(( mb * 1000 / elapsed_ms )) MB/s, Switchboard $(( sb_ms / mb )) ms/MB, Postgres $(( pg_ms / mb )) ms/MB"
    done
    sample[$size]=$(upload "$files/$size.txt")
    # What is downloaded is what was uploaded (text passes through unchanged).
    cmp -s <(curl -sf "$url/v1/attachments/${sample[$size]}" -H "Authorization: Bearer $customer") "$files/$size.txt" \
        || bench_die "the $size MB download differs from the upload"
done

# nginx serving the same files from disk: the reference for downloads.
nginx_url=""
if scripts/ensure-deps.sh nginx; then
    nginx_port=""
    bench_pick_port nginx_port 18965
    dir="$BENCH_OUT/nginx-files"
    mkdir -p "$dir/logs"
    cat >"$dir/nginx.conf" <<NGINX
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 1024; use epoll; }
http {
    access_log off;
    sendfile on;
    client_body_temp_path $dir/body;
    server {
        listen 127.0.0.1:$nginx_port;
        location = /healthz { return 200 'ok'; }
        location /files/ { alias $files/; }
    }
}
NGINX
    bench_start_server nginx "http://127.0.0.1:$nginx_port/healthz" -- nginx -p "$dir" -c "$dir/nginx.conf"
    nginx_url="http://127.0.0.1:$nginx_port"
fi

download_mb_s() {  # download_mb_s RAW SIZE_MB: MB/s from a wrk report
    awk -v size="$2" '/Requests\/sec/ { printf "%.1f", $2 * size }' "$1"
}
for size in 1 10; do
    for ((r = 1; r <= BENCH_ROUNDS; r++)); do
        raw="$BENCH_OUT/raw/attachments-download-$size-r$r.txt"
        sb_before=$(bench_pid_cpu_ms "$sb_pid") pg_before=$(bench_cpu_ms postgres)
        bench_run wrk -t2 -c8 -d"${BENCH_SECONDS}s" -H "Authorization: Bearer $customer" \
            "$url/v1/attachments/${sample[$size]}" >"$raw" 2>&1
        sb_ms=$(( $(bench_pid_cpu_ms "$sb_pid") - sb_before )) pg_ms=$(( $(bench_cpu_ms postgres) - pg_before ))
        requests=$(awk '/requests in/ { print $1 }' "$raw")
        [ "${requests:-0}" -gt 0 ] || bench_die "no download completed: $(cat "$raw")"
        sb_rate=$(download_mb_s "$raw" "$size")
        ngx_rate=n/a ratio=n/a
        if [ -n "$nginx_url" ]; then
            nraw="$BENCH_OUT/raw/attachments-nginx-$size-r$r.txt"
            bench_run wrk -t2 -c8 -d"${BENCH_SECONDS}s" "$nginx_url/files/$size.txt" >"$nraw" 2>&1
            ngx_rate=$(download_mb_s "$nraw" "$size")
            ratio=$(python3 -c "print(f'{$sb_rate / $ngx_rate:.2f}')")
        fi
        mb=$(( requests * size ))
        rows+=("| download, $size MB (wrk -c8) | $r | $sb_rate MB/s | nginx $ngx_rate MB/s → **$ratio** | $(( sb_ms / mb )) | $(( pg_ms / mb )) |")
        bench_log "download $size MB, round $r: $sb_rate MB/s, nginx $ngx_rate MB/s, ratio $ratio"
    done
done

# API requests with 20 slow uploads in flight (64 KB a second each, as a phone on a poor network sends) beside the
# same requests without: p99 of GET /v1/interactions/{id}, `wrk -t2 -c8`, rounds alternating.
slow_seconds=$(( BENCH_SECONDS + 4 ))
api_p99() {  # api_p99 RAW: p99 in ms from a wrk --latency report
    awk '$1 == "99%" { v = $2; if (v ~ /us$/) { sub(/us$/, "", v); v /= 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v) }
                       else if (v ~ /s$/) { sub(/s$/, "", v); v *= 1000 }; printf "%.2f", v }' "$1"
}
for ((r = 1; r <= BENCH_ROUNDS; r++)); do
    quiet_raw="$BENCH_OUT/raw/attachments-api-quiet-r$r.txt"
    bench_run wrk -t2 -c8 -d"${BENCH_SECONDS}s" --latency -H "Authorization: Bearer $agent" \
        "$url/v1/interactions/$interaction" >"$quiet_raw" 2>&1
    slow_out="$BENCH_OUT/raw/attachments-slow-r$r.txt"
    python3 -I "$BENCH_DIR/attachments_client.py" slow "$url" "$interaction" "$customer" 20 "$slow_seconds" >"$slow_out" &
    slow_pid=$!
    sleep 2  # every upload's head is in and its body under way
    busy_raw="$BENCH_OUT/raw/attachments-api-slow-r$r.txt"
    bench_run wrk -t2 -c8 -d"${BENCH_SECONDS}s" --latency -H "Authorization: Bearer $agent" \
        "$url/v1/interactions/$interaction" >"$busy_raw" 2>&1
    wait "$slow_pid"
    [ "$(cat "$slow_out")" = 20 ] || bench_die "slow uploads: $(cat "$slow_out") of 20 answered 201"
    quiet=$(api_p99 "$quiet_raw") busy=$(api_p99 "$busy_raw")
    ratio=$(python3 -c "print(f'{$busy / $quiet:.2f}')")
    rows+=("| API p99 with 20 slow uploads in flight (GET interaction, wrk -c8) | $r | $busy ms | without: $quiet ms → **$ratio** (goal ≤ 1.5) | | |")
    bench_log "API p99 with slow uploads, round $r: $busy ms against $quiet ms without ($ratio)"
done

# The message path: plain POSTs beside POSTs each carrying one unused 1 KB upload.
head -c 1024 "$files/1.txt" >"$files/small.txt"
pool="$BENCH_OUT/attachments/ids.txt"
: >"$pool"
bench_log "uploading small files for the message path"
python3 -I "$BENCH_DIR/attachments_client.py" many "$url" "$interaction" "$agent" "$files/small.txt" 10000 >"$pool"
echo "$interaction" >"$files/interaction.txt"
kinds=(plain attachment)
if [ "$(wc -l <"$pool")" -lt 1000 ]; then
    bench_log "note: the message path is not measured (the small uploads it needs did not come back)"
    kinds=()
fi
for kind in ${kinds[@]+"${kinds[@]}"}; do
    sb_before=$(bench_pid_cpu_ms "$sb_pid") pg_before=$(bench_cpu_ms postgres)
    raw="$BENCH_OUT/raw/attachments-messages-$kind.txt"
    ATTACH_IDS=$pool ATTACH_KIND=$kind WRITES_IDS="$files/interaction.txt" WRITES_TOKEN=$agent \
        bench_run wrk -t2 -c16 -d"${BENCH_SECONDS}s" --latency -s "$BENCH_DIR/attachments.lua" "$url" >"$raw" 2>&1
    sb_ms=$(( $(bench_pid_cpu_ms "$sb_pid") - sb_before )) pg_ms=$(( $(bench_cpu_ms postgres) - pg_before ))
    requests=$(awk '/requests in/ { print $1 }' "$raw")
    non2xx=$(awk '/Non-2xx/ { print $NF }' "$raw")
    rps=$(awk '/Requests\/sec/ { printf "%d", $2 }' "$raw")
    p99=$(awk '$1 == "99%" { print $2 }' "$raw")
    rows+=("| message POST, $kind (wrk -c16) | 1 | $rps POST/s, p99 $p99, non-2xx ${non2xx:-0} | | $(( sb_ms * 1000 / requests )) µs/POST | $(( pg_ms * 1000 / requests )) µs/POST |")
    bench_log "messages ($kind): $rps POST/s, Switchboard $(( sb_ms * 1000 / requests )) µs, Postgres $(( pg_ms * 1000 / requests )) µs per POST"
done

out="$BENCH_OUT/attachments.md"
{
    echo "## Attachments: uploads, downloads beside nginx, and the message path"
    echo
    echo "- $(bench_date), commit \`$(bench_commit)\`, $(bench_machine), load $(bench_load)"
    echo "- text/plain files (every byte checked as UTF-8, as photos' containers are parsed); downloads and nginx with \`wrk -t2 -c8 -d${BENCH_SECONDS}s\`"
    echo
    echo "| what | round | Switchboard | reference | Switchboard CPU ms/MB | Postgres CPU ms/MB |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: |"
    printf '%s\n' "${rows[@]}"
} >"$out"
cat "$out" >&2
