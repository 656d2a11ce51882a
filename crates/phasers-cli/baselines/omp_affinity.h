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

#include "baselines.h"

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

/* Reads the calling thread's mask: PHASERS_OMP_OK, or PHASERS_OMP_AFFINITY_QUERY with the errno
 * value in *detail. */
static inline int phasers_read_affinity(phasers_omp_affinity *affinity, int *detail)
{
    if (sched_getaffinity(0, sizeof affinity->allowed, &affinity->allowed) != 0) {
        *detail = errno;
        return PHASERS_OMP_AFFINITY_QUERY;
    }
    affinity->count = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, &affinity->allowed)) {
            affinity->cpus[affinity->count++] = cpu;
        }
    }
    if (affinity->count == 0) {
        *detail = EINVAL;
        return PHASERS_OMP_AFFINITY_QUERY;
    }
    return PHASERS_OMP_OK;
}

/* Sets the mask of the calling OpenMP thread `thread`: one CPU when pinned, the caller's whole
 * mask otherwise. libgomp keeps its pool threads from one region to the next, so a mask set by a
 * pinned round would leak into the next unpinned one: every round sets it. 0 or the error of
 * pthread_setaffinity_np. */
static inline int phasers_place_thread(const phasers_omp_affinity *affinity, int thread, bool pin)
{
    cpu_set_t mask = affinity->allowed;
    if (pin) {
        CPU_ZERO(&mask);
        CPU_SET(affinity->cpus[thread % affinity->count], &mask);
    }
    return pthread_setaffinity_np(pthread_self(), sizeof mask, &mask);
}

/* Gives the calling thread (thread 0 of the round just ended) back the mask it came with. 0 or
 * the error of pthread_setaffinity_np. */
static inline int phasers_restore_affinity(const phasers_omp_affinity *affinity)
{
    return pthread_setaffinity_np(pthread_self(), sizeof affinity->allowed, &affinity->allowed);
}

#endif
