#!/usr/bin/env bash
# Switchboard's benchmarks, as run by `make bench`.
#
#   bench/run.sh            all benchmarks (http, instructions, post-instructions, post-switches, feeds, webhooks, delivery, bus, reconnect, idle, inbox, console, writes, attachments, audit, retention, fanout, attach, postgres-split)
#   bench/run.sh http       only the named ones; each is bench/NAME.sh and writes bench/out/NAME.md
#
# Builds the raw-C libmicrohttpd baseline, checks the Switchboard release binary is there, runs each
# benchmark and gathers their markdown snippets into bench/out/latest.md, after one table of every benchmark's verdicts
# against its goals (also bench/out/goals.md).
# Settings are environment variables: see bench/README.md and the head of each bench/NAME.sh.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$BENCH_ROOT"

ALL_BENCHES=(http instructions post-instructions async-frames post-switches feeds webhooks delivery bus reconnect idle inbox console writes attachments audit retention fanout attach postgres-split)
benches=("$@")
[ ${#benches[@]} -gt 0 ] || benches=("${ALL_BENCHES[@]}")
for b in "${benches[@]}"; do
    [ -f "$BENCH_DIR/$b.sh" ] || bench_die "unknown benchmark '$b' (known: ${ALL_BENCHES[*]})"
done

bench_init
bench_build_c_baseline

SB_BIN=${SWITCHBOARD_BIN:-$BENCH_ROOT/.build/release/switchboard}
if [ ! -x "$SB_BIN" ]; then
    bench_die "Switchboard binary not found or not executable: $SB_BIN
        build it first (swift build -c release, which 'make bench' does), or set SWITCHBOARD_BIN"
fi

status=0
declare -A rcs
for b in "${benches[@]}"; do
    rm -f "$BENCH_OUT/$b.md"
    rcs[$b]=0
    bench_run bash "$BENCH_DIR/$b.sh" || { rcs[$b]=$?; status=${rcs[$b]}; bench_log "$b exited with status ${rcs[$b]}"; }
done

# Every benchmark's verdict lines (`**PASS**: what`, `FAIL: what`, and `**MEASURED**: what` for a figure with no
# bound of its own), one row each: the goals in one table.
goals="$BENCH_OUT/goals.md"
{
    echo "## Goals"
    echo
    echo "| benchmark | verdict | goal and what was measured |"
    echo "| --- | --- | --- |"
    for b in "${benches[@]}"; do
        if [ ! -f "$BENCH_OUT/$b.md" ]; then
            echo "| $b | did not complete | status ${rcs[$b]} |"
        elif grep -qE '^(\*\*)?(PASS|FAIL|MEASURED)(\*\*)?(:|$)' "$BENCH_OUT/$b.md"; then
            grep -E '^(\*\*)?(PASS|FAIL|MEASURED)(\*\*)?(:|$)' "$BENCH_OUT/$b.md" | sed 's/|/\\|/g' \
                | sed -E 's/^(\*\*)?(PASS|FAIL|MEASURED)(\*\*)?:? ?/| '"$b"' | \2 | /; s/$/ |/'
        else
            echo "| $b | — | no verdict of its own: see its table below |"
        fi
    done
} >"$goals"
cat "$goals" >&2

latest="$BENCH_OUT/latest.md"
{
    echo "# Switchboard benchmarks"
    echo
    echo "$(bench_date), commit \`$(bench_commit)\`"
    echo
    cat "$goals"
    for b in "${benches[@]}"; do
        echo
        if [ -f "$BENCH_OUT/$b.md" ]; then
            cat "$BENCH_OUT/$b.md"
        else
            echo "## $b"
            echo
            echo "**did not complete** (status ${rcs[$b]}; see the output of bench/$b.sh)"
        fi
    done
} >"$latest"
bench_log "wrote $latest"
exit "$status"
