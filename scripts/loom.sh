#!/usr/bin/env bash
# Runs every loom model, as CI does: those of the phasers crate (crates/phasers/tests/loom_*.rs),
# then those of phasers-mpi (crates/phasers-mpi/tests/loom_*.rs: the node-shm counters and the
# combined barrier's failure record, whose protocols phasers-mpi factors out of its MPI code).
#
# The models explore every interleaving of the barrier algorithms with at most
# LOOM_MAX_PREEMPTIONS preemptions (2 unless set; a few models cap it lower themselves). They build
# the crates with `--cfg phasers_loom`, which swaps std's atomics for loom's, so they use a target
# directory of their own (target/loom) and never invalidate the normal build. Release mode, with
# debug assertions on so the algorithms' internal checks run under loom too.
#
# Building phasers-mpi needs MPI (scripts/setup-mpi.sh), though its models never call it; where
# no MPI is installed (no `mpicc`), its models are skipped with a note.
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

# `--test` arguments for every loom model file of crate directory $1.
model_tests() {
    local file
    for file in "$1"/tests/loom_*.rs; do
        printf -- '--test\n%s\n' "$(basename "$file" .rs)"
    done
}

start=$SECONDS
mapfile -t tests < <(model_tests crates/phasers)
cargo test --release -p phasers "${tests[@]}" -- "$@"
echo "phasers loom models: $((${#tests[@]} / 2)) files in $((SECONDS - start)) s (LOOM_MAX_PREEMPTIONS=$LOOM_MAX_PREEMPTIONS)"

mpi_start=$SECONDS
if command -v mpicc >/dev/null; then
    mapfile -t tests < <(model_tests crates/phasers-mpi)
    cargo test --release -p phasers-mpi "${tests[@]}" -- "$@"
    echo "phasers-mpi loom models: $((${#tests[@]} / 2)) files in $((SECONDS - mpi_start)) s"
else
    echo "phasers-mpi loom models skipped: no MPI installed (scripts/setup-mpi.sh installs it)"
fi
echo "loom models: $((SECONDS - start)) s in all"
