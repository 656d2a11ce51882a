/*
 * Where the OpenMP shims that take `pin` put their threads: OpenMP thread t on the t-th CPU (round
 * robin) of the caller's affinity mask, or, unpinned, anywhere in that mask. Internal to the shims;
 * not part of the ABI in baselines.h.
 */
#ifndef PHASERS_OMP_AFFINITY_H
#define PHASERS_OMP_AFFINITY_H

#ifndef _GNU_SOURCE
#error "define _GNU_SOURCE before any include: cpu_set_t and pthread_setaffinity_np need it"
#endif

#include "omp_common.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>

/* The caller's mask and its CPUs in order. Read before the fork, because the caller becomes
 * OpenMP thread 0, whose mask a pinned round changes (and restores afterwards). */
typedef struct {
    cpu_set_t allowed;
    int cpus[CPU_SETSIZE];
    int count;
} phasers_omp_affinity;

/* Reads the calling thread's mask, the CPUs a call's round may use. False when it cannot be read:
 * the call ends with PHASERS_OMP_AFFINITY_QUERY and the errno value in `result`. */
static inline bool phasers_read_affinity(phasers_omp_affinity *affinity, phasers_omp_result *result)
{
    if (sched_getaffinity(0, sizeof affinity->allowed, &affinity->allowed) != 0) {
        phasers_fail(result, PHASERS_OMP_AFFINITY_QUERY, errno);
        return false;
    }
    affinity->count = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, &affinity->allowed)) {
            affinity->cpus[affinity->count++] = cpu;
        }
    }
    if (affinity->count == 0) {
        phasers_fail(result, PHASERS_OMP_AFFINITY_QUERY, EINVAL);
        return false;
    }
    return true;
}

/* Sets the mask of the calling OpenMP thread `thread`: one CPU when pinned, the caller's whole
 * mask otherwise. libgomp keeps its pool threads from one region to the next, so a mask set by a
 * pinned round would leak into the next unpinned one: every round sets it. A failure is recorded
 * as PHASERS_OMP_AFFINITY_SET with the error of pthread_setaffinity_np; the round still runs. */
static inline void phasers_place_thread(const phasers_omp_affinity *affinity, int thread, bool pin,
                                        atomic_int *status, atomic_int *detail)
{
    cpu_set_t mask = affinity->allowed;
    if (pin) {
        CPU_ZERO(&mask);
        CPU_SET(affinity->cpus[thread % affinity->count], &mask);
    }
    int code = pthread_setaffinity_np(pthread_self(), sizeof mask, &mask);
    if (code != 0) {
        phasers_record_error(status, detail, PHASERS_OMP_AFFINITY_SET, code);
    }
}

/* After a pinned round, gives the calling thread (thread 0 of the round just ended) back the
 * mask it came with; an unpinned round left it as it was. A failure is recorded as
 * PHASERS_OMP_AFFINITY_SET with the error of pthread_setaffinity_np. */
static inline void phasers_restore_affinity(const phasers_omp_affinity *affinity, bool pin,
                                            atomic_int *status, atomic_int *detail)
{
    if (!pin) {
        return;
    }
    int code = pthread_setaffinity_np(pthread_self(), sizeof affinity->allowed, &affinity->allowed);
    if (code != 0) {
        phasers_record_error(status, detail, PHASERS_OMP_AFFINITY_SET, code);
    }
}

#endif
