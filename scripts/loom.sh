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
# Every model is a test of its own, and one model's search runs on one core, so the script builds
# every model file first and then runs the models themselves LOOM_JOBS at a time (the number of
# cores unless set), each test in a process of its own, from all files at once: `cargo test` would
# run the files one after another, and a file whose longest model runs alone at its end leaves the
# other cores idle. The longest models start first (see `FIRST` below). Each model prints one line
# when it ends (its time and name); a failing model's whole output follows its line.
#
# Extra arguments go to the test binaries, e.g.:
#   scripts/loom.sh counting::          # only the models whose name contains `counting::`
#   scripts/loom.sh --nocapture         # print how many executions each model explored, and in how long
set -euo pipefail
cd "$(dirname "$0")/.."

# One model, run by the pool below: `--one BINARY TEST EXTRA_ARGS...`.
if [ "${1-}" = "--one" ]; then
    binary=$2 test=$3
    shift 3
    log=$(mktemp)
    start=$EPOCHREALTIME
    status=0
    "$binary" "$@" --exact "$test" --test-threads=1 >"$log" 2>&1 || status=$?
    seconds=$(awk -v start="$start" -v end="$EPOCHREALTIME" 'BEGIN { printf "%6.1f", end - start }')
    if [ "$status" -eq 0 ]; then
        echo "ok     ${seconds} s  $(basename "$binary" | sed 's/-[0-9a-f]*$//') $test"
        # With --nocapture: what the model printed (how many executions it explored).
        grep -v -e '^$' -e '^ok$' -e '^running 1 test' -e '^test .* \.\.\. \(ok\)\?$' -e '^test result: ' "$log" ||
            true
    else
        echo "FAILED ${seconds} s  $(basename "$binary" | sed 's/-[0-9a-f]*$//') $test (exit $status):"
        cat "$log"
    fi
    rm -f "$log"
    exit "$status"
fi

export RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }--cfg phasers_loom"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/loom"
export CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true
# Debug assertions in the workspace's crates only: those of loom, generator and the other
# dependencies check those crates' own internals, not the algorithms, and with them on every model
# ran about 7% longer (19.5 s against 18.0 s for loom_episodes counting::three_parties_three_threads,
# three runs each on the 2-core Xeon). A `package."*"` override applies to every non-member.
profile_override='profile.release.package."*".debug-assertions=false'
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}"
jobs="${LOOM_JOBS:-$(nproc)}"
self="$PWD/scripts/loom.sh"

# The models that take 25 s or more on a 2-core Intel Xeon VM (the seconds in the comments: the
# longer of two runs of this script alone, as CI ran it before it started the models beside other
# steps): started first, longest first, so that no long one starts last while the other core
# idles. Only an order: a model missing from this list still runs, and a name that no longer exists
# is ignored. Update it from the times each model prints in a run of this script alone (in CI's
# log the times include what the steps beside it took; see .ci/run). It lists phasers-mpi's
# models too: CI lost about a minute when loom_combined_failure's longest model, missing from the
# list, started last and ran alone.
FIRST=(
    # 72-81 s in CI, 166-209 s on a busier machine: first, as the one most likely to be longest.
    loom_phaser_last_leave/the_last_leave_completes_its_phase_then_terminates_tree # 81
    loom_combined_failure/three_threads_one_dropped                                # 130
    loom_leave/counting::three_threads                                             # 90
    loom_break/counting_dropped_three_threads                                      # 76
    loom_phaser/join_while_gathering::tree                                         # 67
    # 5 s until its wait-only consumer moved to the release word with the 64-bit phaser word.
    loom_phaser_last_leave/the_last_leave_completes_its_phase_then_terminates_flat # 56
    # 64 s in CI since the waker lists were sharded (a lock and atomics more per release).
    loom_async/tasks_and_a_thread_tree                                             # 64
    loom_team/word_allreduce_three_members_near_and_far_cells                      # 54
    loom_reduce/dynamic_pairs::two_parties_root_1_reduce_twice                     # 49
    loom_break/tournament_loser_dropped_three_threads                              # 49
    loom_team/three_member_barriers                                                # 47
    loom_any_thread/two_parties_three_threads_tournament                           # 45
    loom_reduce/mismatch::static_tree_three_parties_late_length                    # 44
    loom_wait_path/three_parties_counting                                          # 38
    loom_direct_meeting/three_members_two_waiting_on_the_direct_path               # 34
    loom_leave/sense_reversing::three_threads                                      # 33
    loom_episodes/sense_reversing::three_parties_three_threads                     # 32
    loom_break/mcs_tree_root_dropped_three_threads                                 # 28
)

# `--test` arguments for every loom model file of the crate directories given.
model_tests() {
    local dir file
    for dir in "$@"; do
        for file in "$dir"/tests/loom_*.rs; do
            printf -- '--test\n%s\n' "$(basename "$file" .rs)"
        done
    done
}

# The crates whose models run, and their directories. phasers-mpi only with MPI installed.
packages=(-p phasers)
dirs=(crates/phasers)
if command -v mpicc >/dev/null; then
    packages+=(-p phasers-mpi)
    dirs+=(crates/phasers-mpi)
else
    echo "phasers-mpi loom models skipped: no MPI installed (scripts/setup-mpi.sh installs it)"
fi

# One cargo invocation builds every model file of both crates: two in a row (phasers', then
# phasers-mpi's) left a core idle while each one's last crates compiled and linked, and CI's
# separate builds took 78 + 52 s. Cargo accepts a `--test` name that only one of the packages has.
start=$SECONDS
mapfile -t tests < <(model_tests "${dirs[@]}")
# Through a file, not a pipe into mapfile: a failed build must stop the script, not leave it
# running whatever binaries were listed.
build_json=$(mktemp)
trap 'rm -f "$build_json"' EXIT
cargo test --release --config "$profile_override" "${packages[@]}" "${tests[@]}" --no-run --message-format=json-render-diagnostics >"$build_json"
mapfile -t binaries < <(sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' "$build_json")
echo "loom models: ${#binaries[@]} files built in $((SECONDS - start)) s"

# Every model as `BINARY<TAB>TEST`, the longest first (FIRST), then the others file by file.
models=()
for binary in "${binaries[@]}"; do
    file=$(basename "$binary" | sed 's/-[0-9a-f]*$//')
    while IFS= read -r test; do
        models+=("$file/$test"$'\t'"$binary"$'\t'"$test")
    done < <("$binary" --list --format=terse "$@" | sed -n 's/: test$//p')
done
ordered=()
for first in "${FIRST[@]}"; do
    for model in "${models[@]}"; do
        [ "${model%%$'\t'*}" = "$first" ] && ordered+=("${model#*$'\t'}")
    done
done
for model in "${models[@]}"; do
    listed=false
    for first in "${FIRST[@]}"; do
        [ "${model%%$'\t'*}" = "$first" ] && listed=true
    done
    "$listed" || ordered+=("${model#*$'\t'}")
done

run_start=$SECONDS
echo "loom models: running ${#ordered[@]} models, $jobs at a time (LOOM_MAX_PREEMPTIONS=$LOOM_MAX_PREEMPTIONS)"
status=0
printf '%s\n' "${ordered[@]}" |
    xargs -d '\n' -P "$jobs" -I '{}' bash -c 'IFS=$'"'\t'"' read -r binary test <<<"$1"; shift; exec bash "$0" --one "$binary" "$test" "$@"' "$self" '{}' "$@" ||
    status=$?
echo "loom models: ${#ordered[@]} models run in $((SECONDS - run_start)) s, $((SECONDS - start)) s in all with the builds"
if [ "$status" -ne 0 ]; then
    echo "loom models: some models FAILED (see FAILED above)" >&2
    exit 1
fi
