#!/usr/bin/env bash
# The first hour with phasers, as its docs tell a newcomer to spend it: every command line the
# README, docs/guide.md and the crates' READMEs print for a reader to type, run exactly as printed
# (crates/doc-tests/tests/shell_commands.rs checks that each listed line stands here verbatim),
# from a fresh clone, with HOME a scratch folder so "$HOME/.local" is a private prefix.
#
# Usage: scripts/walkthrough.sh [--here] [--ci]
#   (none)  clone this checkout's HEAD into a scratch folder and walk through it there
#   --here  walk through this checkout (CI's checkout is a fresh clone already)
#   --ci    --here, leaving out what .ci/run runs itself (`cargo test`, with the C ABI README's
#           test, and scripts/test-mpi.sh)
#           and the whole MPI benchmark (minutes; scripts/test-mpi.sh runs it with short rows)
# Needs what scripts/setup-mpi.sh and .ci/run install (a C, C++ and Fortran compiler, cmake,
# pkg-config); runs setup-mpi.sh itself. Exits non-zero at the first step that fails.
set -euo pipefail

here=0
ci=0
for arg in "$@"; do
    case "$arg" in
        --here) here=1 ;;
        --ci) here=1; ci=1 ;;
        -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "walkthrough: unknown option $arg (see --help)" >&2; exit 2 ;;
    esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if [ "$here" = 1 ]; then
    cd "$root"
else
    git clone -q "$root" "$scratch/phasers"
    cd "$scratch/phasers"
fi
# The docs' paths (target/release/...) are the default target folder's.
unset CARGO_TARGET_DIR
# The toolchain stays where it is; everything the docs put under HOME goes to the scratch folder.
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
export HOME="$scratch/home"
mkdir -p "$HOME"

step() { printf '\n==> walkthrough: %s\n' "$*"; }
skipped() { printf '\n==> walkthrough: %s\n    skipped: %s\n' "$1" "$2"; }
# Open MPI refuses root unless told; the docs say "as root, add --allow-run-as-root".
as_root=()
if [ "$(id -u)" = 0 ]; then as_root=(--allow-run-as-root); fi

# README: "Run it"
step 'cargo run --release'
cargo run --release | tee "$scratch/quick.txt"
python3 - "$scratch/quick.txt" <<'EOF'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
wide = [line for line in lines if len(line) > 100]
assert not wide, f"{len(wide)} line(s) over 100 columns, the first: {wide[0]!r}"
assert any(line.startswith("verdict on ") for line in lines), "the quick suite ends with no verdict"
print(f"walkthrough: the quick suite printed {len(lines)} lines, none over 100 columns, and its verdict")
EOF

if [ "$ci" = 1 ]; then
    skipped 'cargo test' '.ci/run runs it'
else
    step 'cargo test'
    cargo test
fi

# examples/README.md: seed 000's dynamic team as async tasks (issue 36), exactly as printed
step 'cargo run --release -p phasers-apps --example async_phased'
cargo run --release -p phasers-apps --example async_phased

# crates/phasers-capi/README.md: its C, C++ and Fortran lines, each block exactly as printed, into
# a scratch prefix, with every program built run (the test says which block it runs).
# Under --ci this is a second run of a test `cargo test` ran: the same build, and the test makes its
# own scratch HOME either way.
if [ "$ci" = 1 ]; then
    skipped 'cargo test -p phasers-capi --test readme' '.ci/run runs it (in `cargo test`)'
else
    step 'cargo test -p phasers-capi --test readme'
    cargo test -p phasers-capi --test readme
fi

# docs/guide.md, "From C and C++"; prog.c and prog.cpp are the C ABI's example programs.
step 'scripts/install-capi.sh "$HOME/.local"'
scripts/install-capi.sh "$HOME/.local"
export PKG_CONFIG_PATH="$HOME/.local/lib/pkgconfig"
cp crates/phasers-capi/examples/c/barrier.c "$scratch/prog.c"
cp crates/phasers-capi/examples/cxx/team.cpp "$scratch/prog.cpp"
(
    cd "$scratch"
    step 'cc  prog.c   $(pkg-config --cflags --libs phasers) -lpthread -Wl,-rpath,"$HOME/.local/lib"'
    cc  prog.c   $(pkg-config --cflags --libs phasers) -lpthread -Wl,-rpath,"$HOME/.local/lib"
    ./a.out
    step 'c++ prog.cpp $(pkg-config --cflags --libs phasers) -lpthread -Wl,-rpath,"$HOME/.local/lib"'
    c++ prog.cpp $(pkg-config --cflags --libs phasers) -lpthread -Wl,-rpath,"$HOME/.local/lib"
    ./a.out
)

# docs/guide.md, "pthread_barrier_t without recompiling"; ./program is the preload's own test
# program, which checks the barrier invariant through <pthread.h> alone.
step 'cargo build --release -p phasers-pthread'
cargo build --release -p phasers-pthread
cc -O2 -pthread crates/phasers-pthread/tests/c/barrier_invariant.c -o program -ldl
step 'LD_PRELOAD=$PWD/target/release/libphasers_pthread.so ./program'
LD_PRELOAD=$PWD/target/release/libphasers_pthread.so ./program
step 'PHASERS_BARRIER_ALGORITHM=ticket LD_PRELOAD=$PWD/target/release/libphasers_pthread.so ./program'
PHASERS_BARRIER_ALGORITHM=ticket LD_PRELOAD=$PWD/target/release/libphasers_pthread.so ./program
rm -f program

# README and docs/guide.md, "Across processes"; the guide prints the setup line with sudo, which
# a root shell (CI's) does not have or need.
if [ "$(id -u)" = 0 ] && ! command -v sudo >/dev/null 2>&1; then
    step 'sudo bash scripts/setup-mpi.sh (as root, without sudo)'
    bash scripts/setup-mpi.sh
else
    step 'sudo bash scripts/setup-mpi.sh'
    sudo bash scripts/setup-mpi.sh
fi
if [ "$ci" = 1 ]; then
    skipped 'bash scripts/test-mpi.sh' '.ci/run runs it'
else
    step 'bash scripts/test-mpi.sh'
    bash scripts/test-mpi.sh
fi
step 'cargo build --release -p phasers-mpi-bench'
cargo build --release -p phasers-mpi-bench
if [ "$ci" = 1 ]; then
    skipped 'mpirun -np 2 --bind-to none target/release/phasers-mpi bench' \
        'minutes of measuring; scripts/test-mpi.sh runs it with short rows'
else
    step 'mpirun -np 2 --bind-to none target/release/phasers-mpi bench'
    mpirun -np 2 --bind-to none "${as_root[@]}" target/release/phasers-mpi bench
fi
step 'scripts/install-capi.sh --mpi "$HOME/.local"'
scripts/install-capi.sh --mpi "$HOME/.local"

# docs/guide.md and crates/phasers-mpi/README.md: adopting phasers-mpi in an rsmpi program, alone
# and under mpirun.
step 'cargo run -p phasers-mpi --example adopt_rsmpi'
cargo run -p phasers-mpi --example adopt_rsmpi
step 'mpirun -np 2 --bind-to none target/debug/examples/adopt_rsmpi'
mpirun -np 2 --bind-to none "${as_root[@]}" target/debug/examples/adopt_rsmpi

printf '\nwalkthrough: passed (%s)\n' "$([ "$ci" = 1 ] && echo 'CI: cargo test, test-mpi.sh and the MPI benchmark left to .ci/run' || echo 'every step')"
