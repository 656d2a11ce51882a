#!/usr/bin/env bash
# Builds and runs every test of the MPI crate (crates/phasers-mpi): the unit and fault tests, and
# the MPI suite explicitly under `mpirun -np 2` and `mpirun -np 4 --oversubscribe`; the adoption
# paths (an rsmpi program's example, and the C ABI's `mpi` feature from a C program); the MPI
# examples of the READMEs and the guide as programs of their own; the benchmark end to end.
# It ends with one line saying what passed. Lints are not tests: CI's clippy step checks these
# crates (.ci/run), so a newer toolchain's new lint cannot fail a test run.
# Needs Open MPI and libclang: run scripts/setup-mpi.sh first (CI does).
#
# PHASERS_MPI_JOB_TIMEOUT (seconds, default 300) stops a job that hangs; the suite's own
# watchdog aborts a case after 60 s, so this only catches a hang outside the cases.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }
# What passed, for the summary line: each step adds itself once its commands have succeeded.
passed=()

job_timeout="${PHASERS_MPI_JOB_TIMEOUT:-300}"
mpirun_flags=(--bind-to none)
if [ "$(id -u)" -eq 0 ]; then
    mpirun_flags+=(--allow-run-as-root)
fi

step "MPI: build the tests and examples"
# cargo prints "Executable tests/mpi_suite/main.rs (<path>)" for each test binary it built.
build_log="$(cargo test -p phasers-mpi --no-run 2>&1)" || { printf '%s\n' "$build_log"; exit 1; }
printf '%s\n' "$build_log" | grep -v '^ *Compiling' || true
suite="$(printf '%s\n' "$build_log" | sed -n 's|.*Executable tests/mpi_suite/main.rs (\(.*\))$|\1|p' | tail -n 1)"
if [ -z "$suite" ] || [ ! -x "$suite" ]; then
    echo "test-mpi: cannot find the mpi_suite test binary in cargo's output" >&2
    exit 1
fi

step "MPI: unit tests, doc tests and fault tests (no mpirun around them)"
# The adopt_rsmpi example's test runs the whole program as a one-rank world.
cargo test -p phasers-mpi --lib --test mpi_faults --example adopt_rsmpi
cargo test -p phasers-mpi-bench
# One doctest at a time: each is an MPI singleton, and Open MPI 4.1 singletons started together
# race to create their session directory under /tmp ("mkdir /tmp/ompi...: File exists"), which
# fails about one start in 300 with 4 at once. In series the ~100 doctests take under a minute.
cargo test -p phasers-mpi --doc -- --test-threads=1
passed+=("unit, doc and fault tests of phasers-mpi and phasers-mpi-bench")

step "MPI: the suite on 2 ranks: mpirun -np 2"
timeout --kill-after=10 "$job_timeout" mpirun "${mpirun_flags[@]}" -np 2 "$suite"
passed+=("the suite at np 2")

step "MPI: the suite on 4 ranks: mpirun -np 4 --oversubscribe"
timeout --kill-after=10 "$job_timeout" mpirun "${mpirun_flags[@]}" -np 4 --oversubscribe "$suite"
passed+=("the suite at np 4")

step "MPI: an rsmpi program adopts phasers-mpi: examples/adopt_rsmpi.rs on 2 and 4 ranks"
cargo build -p phasers-mpi --example adopt_rsmpi
adopt="${CARGO_TARGET_DIR:-target}/debug/examples/adopt_rsmpi"
timeout --kill-after=10 "$job_timeout" mpirun "${mpirun_flags[@]}" -np 2 "$adopt"
timeout --kill-after=10 "$job_timeout" mpirun "${mpirun_flags[@]}" -np 4 --oversubscribe "$adopt"
passed+=("adopt_rsmpi at np 2 and 4")

step "MPI: the C ABI from a C MPI program (feature mpi): tests/c/mpi_comm.c on 2 and 4 ranks"
# tests/mpi.rs compiles it with mpicc and runs it under mpirun -np 2, then -np 4 --oversubscribe;
# the header tests check phasers.h and phasers_mpi.h against what the library exports. Only these
# tests: the others link the static library, which with this feature also needs MPI's libraries.
# Each mpirun there has its own time limit (tests/mpi.rs).
cargo test -p phasers-capi --features mpi --lib --test mpi --test header --test mpi_install
passed+=("the C ABI from C at np 2 and 4")

step "MPI: the READMEs' and the guide's MPI examples as programs of their own (mpirun -np 2)"
# tests/rust_blocks.rs of the same crate builds the other Rust blocks in plain `cargo test`.
cargo test -p phasers-doc-tests --features mpi --test mpi_rust_blocks
passed+=("the documents' MPI examples at np 2")

step "MPI: the benchmark command runs end to end (mpirun -np 2, short rows, every part and file)"
# Its own crate (crates/phasers-mpi-bench); a debug build: this checks that every part runs, checks
# its results and writes its files, not what it measures.
cargo build -p phasers-mpi-bench
bench_out="$(mktemp -d)"
timeout --kill-after=10 "$job_timeout" mpirun "${mpirun_flags[@]}" -np 2 --bind-to none \
    "${CARGO_TARGET_DIR:-target}/debug/phasers-mpi" bench --time 0.02 --samples 3 --threads 1,2 \
    --json "$bench_out/bench.json" --csv "$bench_out/bench.csv" --plot "$bench_out/bench.svg"
for file in bench.json bench.csv bench.svg; do
    if [ ! -s "$bench_out/$file" ]; then
        echo "test-mpi: phasers-mpi bench wrote no $file" >&2
        exit 1
    fi
done
rm -rf "$bench_out"
passed+=("the benchmark end to end")

summary="$(printf '%s; ' "${passed[@]}")"
printf '\nMPI tests passed: %d steps: %s\n' "${#passed[@]}" "${summary%; }"
