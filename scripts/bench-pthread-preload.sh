#!/usr/bin/env bash
# Cost per barrier of pthread_barrier_wait, glibc's versus phasers' through LD_PRELOAD.
#
# Builds libphasers_pthread.so (release), compiles crates/phasers-pthread/bench/barrier_cost.c
# with the system `cc`, and runs that one binary with and without
# LD_PRELOAD=libphasers_pthread.so, REPS times for each thread count. Prints a table of the min
# and median ns per barrier and writes them, with every sample, to benchmarks/pthread-preload.json
# (or $OUT).
#
# Settings (environment):
#   THREADS="2 8"        thread counts
#   ITERATIONS=200000    timed back-to-back waits per run (plus a tenth as warm-up)
#   REPS=7               runs per (thread count, implementation)
#   OUT=benchmarks/pthread-preload.json
#   PHASERS_BARRIER_ALGORITHM, PHASERS_WAIT, ...   passed on to the preload as usual
#   CARGO_TARGET_DIR     where cargo builds (default: target)
#
# Timings on a shared or small machine are noisy: compare the two implementations within one run.
set -euo pipefail
cd "$(dirname "$0")/.."

THREADS="${THREADS:-2 8}"
ITERATIONS="${ITERATIONS:-200000}"
REPS="${REPS:-7}"
OUT="${OUT:-benchmarks/pthread-preload.json}"
target_dir="${CARGO_TARGET_DIR:-target}"

cargo build --release -p phasers-pthread
library="$(cd "$target_dir/release" && pwd)/libphasers_pthread.so"
[[ -f "$library" ]] || { echo "error: $library was not built" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
program="$work/barrier_cost"
cc -O2 -std=c11 -Wall -Wextra -pthread crates/phasers-pthread/bench/barrier_cost.c -o "$program" -ldl

# One run: prints its ns per barrier, after checking which library served the waits.
run_once() { # threads, implementation (system|phasers)
    local line
    if [[ "$2" == phasers ]]; then
        line="$(env LD_PRELOAD="$library" "$program" "$1" "$ITERATIONS")"
        [[ "$line" == *"implementation=$library"* ]] || { echo "error: not preloaded: $line" >&2; exit 1; }
    else
        line="$(env -u LD_PRELOAD "$program" "$1" "$ITERATIONS")"
        [[ "$line" != *libphasers_pthread* ]] || { echo "error: preloaded: $line" >&2; exit 1; }
    fi
    line="${line#*ns_per_barrier=}"
    echo "${line%% *}"
}

# min and median of the numbers on stdin, one per line.
min_median() {
    sort -g | awk '{ v[NR] = $1 } END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%s %.1f\n", v[1], m }'
}

algorithm="${PHASERS_BARRIER_ALGORITHM:-auto}"
echo "pthread_barrier_wait cost per barrier: $ITERATIONS back-to-back waits, $REPS runs each, $(nproc) cores"
echo "phasers algorithm: $algorithm; library: $library"
printf '\n%-8s  %-8s  %12s  %12s\n' threads impl "min ns" "median ns"
results=""
for threads in $THREADS; do
    declare -A median=()
    for impl in system phasers; do
        samples=()
        for ((rep = 0; rep < REPS; rep++)); do
            samples+=("$(run_once "$threads" "$impl")")
        done
        read -r min med < <(printf '%s\n' "${samples[@]}" | min_median)
        median[$impl]=$med
        printf '%-8s  %-8s  %12s  %12s\n' "$threads" "$impl" "$min" "$med"
        list="$(IFS=,; echo "${samples[*]}")"
        results+="${results:+,
}    {\"threads\": $threads, \"implementation\": \"$impl\", \"min_ns\": $min, \"median_ns\": $med, \"samples_ns\": [$list]}"
    done
    ratio="$(awk -v p="${median[phasers]}" -v s="${median[system]}" 'BEGIN { printf "%.2f", p / s }')"
    printf '%-8s  phasers/system median: %s\n' "$threads" "$ratio"
    unset median
done

mkdir -p "$(dirname "$OUT")"
cat > "$OUT" <<JSON
{
  "benchmark": "pthread_barrier_wait cost per barrier, glibc vs LD_PRELOAD=libphasers_pthread.so",
  "program": "crates/phasers-pthread/bench/barrier_cost.c",
  "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "commit": "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)",
  "machine": {"cores": $(nproc), "kernel": "$(uname -sr)", "cpu": "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null | tr -d '"')"},
  "iterations": $ITERATIONS,
  "repetitions": $REPS,
  "phasers_algorithm": "$algorithm",
  "results": [
$results
  ]
}
JSON
echo
echo "wrote $OUT"
