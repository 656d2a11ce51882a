#!/usr/bin/env bash
# Issue 23's check: an allreduce of 1M doubles across 2 threads costs the same from C, Fortran and
# Rust. Builds the three programs (crates/phasers-capi/examples/c/allreduce_1m.c,
# crates/phasers-capi/examples/fortran/allreduce_1m.f90, crates/phasers/examples/allreduce_1m.rs)
# against one release build of the library, then runs them in interleaved rounds (round 1 of every
# program, then round 2, ...) so a machine drifting between fast and slow states hits each alike.
# Prints each program's min and median ns per call over the rounds, and its ratio to Rust's.
#
# Usage: scripts/compare-allreduce-1m.sh [rounds (default 7)] [calls per round (default 50)] [reduction|team]
# Needs gcc; the Fortran row needs gfortran (skipped, with a line saying so, without it).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds="${1:-7}"
calls="${2:-50}"
form="${3:-reduction}"
target="${CARGO_TARGET_DIR:-target}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cargo build --release -q -p phasers-capi
cargo build --release -q -p phasers --example allreduce_1m
lib="$target/release"
include=crates/phasers-capi/include

programs=(rust c)
cp "$target/release/examples/allreduce_1m" "$work/rust"
cc -O2 -std=c99 -I"$include" crates/phasers-capi/examples/c/allreduce_1m.c \
    -L"$lib" -Wl,-rpath,"$PWD/$lib" -lphasers -lpthread -o "$work/c"
# The Fortran program times the reduction form only.
if [ "$form" != reduction ]; then
    echo "compare-allreduce-1m: the Fortran program runs the reduction form only, so no Fortran row" >&2
elif command -v gfortran >/dev/null 2>&1; then
    (cd "$work" && gfortran -O2 -fopenmp -c "$OLDPWD/crates/phasers-capi/fortran/phasers.f90" -o phasers_mod.o)
    gfortran -O2 -fopenmp -I"$work" crates/phasers-capi/examples/fortran/allreduce_1m.f90 \
        "$work/phasers_mod.o" -L"$lib" -Wl,-rpath,"$PWD/$lib" -lphasers -o "$work/fortran"
    programs+=(fortran)
else
    echo "compare-allreduce-1m: no gfortran, so no Fortran row" >&2
fi

for round in $(seq 1 "$rounds"); do
    for program in "${programs[@]}"; do
        out="$("$work/$program" "$calls" "$form")"
        ns="$(printf '%s\n' "$out" | sed -n 's/.* \([0-9][0-9]*\) ns per call.*/\1/p' | tail -n 1)"
        if [ -z "$ns" ]; then
            echo "compare-allreduce-1m: $program printed no time: $out" >&2
            exit 1
        fi
        echo "$ns" >> "$work/$program.ns"
    done
done

median() { sort -n "$1" | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
minimum() { sort -n "$1" | head -n 1; }
rust_min="$(minimum "$work/rust.ns")"
rust_median="$(median "$work/rust.ns")"
echo "allreduce of 2^20 f64 across 2 threads ($form), $rounds interleaved rounds of $calls calls"
echo "CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) cores"
printf '%-8s %14s %14s %12s %12s\n' program "min ns/call" "median ns/call" "min / Rust" "median / Rust"
for program in "${programs[@]}"; do
    min="$(minimum "$work/$program.ns")"
    med="$(median "$work/$program.ns")"
    printf '%-8s %14.0f %14.0f %12.3f %12.3f\n' "$program" "$min" "$med" \
        "$(awk -v a="$min" -v b="$rust_min" 'BEGIN {print a / b}')" \
        "$(awk -v a="$med" -v b="$rust_median" 'BEGIN {print a / b}')"
done
