/*
 * What the OpenMP shims share: the clock their rounds are timed with, how a call opens and fails
 * its result, and how the threads of a team record the first error and agree whether to run.
 * Every shim goes through these, so the same mistake reads the same from Rust whichever shim it
 * reached. Internal to the shims; not part of the ABI in baselines.h.
 */
#ifndef PHASERS_OMP_COMMON_H
#define PHASERS_OMP_COMMON_H

#include "baselines.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t phasers_now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* Ends a call before any thread starts: nothing ran, and the result says `code` with `detail`. */
static inline void phasers_fail(phasers_omp_result *result, int code, int detail)
{
    result->status = code;
    result->detail = detail;
}

/* Opens a call's result: nothing ran yet, no error. False when the call must return at once: there
 * is no result to write to, or its arguments are not `valid` (the result says PHASERS_OMP_INVALID).
 * `valid` must not read through a pointer it has not checked. */
static inline bool phasers_open_result(phasers_omp_result *result, bool valid)
{
    if (result == NULL) {
        return false;
    }
    result->ran = 0;
    result->elapsed_ns = 0;
    result->sum = 0;
    result->status = PHASERS_OMP_OK;
    result->detail = 0;
    if (!valid) {
        result->status = PHASERS_OMP_INVALID;
        return false;
    }
    return true;
}

/* The first error wins; the round still runs, so every thread meets the same barriers. */
static inline void phasers_record_error(atomic_int *status, atomic_int *detail, int code, int value)
{
    int expected = PHASERS_OMP_OK;
    if (atomic_compare_exchange_strong(status, &expected, code)) {
        atomic_store(detail, value);
    }
}

/* Whether OpenMP gave the region the `threads` asked for; if not, thread 0 records the size it
 * got. Every thread sees the same team size, so either all of them run the round or none does. */
static inline bool phasers_team_is_full(int thread, int team, uint32_t threads, atomic_int *status,
                                        atomic_int *detail)
{
    if (team == (int)threads) {
        return true;
    }
    if (thread == 0) {
        phasers_record_error(status, detail, PHASERS_OMP_TOO_FEW_THREADS, team);
    }
    return false;
}

/* A buffer of `bytes` for the calling thread alone, or NULL with PHASERS_OMP_NO_MEMORY recorded.
 * Each thread allocates and fills its own, so that its pages are placed near it. */
static inline void *phasers_thread_alloc(size_t bytes, atomic_int *status, atomic_int *detail)
{
    void *buffer = malloc(bytes);
    if (buffer == NULL) {
        phasers_record_error(status, detail, PHASERS_OMP_NO_MEMORY, ENOMEM);
    }
    return buffer;
}

/* Whether the team may run its iterations: it is full, and no thread recorded an error while it
 * set up. Call it after the barrier that ends the set-up, so that every thread reads the same
 * status, gets the same answer and meets the same barriers. */
static inline bool phasers_team_ready(int team, uint32_t threads, atomic_int *status)
{
    return team == (int)threads && atomic_load(status) == PHASERS_OMP_OK;
}

#endif
