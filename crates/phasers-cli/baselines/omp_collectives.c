/*
 * OpenMP counterparts of the team collectives `phasers bench collectives` measures, written the
 * way an OpenMP program writes them with libgomp:
 *
 * - barrier: `#pragma omp barrier`;
 * - allreduce of one u64 that every thread uses (the MPP suite's `mpp_accum_long`): a worksharing
 *   loop of one iteration per thread with `reduction(+ : total)`, whose implied barrier publishes
 *   the sum, then every thread reads it. Two shared totals take turns, so a thread that is already
 *   adding into the next iteration's total cannot change the one a slower thread is still
 *   reading: the loop's barrier of iteration j + 1 orders every read of iteration j before the
 *   next write into its total, in iteration j + 2. The totals are never reset (that would cost a
 *   barrier); each thread subtracts what it read from the same total two iterations before.
 * - broadcast through a shared buffer: the root copies its buffer into the shared one, a barrier,
 *   every other thread copies it out, a barrier (the next root must not overwrite the shared
 *   buffer while a thread is still copying it out).
 *
 * Unlike phasers_omp_round, which times EPCC rounds fork and join included, a call runs its
 * iterations back to back inside one parallel region, after one untimed iteration whose result is
 * checked in full, and thread 0 times them from a barrier to a closing barrier: the way the Rust
 * rows are timed, between two meetings of the threads.
 */
#define _GNU_SOURCE
#include "omp_affinity.h"
#include "omp_common.h"

#include <limits.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Word `index` of thread `rank`'s broadcast buffer before the first broadcast: different for every
 * thread, so a broadcast that delivered another thread's data, or none, shows in the check. */
static inline uint64_t initial_word(uint64_t rank, uint64_t index)
{
    return (rank << 40) ^ (index * 0x9E3779B97F4A7C15u);
}

/* What the root of iteration j writes into word 0 before it broadcasts, so every receiver can
 * check with one load that it got this iteration's data and not an earlier one's. Far from the
 * initial words of any plausible rank. */
static inline uint64_t stamp(uint64_t j)
{
    return UINT64_MAX - j;
}

/* What thread `rank` contributes to the allreduce of iteration j. */
static inline uint64_t contribution(uint64_t rank, uint64_t j)
{
    return rank + 1 + j;
}

/* The sum of every thread's contribution in iteration j. */
static inline uint64_t expected_sum(uint64_t threads, uint64_t j)
{
    return threads * (threads + 1) / 2 + threads * j;
}

/* Whether this thread's copy of the broadcast of iteration j is right: word 0 only in the timed
 * iterations, every word in the untimed first one. */
static inline bool broadcast_is_right(const uint64_t *own, uint64_t words, uint64_t j, bool full)
{
    if (own[0] != stamp(j)) {
        return false;
    }
    if (full) {
        for (uint64_t i = 1; i < words; i++) {
            if (own[i] != initial_word(0, i)) {
                return false;
            }
        }
    }
    return true;
}

void phasers_omp_collective_round(uint32_t threads, uint64_t iterations, int32_t work,
                                  uint64_t words, bool pin, phasers_omp_result *result)
{
    bool valid =
        threads > 0 && threads <= INT_MAX && iterations < UINT64_MAX &&
        (work == PHASERS_OMP_COLL_BARRIER || work == PHASERS_OMP_COLL_ALLREDUCE_ONE ||
         work == PHASERS_OMP_COLL_BROADCAST) &&
        (work != PHASERS_OMP_COLL_BROADCAST || (words > 0 && words <= SIZE_MAX / sizeof(uint64_t)));
    phasers_omp_affinity affinity;
    if (!phasers_open_result(result, valid) || !phasers_read_affinity(&affinity, result)) {
        return;
    }
    const size_t bytes = work == PHASERS_OMP_COLL_BROADCAST ? (size_t)words * sizeof(uint64_t) : 0;
    uint64_t *shared = NULL;
    if (bytes > 0) {
        shared = malloc(bytes);
        if (shared == NULL) {
            phasers_fail(result, PHASERS_OMP_NO_MEMORY, ENOMEM);
            return;
        }
    }

    /* A dynamic team could be smaller than asked for; a row must have the threads it names. */
    omp_set_dynamic(0);
    atomic_int status = PHASERS_OMP_OK;
    atomic_int detail = 0;
    /* The allreduce's two totals, shared; see the top of the file. */
    uint64_t total_even = 0;
    uint64_t total_odd = 0;
    uint64_t start = 0;
    uint64_t end = 0;

#pragma omp parallel num_threads(threads)
    {
        const int thread = omp_get_thread_num();
        const int team = omp_get_num_threads();
        const uint64_t rank = (uint64_t)thread;
        uint64_t *own = NULL;
        if (phasers_team_is_full(thread, team, threads, &status, &detail)) {
            phasers_place_thread(&affinity, thread, pin, &status, &detail);
            own = bytes > 0 ? phasers_thread_alloc(bytes, &status, &detail) : NULL;
            for (uint64_t i = 0; own != NULL && i < words; i++) {
                own[i] = initial_word(rank, i);
            }
        }
#pragma omp barrier
        if (phasers_team_ready(team, threads, &status)) {
            /* What this thread last read from each total. */
            uint64_t seen[2] = {0, 0};
            /* Iteration 0 is the untimed one; the timed ones are 1 to `iterations`. */
            for (uint64_t j = 0; j <= iterations; j++) {
                if (j == 1) {
#pragma omp barrier
                    if (thread == 0) {
                        start = phasers_now_ns();
                    }
                }
                if (work == PHASERS_OMP_COLL_BARRIER) {
#pragma omp barrier
                } else if (work == PHASERS_OMP_COLL_ALLREDUCE_ONE) {
                    uint64_t mine = contribution(rank, j);
                    uint64_t now;
                    /* Every thread takes the same branch: it depends on j alone. */
                    if ((j & 1) == 0) {
#pragma omp for reduction(+ : total_even) schedule(static, 1)
                        for (int k = 0; k < team; k++) {
                            total_even += mine;
                        }
                        now = total_even;
                    } else {
#pragma omp for reduction(+ : total_odd) schedule(static, 1)
                        for (int k = 0; k < team; k++) {
                            total_odd += mine;
                        }
                        now = total_odd;
                    }
                    if (now - seen[j & 1] != expected_sum(threads, j)) {
                        phasers_record_error(&status, &detail, PHASERS_OMP_WRONG_COPY, thread);
                    }
                    seen[j & 1] = now;
                } else {
                    const int root = (int)(j % threads);
                    if (thread == root) {
                        own[0] = stamp(j);
                        memcpy(shared, own, bytes);
                    }
#pragma omp barrier
                    if (thread != root) {
                        memcpy(own, shared, bytes);
                        if (!broadcast_is_right(own, words, j, j == 0)) {
                            phasers_record_error(&status, &detail, PHASERS_OMP_WRONG_COPY,
                                                 thread);
                        }
                    }
#pragma omp barrier
                }
            }
            /* The closing meeting: every thread has finished its last iteration. */
#pragma omp barrier
            if (thread == 0) {
                end = phasers_now_ns();
                if (iterations == 0) {
                    start = end;
                }
            }
        }
        free(own);
    }

    /* Thread 0 is the caller's own thread: give it back the mask it came with. */
    phasers_restore_affinity(&affinity, pin, &status, &detail);
    free(shared);
    result->status = atomic_load(&status);
    result->detail = atomic_load(&detail);
    if (result->status == PHASERS_OMP_OK) {
        result->ran = iterations;
        result->elapsed_ns = end - start;
    }
}
