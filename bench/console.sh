#!/usr/bin/env bash
# The agent console's first load: every file a browser fetches to show `/console/` (the page and the modules and
# stylesheet it names), as served, with and without gzip (libmicrohttpd sends them as they are; a proxy in front may
# compress). Target: at most 150 KB transferred.
#   SWITCHBOARD_BIN, DATABASE_URL as for http.sh
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init
bench_need_switchboard_and_database
port=""
bench_pick_port port 18890
bench_start_server switchboard "http://127.0.0.1:$port/readyz" -- env PORT="$port" STREAM_PORT=off HOST=127.0.0.1 \
    DATABASE_URL="$DATABASE_URL" LOG_LEVEL=error "$SB_BIN"
base="http://127.0.0.1:$port/console/"
files=(index.html)
page=$(curl -sf "$base")
# The files the page names (modules, stylesheet), then what the modules import, transitively.
queue=($(grep -oE '(src|href)="[a-z.-]+\.(js|css)"' <<<"$page" | sed -E 's/.*"([^"]+)"/\1/' || true))
while [ ${#queue[@]} -gt 0 ]; do
    name=${queue[0]}
    queue=("${queue[@]:1}")
    [[ " ${files[*]} " == *" $name "* ]] && continue
    files+=("$name")
    if [[ $name == *.js ]]; then
        queue+=($(curl -sf "$base$name" | grep -oE "(from |new SharedWorker\\()\"(\\./)?[a-z.-]+\\.js\"" | sed -E 's/.*"\.?\/?([^"]+)"/\1/' || true))
    fi
done
total=0 gzipped=0 rows=()
for name in "${files[@]}"; do
    bytes=$(curl -sf "$base${name/index.html/}" | wc -c)
    packed=$(curl -sf "$base${name/index.html/}" | gzip -9 | wc -c)
    total=$((total + bytes)) gzipped=$((gzipped + packed))
    rows+=("| \`$name\` | $bytes | $packed |")
done
verdict=PASS
[ "$total" -le $((150 * 1024)) ] || verdict=FAIL
out="$BENCH_OUT/console.md"
{
    echo "## The agent console's first load"
    echo
    echo "- $(bench_date), commit \`$(bench_commit)\`: every file a browser fetches for \`/console/\`, as served"
    echo
    echo "| file | bytes | gzip -9 |"
    echo "| --- | ---: | ---: |"
    printf '%s\n' "${rows[@]}"
    echo "| **total** | **$total** | $gzipped |"
    echo
    echo "**$verdict**: a first load transfers $total bytes (target ≤ $((150 * 1024)))"
} >"$out"
cat "$out" >&2
[ "$verdict" = PASS ]
