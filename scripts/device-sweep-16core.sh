#!/usr/bin/env bash
# The 16-core sweep of issue 30, as one prepared script: barrier scaling from 1 to 16 threads,
# phasers, team collectives and array reductions at 16 threads, each written as JSON (and its
# printed tables as text) into "${OUT:-benchmarks/device}". Run it from anywhere; it works from
# the repository root.
#
#   bash scripts/device-sweep-16core.sh            # the sweep (about 5-6 minutes on 16 cores)
#   SMOKE=1 OUT=/tmp/smoke bash scripts/device-sweep-16core.sh
#                                                  # every command line with tiny settings
#                                                  # (1-2 threads, ~0.05 s rows): ~10 s after the
#                                                  # build on a 2-core VM
#
# Settings (environment):
#   OUT          where the 8 result files go (default benchmarks/device). The device tool brings
#                back at most 8 files from its $OUT, so nothing else is written there: the build
#                log and the machine lines go to stdout only.
#   SMOKE=1      tiny settings, to prove the command lines on any machine; file names start with
#                `smoke-` so they are never taken for results.
#   PHASERS_BIN  a prebuilt `phasers` binary (x86-64 Linux, glibc >= the build machine's): skips
#                the packages and the build. Also used when `.device/phasers` exists. A lent
#                machine reaches no package registry (no apt, no crates.io) and may have no Rust
#                toolchain, so build here and carry the binary:
#                    echo /.device/ >> .git/info/exclude; mkdir -p .device
#                    cargo build --release -p phasers-cli && strip -o .device/phasers target/release/phasers
#                and run with carry [".device"]. The binary links libgomp.so.1 and libstdc++.so.6;
#                if the lent machine lacks them, copy them into .device/lib (this script puts a
#                `lib` folder beside the binary on LD_LIBRARY_PATH).
#   CARGO_TARGET_DIR  where cargo builds (default target).
#   LIMIT_BARRIER, LIMIT_PHASER, LIMIT_COLLECTIVES, LIMIT_REDUCE
#                seconds before `timeout` stops one benchmark (defaults 200, 60, 150, 120: 8.8
#                minutes in all, under the device's 10-minute command limit); a stopped or failed
#                benchmark is reported and the others still run.
#
# Runtime, estimated from the defaults of each subcommand (`phasers bench <name> --help`) and
# the row times (`row_s`) of earlier runs in benchmarks/:
#   bench barrier --threads 1,2,4,8,12,16 --rounds 5: 14 rows (7 algorithms, auto and the
#       baselines) of --time 1 s each plus the floor, per thread count; the 16-core run with
#       --rounds 3 spent 85 s in its rows (benchmarks/barrier-16core-scaling.json): ~1.5-2.5 min.
#   bench phaser --threads 16: 7 rows and the floor, --time 1 s each: ~15 s.
#   bench collectives --threads 2,8,16: ~100 rows per member count of --time 0.2 s; 2 and 8
#       members took 39 s of rows on 2 cores (benchmarks/collectives-2core.json): ~1-1.5 min.
#   bench reduce --threads 16: 6 sizes x 4 spreads x 2 modes x 8 contenders, at least 0.05 s
#       each; 16 participants took 24 s of rows on 2 cores (benchmarks/reduce-2core.json): ~0.5-1 min.
# About 4-5.5 minutes of benchmarks, so every subcommand keeps its default --time; add a build
# (~1-2 min on 16 cores) when no binary is carried.
set -euo pipefail
cd "$(dirname "$0")/.."

SMOKE="${SMOKE:-0}"
OUT_DIR="${OUT:-benchmarks/device}"
target_dir="${CARGO_TARGET_DIR:-target}"

step() { printf '\n==> %s\n' "$*"; }

# --- the binary: carried, or built here ---------------------------------------------------------
bin="${PHASERS_BIN:-}"
if [[ -z "$bin" && -x .device/phasers ]]; then
    bin=.device/phasers
fi

if [[ -n "$bin" ]]; then
    step "using the prebuilt binary $bin (no packages, no build)"
    [[ -x "$bin" ]] || { echo "error: PHASERS_BIN=$bin is not an executable file" >&2; exit 1; }
else
    step "system packages"
    # As .ci/run and README.md: gcc and g++ 12+ with OpenMP build the CLI's C/C++ baselines
    # (crates/phasers-cli/build.rs checks them); the Rust toolchain must already be on PATH.
    missing=()
    if ! command -v cc >/dev/null 2>&1 || ! command -v gcc >/dev/null 2>&1 \
        || ! command -v g++ >/dev/null 2>&1; then
        missing+=(build-essential)
    elif ! echo 'int main(void){return 0;}' | gcc -fopenmp -x c - -o /dev/null >/dev/null 2>&1; then
        missing+=(build-essential libgomp1)
    fi
    if [[ "${#missing[@]}" -gt 0 ]]; then
        echo "missing: ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        if ! { apt-get update && apt-get install -y --no-install-recommends "${missing[@]}"; }; then
            echo "error: could not install ${missing[*]} (no package registry here?); build the" \
                "binary elsewhere and pass it as PHASERS_BIN (see the top of this script)" >&2
            exit 1
        fi
    else
        echo "gcc, g++ and OpenMP are installed"
    fi
    if ! command -v cargo >/dev/null 2>&1; then
        echo "error: cargo is missing; build the binary elsewhere and pass it as PHASERS_BIN" \
            "(see the top of this script)" >&2
        exit 1
    fi
    step "cargo build --release -p phasers-cli"
    cargo --version
    cargo build --release -p phasers-cli
    bin="$target_dir/release/phasers"
fi
if [[ -d "$(dirname "$bin")/lib" ]]; then
    export LD_LIBRARY_PATH="$(cd "$(dirname "$bin")/lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
if command -v ldd >/dev/null 2>&1 && ldd "$bin" | grep -q 'not found'; then
    echo "error: $bin needs libraries this machine lacks:" >&2
    ldd "$bin" | grep 'not found' >&2
    exit 1
fi
"$bin" --version

# --- the machine -------------------------------------------------------------------------------
step "machine"
if command -v lscpu >/dev/null 2>&1; then
    lscpu | grep -i '^model name' || true
else
    grep -m1 -i '^model name' /proc/cpuinfo || true
fi
cores="$(nproc)"
echo "nproc: $cores"
if [[ "$SMOKE" != 1 && "$cores" != 16 ]]; then
    echo "warning: this sweep is meant for 16 cores, and this machine has $cores;" \
        "the file names say 16core all the same" >&2
fi
# Overrides that would change what is measured, shown so that a surprising result can be traced.
env | grep -E '^(PHASERS_|OMP_|GOMP_)' || echo "no PHASERS_*, OMP_* or GOMP_* variables set"

# --- the benchmarks ----------------------------------------------------------------------------
mkdir -p "$OUT_DIR"
prefix=""
if [[ "$SMOKE" == 1 ]]; then
    prefix="smoke-"
    # Every command line of the sweep, with 1-2 threads and rows of a few hundredths of a second.
    barrier_threads=1,2
    wide_threads=2
    group_threads=2
    epcc_rounds=1
    epcc_tiny=(--time 0.05 --samples 2)
    collectives_tiny=(--time 0.01 --samples 2 --rounds 1 --words 4,1024 --blocks 1 --sync-words 8)
    reduce_tiny=(--sizes 1000 --spread none,low --min-time 0.001 --min-iterations 2 --max-iterations 5)
else
    barrier_threads=1,2,4,8,12,16
    wide_threads=16
    group_threads=2,8,16
    epcc_rounds=5
    epcc_tiny=()
    collectives_tiny=()
    reduce_tiny=()
fi

failed=()
# run NAME LIMIT_SECONDS ARGS...: runs `phasers ARGS --json OUT/NAME.json`, its output also in
# OUT/NAME.txt; a failure or a stop at the limit is recorded, and the next benchmark runs.
run() {
    local name="$1" limit="$2"
    shift 2
    local json="$OUT_DIR/$prefix$name.json" text="$OUT_DIR/$prefix$name.txt"
    step "phasers $* --json $json   (limit ${limit}s)"
    local start=$SECONDS
    if timeout "$limit" "$bin" "$@" --json "$json" 2>&1 | tee "$text"; then
        echo "--> $name: done in $((SECONDS - start)) s"
    else
        echo "--> $name: FAILED or stopped after $((SECONDS - start)) s" >&2
        failed+=("$name")
    fi
}

sweep_start=$SECONDS
run barrier-16core-scaling "${LIMIT_BARRIER:-200}" \
    bench barrier --threads "$barrier_threads" --rounds "$epcc_rounds" "${epcc_tiny[@]}"
run phaser-16core "${LIMIT_PHASER:-60}" \
    bench phaser --threads "$wide_threads" --rounds "$epcc_rounds" "${epcc_tiny[@]}"
run collectives-16core "${LIMIT_COLLECTIVES:-150}" \
    bench collectives --threads "$group_threads" "${collectives_tiny[@]}"
run reduce-16core-n16 "${LIMIT_REDUCE:-120}" \
    bench reduce --threads "$wide_threads" "${reduce_tiny[@]}"

step "done in $((SECONDS - sweep_start)) s; files in $OUT_DIR"
ls -l "$OUT_DIR"
if [[ "${#failed[@]}" -gt 0 ]]; then
    echo "failed: ${failed[*]}" >&2
    exit 1
fi
