/*
 * The C ABI between the `phasers` benchmark and its native baselines.
 *
 * Rust declares the same functions in crates/phasers-cli/src/native/; change both together.
 * Every function here is callable from C: the C++ ones catch every exception at the boundary,
 * because an exception unwinding into Rust frames is undefined behaviour.
 */
#ifndef PHASERS_BASELINES_H
#define PHASERS_BASELINES_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
/* No exception leaves these functions: noexcept makes a missed one std::terminate, not UB. */
#define PHASERS_NOEXCEPT noexcept
#else
#define PHASERS_NOEXCEPT
#endif

/* Returned in place of an errno value when a C++ exception of no known kind was caught. */
#define PHASERS_NATIVE_EXCEPTION (-1)

/* pthread_barrier_t (glibc). create returns NULL and sets *error to the errno value of
 * pthread_barrier_init or of the allocation; wait returns 0 for both the normal and the
 * serial-thread return, else the error; destroy accepts NULL. */
typedef struct phasers_pthread_barrier phasers_pthread_barrier;
phasers_pthread_barrier *phasers_pthread_barrier_create(uint32_t parties, int *error) PHASERS_NOEXCEPT;
int phasers_pthread_barrier_wait(phasers_pthread_barrier *barrier) PHASERS_NOEXCEPT;
void phasers_pthread_barrier_destroy(phasers_pthread_barrier *barrier) PHASERS_NOEXCEPT;

/* C++20 std::barrier<> (libstdc++), the same contract; wait is arrive_and_wait. */
typedef struct phasers_cxx_barrier phasers_cxx_barrier;
phasers_cxx_barrier *phasers_cxx_barrier_create(int64_t parties, int *error) PHASERS_NOEXCEPT;
int phasers_cxx_barrier_wait(phasers_cxx_barrier *barrier) PHASERS_NOEXCEPT;
void phasers_cxx_barrier_destroy(phasers_cxx_barrier *barrier) PHASERS_NOEXCEPT;

/* What phasers_omp_round reports in `status`; `detail` says more where noted. */
enum {
    PHASERS_OMP_OK = 0,
    PHASERS_OMP_INVALID = 1,         /* threads is 0 or above INT_MAX, or work is unknown */
    PHASERS_OMP_TOO_FEW_THREADS = 2, /* detail: the team size OpenMP gave */
    PHASERS_OMP_AFFINITY_QUERY = 3,  /* detail: errno of sched_getaffinity */
    PHASERS_OMP_AFFINITY_SET = 4,    /* detail: error of pthread_setaffinity_np (the round ran) */
    PHASERS_OMP_STACK = 5,           /* detail: the smallest thread stack, in KiB, too small */
    PHASERS_OMP_NO_MEMORY = 6,       /* detail: ENOMEM */
    PHASERS_OMP_WRONG_COPY = 7,      /* detail: the thread whose copy of a result was wrong */
};

typedef struct {
    uint64_t ran;        /* iterations OpenMP thread 0 ran: all of them unless cut */
    uint64_t elapsed_ns; /* CLOCK_MONOTONIC, fork and join included */
    int64_t sum;         /* PHASERS_OMP_REDUCTION: the reduced value, threads * ran when right */
    int32_t status;
    int32_t detail;
} phasers_omp_result;

/* What each iteration of a round does after (or, for the reduction, inside) the delay. */
enum {
    PHASERS_OMP_LOOP = 0,      /* nothing: EPCC's reference loop */
    PHASERS_OMP_BARRIER = 1,   /* #pragma omp barrier */
    PHASERS_OMP_REDUCTION = 2, /* #pragma omp for reduction(+:sum) over one iteration per thread */
};

/* One EPCC round: `iterations` of (delay, then `work`) on a team of `threads`, timed from before
 * the fork to after the join. A round with a barrier or a reduction is cut once `deadline_ns`
 * (relative to its start) has passed; every thread then stops after the same iteration. `delay`
 * may be NULL. Run one round at a time per process: libgomp gives each calling thread a team of
 * its own, and two teams at once would measure each other. */
void phasers_omp_round(uint32_t threads, uint64_t iterations, void (*delay)(uint64_t),
                       uint64_t delay_arg, int32_t work, bool pin, uint64_t deadline_ns,
                       phasers_omp_result *result) PHASERS_NOEXCEPT;

/* The seed's dynamic-parallelism benchmark (figure 16a): for nth = 2 .. max_threads, one
 * `#pragma omp parallel for num_threads(nth)` region whose nth iterations each run the delay.
 * `ran` is the number of regions (max_threads - 1), `elapsed_ns` the time of all of them;
 * status PHASERS_OMP_TOO_FEW_THREADS (detail: the team size) if a region got a smaller team,
 * PHASERS_OMP_INVALID if max_threads is below 2 or above INT_MAX. The same one-at-a-time rule. */
void phasers_omp_dynamic(uint32_t max_threads, void (*delay)(uint64_t), uint64_t delay_arg,
                         phasers_omp_result *result) PHASERS_NOEXCEPT;

/* What each iteration of phasers_omp_collective_round does (see omp_collectives.c). */
enum {
    PHASERS_OMP_COLL_BARRIER = 1,       /* #pragma omp barrier */
    PHASERS_OMP_COLL_ALLREDUCE_ONE = 2, /* omp for reduction(+:total) of one u64; all read it */
    PHASERS_OMP_COLL_BROADCAST = 3,     /* root copies into a shared buffer, barrier, the others
                                         * copy it out, barrier; the root is the iteration number
                                         * modulo `threads` */
};

/* `iterations` of `work` back to back on a team of `threads`, inside one parallel region, after
 * one untimed iteration whose result is checked in full; every timed iteration's result is checked
 * too (word 0 of a broadcast). `words` is the broadcast's length in u64 (ignored by the
 * others). `ran` is `iterations` and `elapsed_ns` the time thread 0 measured from a barrier
 * before the first timed iteration to a barrier after the last; both are 0 on an error. Status
 * PHASERS_OMP_WRONG_COPY (detail: the first thread with a wrong result), PHASERS_OMP_NO_MEMORY,
 * PHASERS_OMP_TOO_FEW_THREADS, PHASERS_OMP_AFFINITY_QUERY, PHASERS_OMP_AFFINITY_SET (here nothing
 * is timed after it), or PHASERS_OMP_INVALID for a bad thread count, work, or length. `pin` as in
 * phasers_omp_round. One call at a time per process. */
void phasers_omp_collective_round(uint32_t threads, uint64_t iterations, int32_t work,
                                  uint64_t words, bool pin,
                                  phasers_omp_result *result) PHASERS_NOEXCEPT;

/* OpenMP's array reduction, `omp for reduction(+ : out[:len])`, run the way `phasers bench reduce`
 * runs its own rows (see omp_array_reduce.c): iteration 0 is a warm-up whose result is copied to
 * `first_result`; thread 0 ends the row by the same rule as the Rust rows. Stamps are
 * CLOCK_MONOTONIC nanoseconds. */
typedef struct {
    uint32_t threads;
    bool allreduce;      /* every thread copies the sum into an output array of its own */
    bool yield_in_stall; /* stall by yielding between looks at the clock, not by spinning */
    uint64_t len;        /* floats per array, at least 1 */
    /* Iterations the arrays below have room for, the warm-up included: the row never runs more. */
    uint64_t max_iterations;
    /* Measured iterations (after the warm-up) to run at least, unless the budget runs out. */
    uint64_t min_iterations;
    uint64_t min_time_ns; /* measured time to run at least, once min_iterations are done */
    uint64_t budget_ns;   /* measured time after which the row stops, with at least one */
    const uint64_t *stalls_ns; /* [iteration * threads + thread]: the stall before arriving */
    uint64_t *arrive_ns;       /* [iteration * threads + thread]: when it called the reduction */
    uint64_t *return_ns;       /* [iteration * threads + thread]: when it had returned */
    float *first_result;       /* len floats: thread 0's result of the warm-up */
    uint64_t *progress;        /* if not NULL, incremented (atomically) by thread 0 per iteration */
} phasers_omp_array_reduce_args;

/* Runs the row; `result->ran` is the iterations run, the warm-up included. Status
 * PHASERS_OMP_STACK if a thread's stack cannot hold the private copy (see
 * phasers_omp_array_reduce_stack_bytes), PHASERS_OMP_NO_MEMORY, PHASERS_OMP_TOO_FEW_THREADS, or
 * PHASERS_OMP_INVALID for missing arrays, an empty array or a bad thread count. One call at a
 * time per process. */
void phasers_omp_array_reduce(const phasers_omp_array_reduce_args *args,
                              phasers_omp_result *result) PHASERS_NOEXCEPT;

/* The stack each thread of an array reduction of `len` floats needs: GCC puts the private copy of
 * the array on the stack. */
uint64_t phasers_omp_array_reduce_stack_bytes(uint64_t len) PHASERS_NOEXCEPT;

/* Raises the stack size of threads created from now on without an explicit one (libgomp's team
 * threads) to at least `bytes`, through pthread_setattr_default_np; 0 or an errno value. */
int phasers_omp_raise_default_stack(uint64_t bytes) PHASERS_NOEXCEPT;

/* Versions for the report. */
/* "GCC " __VERSION__ of the C compiler. */
const char *phasers_c_compiler_version(void) PHASERS_NOEXCEPT;
/* gnu_get_libc_version(), read at run time. */
const char *phasers_glibc_version(void) PHASERS_NOEXCEPT;
/* _OPENMP, e.g. 201511. */
int64_t phasers_openmp_spec(void) PHASERS_NOEXCEPT;
/* _GLIBCXX_RELEASE, e.g. 12. */
int32_t phasers_libstdcxx_release(void) PHASERS_NOEXCEPT;
/* __GLIBCXX__, the date of the libstdc++ headers, e.g. 20220819. */
int64_t phasers_libstdcxx_date(void) PHASERS_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif
