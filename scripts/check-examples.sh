#!/usr/bin/env bash
# Fails when a public item of `phasers` or `phasers-mpi` has no example in its docs (issue 22:
# every public item carries a doctest that asserts something).
#
# It asks rustdoc for its JSON description of each crate (an unstable rustdoc output, reached on the
# stable toolchain with RUSTC_BOOTSTRAP=1, which only this command's rustdoc sees) and hands it to
# scripts/check-examples.py, which walks the public API as users reach it and lists every type,
# function, method, constant and trait without a code block.
#
# phasers-mpi needs Open MPI (scripts/setup-mpi.sh); without mpicc only `phasers` is checked, and
# the script says so.
set -euo pipefail
cd "$(dirname "$0")/.."

crates=(phasers)
if command -v mpicc >/dev/null 2>&1; then
    crates+=(phasers-mpi)
else
    echo "check-examples: no mpicc, so phasers-mpi is not checked (run scripts/setup-mpi.sh)" >&2
fi

target="${CARGO_TARGET_DIR:-target}"
jsons=()
for crate in "${crates[@]}"; do
    RUSTC_BOOTSTRAP=1 cargo rustdoc -q -p "$crate" -- -Z unstable-options --output-format json
    jsons+=("$target/doc/${crate//-/_}.json")
done
python3 scripts/check-examples.py "${jsons[@]}"
