/*
 * What the OpenMP shims share: the clock their rounds are timed with, and how the first error of
 * a team is kept. Internal to the shims; not part of the ABI in baselines.h.
 */
#ifndef PHASERS_OMP_COMMON_H
#define PHASERS_OMP_COMMON_H

#include "baselines.h"

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t phasers_now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* A result that says nothing ran yet, and no error. */
static inline void phasers_clear_result(phasers_omp_result *result)
{
    result->ran = 0;
    result->elapsed_ns = 0;
    result->sum = 0;
    result->status = PHASERS_OMP_OK;
    result->detail = 0;
}

/* The first error wins; the round still runs, so every thread meets the same barriers. */
static inline void phasers_record_error(atomic_int *status, atomic_int *detail, int code, int value)
{
    int expected = PHASERS_OMP_OK;
    if (atomic_compare_exchange_strong(status, &expected, code)) {
        atomic_store(detail, value);
    }
}

#endif
