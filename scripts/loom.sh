#!/usr/bin/env bash
# Runs every loom model of the phasers crate (crates/phasers/tests/loom_*.rs), as CI does.
#
# The models explore every interleaving of the barrier algorithms with at most
# LOOM_MAX_PREEMPTIONS preemptions (2 unless set; a few models cap it lower themselves). They build
# the crate with `--cfg phasers_loom`, which swaps std's atomics for loom's, so they use a target
# directory of their own (target/loom) and never invalidate the normal build. Release mode, with
# debug assertions on so the algorithms' internal checks run under loom too.
#
# Extra arguments go to the test binaries, e.g.:
#   scripts/loom.sh counting::          # only the models whose name contains `counting::`
#   scripts/loom.sh --nocapture         # print how many executions each model explored
set -euo pipefail
cd "$(dirname "$0")/.."

export RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }--cfg phasers_loom"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/loom"
export CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}"

files=(crates/phasers/tests/loom_*.rs)
tests=()
for file in "${files[@]}"; do
    tests+=(--test "$(basename "$file" .rs)")
done

start=$SECONDS
cargo test --release -p phasers "${tests[@]}" -- "$@"
echo "loom models: ${#files[@]} files in $((SECONDS - start)) s (LOOM_MAX_PREEMPTIONS=$LOOM_MAX_PREEMPTIONS)"
