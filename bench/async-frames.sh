#!/usr/bin/env bash
# The async frames of a build, read from its async function pointers (bench/async_frames.py): those a text-message
# POST's task holds at a query's wait, with their sum, and the largest of Switchboard's own modules. A frame is taken
# from the task's allocator in slabs of 984 bytes, and a request's task is new each time: a frame over what is left
# of a slab costs a malloc. A count from the binary alone, with no server and no noise.
#   SWITCHBOARD_BIN (default .build/release/switchboard)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$BENCH_ROOT"

SB_BIN=${SWITCHBOARD_BIN:-$BENCH_ROOT/.build/release/switchboard}
[ -x "$SB_BIN" ] || bench_die "Switchboard binary not found or not executable: $SB_BIN"
bench_init
{
    echo "## Async frames of a message POST (from the binary)"
    echo
    echo "- $(bench_date), commit \`$(bench_commit)\`, \`$SB_BIN\`"
    echo
    python3 -I "$BENCH_DIR/async_frames.py" "$SB_BIN"
} | tee "$BENCH_OUT/async-frames.md"
