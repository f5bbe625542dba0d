#!/usr/bin/env bash
# SSE fan-out against nchan over several runs: bench/sse.sh FANOUT_RUNS times (default 5) back to back, each with
# SSE_SUBSCRIBERS subscribers (10,000) of one interaction and nginx + nchan in the same run, then how many runs met
# each goal: publish → all delivered p99 at or under nchan's p99 (goal: 4 of 5 runs), and attaching every subscriber
# within 1.5× nchan's time (goal: 4 of 5 runs as well). One run cannot tell these apart on a shared machine, so the
# verdict counts runs. Each run also measures the C baseline on libmicrohttpd (bench/c-baseline/sse.c), which
# suspends and resumes each stream as Switchboard does: its columns show how much of the time is libmicrohttpd's own.
# The same-port half of bench/sse.sh is skipped here (SSE_SAME_PORT=0); `make bench-sse` runs it.
#   FANOUT_RUNS (5), FANOUT_NEEDED (4 of 5: the runs that must meet each goal, scaled to FANOUT_RUNS), and what
#   bench/sse.sh takes.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init
RUNS=${FANOUT_RUNS:-5}
NEEDED=${FANOUT_NEEDED:-$(( (RUNS * 4 + 4) / 5 ))}
rows=() p99_met=0 attach_met=0 complete=0
for ((r = 1; r <= RUNS; r++)); do
    rm -f "$BENCH_OUT/raw/sse-figures.txt"
    bench_log "fan-out run $r/$RUNS"
    SSE_SAME_PORT=0 bash "$BENCH_DIR/sse.sh" >"$BENCH_OUT/raw/fanout-r$r.txt" 2>&1 \
        || bench_log "run $r: bench/sse.sh exited with an error (see bench/out/raw/fanout-r$r.txt)"
    [ -f "$BENCH_OUT/raw/sse-figures.txt" ] || { rows+=("| $r | did not complete | | | | | | | |"); continue; }
    read -r p99 n_p99 attach n_attach c_p99 c_attach <"$BENCH_OUT/raw/sse-figures.txt"
    cp "$BENCH_OUT/sse.md" "$BENCH_OUT/raw/fanout-r$r.md"
    [ "$n_p99" != n/a ] || { rows+=("| $r | $p99 ms | n/a | | $c_p99 ms | $attach ms | n/a | | $c_attach ms |"); continue; }
    complete=$((complete + 1))
    p99_ok=no attach_ok=no
    attach_ratio=$(bench_ratio "$attach" "$n_attach")
    if bench_ge "$n_p99" "$p99"; then p99_ok=yes; p99_met=$((p99_met + 1)); fi
    if bench_ge 1.5 "$attach_ratio"; then attach_ok=yes; attach_met=$((attach_met + 1)); fi
    rows+=("| $r | $p99 ms | $n_p99 ms | $p99_ok | $c_p99 ms | $attach ms | $n_attach ms | $attach_ratio ($attach_ok) | $c_attach ms |")
    bench_log "run $r: p99 $p99 ms (nchan $n_p99, C $c_p99), attach $attach ms (nchan $n_attach, C $c_attach)"
done
{
    echo "## SSE fan-out against nchan, $RUNS runs"
    echo
    echo "- $(bench_date), commit \`$(bench_commit)\`, $(bench_machine), load $(bench_load)"
    echo "- each run: \`bench/sse.sh\` with ${SSE_SUBSCRIBERS:-10000} subscribers of one interaction, then nginx + nchan (one worker) and the C baseline on libmicrohttpd with the same client"
    echo
    echo "| run | p99, publish → all delivered | nchan's p99 | at or under nchan's? | C on libmicrohttpd's p99 | attach all | nchan's attach | attach ÷ nchan's (≤ 1.5?) | C's attach |"
    echo "| ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |"
    printf '%s\n' "${rows[@]}"
    echo
    bench_verdict "fan-out p99 at or under nchan's in $p99_met of $RUNS runs (goal: $NEEDED of $RUNS; runs with nchan beside them: $complete)" "$p99_met" "$NEEDED"
    echo
    bench_verdict "attaching every subscriber within 1.5× nchan's time in $attach_met of $RUNS runs (goal: $NEEDED of $RUNS)" "$attach_met" "$NEEDED"
} >"$BENCH_OUT/fanout.md"
cat "$BENCH_OUT/fanout.md" >&2
