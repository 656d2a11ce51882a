/*
 * OpenMP's array reduction, `reduction(+ : out[:len])` (libgomp), measured the way `phasers bench
 * reduce` measures its own rows: every thread has its own input array, stalls for the time the
 * Rust side drew for it in that iteration, stamps its arrival, reduces, stamps its return. One
 * parallel region holds every iteration, so no fork or join is timed; a barrier between
 * iterations, outside the timed part, starts them together.
 *
 * The reduction is a worksharing loop of one iteration per thread (schedule(static, 1) gives
 * thread t iteration t) whose body adds the thread's array into `out`: each thread gets a private
 * copy of out[:len] set to 0, adds its array into it, and the copies are combined into `out` at
 * the end of the loop, whose implied barrier makes the sum visible to all. That is the code an
 * OpenMP programmer writes for "sum these per-thread arrays", and what it costs is libgomp's:
 * GCC places each private copy on the thread's stack and combines the copies one thread at a time
 * under a global lock.
 *
 * `reduce`: the result is `out`, ready when the loop's barrier releases thread 0 (the root).
 * `allreduce`: each thread then copies `out` into its own output array, as a participant of an
 * allreduce receives its own copy of the sum.
 */
#define _GNU_SOURCE
#include "omp_common.h"

#include <errno.h>
#include <limits.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* Stack a thread needs besides the private copy of the array: libgomp's frames and ours. */
#define STACK_MARGIN_BYTES (1u << 20)

/* Element `index` of thread `rank`'s input: the same expression as `data::value` in
 * src/reduce_bench/data.rs, so the Rust side can check the sum. Every value is a multiple of 1/8
 * below 8, so every order of additions gives the same exact sum. */
static inline float phasers_reduce_value(uint64_t rank, uint64_t index)
{
    return (float)((rank * 131u + index * 7u) % 61u) / 8.0f;
}

/* Waits `ns` nanoseconds, spinning on the clock, or yielding between looks when the team
 * outnumbers the cores (see src/reduce_bench/stall.rs for why). */
static void stall(uint64_t ns, bool yield)
{
    if (ns == 0) {
        return;
    }
    uint64_t deadline = phasers_now_ns() + ns;
    while (phasers_now_ns() < deadline) {
        if (yield) {
            sched_yield();
        }
    }
}

/* Adds every thread's `input` into `out`: the array reduction itself, an orphaned worksharing
 * loop that binds to the caller's parallel region. It is a function of its own because GCC
 * allocates the private copy of out[:len] on the stack and frees it only when the function that
 * allocated it returns: inlined into the loop over iterations, the copies would pile up, one per
 * iteration, until the stack overflowed. */
static __attribute__((noinline)) void reduce_into(float *out, const float *input, uint64_t len,
                                                  int team)
{
#pragma omp for reduction(+ : out[:len]) schedule(static, 1)
    for (int k = 0; k < team; k++) {
        for (uint64_t i = 0; i < len; i++) {
            out[i] += input[i];
        }
    }
}

/* The calling thread's stack size, 0 if it cannot be read. */
static size_t own_stack_size(void)
{
    pthread_attr_t attr;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstacksize(&attr, &size) != 0) {
            size = 0;
        }
        pthread_attr_destroy(&attr);
    }
    return size;
}

uint64_t phasers_omp_array_reduce_stack_bytes(uint64_t len)
{
    return len * sizeof(float) + STACK_MARGIN_BYTES;
}

int phasers_omp_raise_default_stack(uint64_t bytes)
{
    pthread_attr_t attr;
    int code = pthread_getattr_default_np(&attr);
    if (code != 0) {
        return code;
    }
    size_t current = 0;
    code = pthread_attr_getstacksize(&attr, &current);
    if (code == 0 && current < bytes) {
        code = pthread_attr_setstacksize(&attr, (size_t)bytes);
        if (code == 0) {
            code = pthread_setattr_default_np(&attr);
        }
    }
    pthread_attr_destroy(&attr);
    return code;
}

void phasers_omp_array_reduce(const phasers_omp_array_reduce_args *args, phasers_omp_result *result)
{
    /* An empty array is refused: GCC's array-section reduction over out[:0] of a NULL `out`
     * faults, and a row of nothing measures nothing. */
    bool valid = args != NULL && args->threads > 0 && args->threads <= INT_MAX &&
                 args->max_iterations > 0 && args->stalls_ns != NULL && args->arrive_ns != NULL &&
                 args->return_ns != NULL && args->len > 0 && args->first_result != NULL &&
                 args->len <= SIZE_MAX / sizeof(float);
    if (!phasers_open_result(result, valid)) {
        return;
    }
    const uint64_t threads = args->threads;
    const uint64_t len = args->len;
    const size_t bytes = (size_t)len * sizeof(float);
    const uint64_t needed_stack = phasers_omp_array_reduce_stack_bytes(len);

    /* The shared result. The reduction adds into it, so it is cleared before every iteration,
     * outside the timed part. */
    float *out = len > 0 ? malloc(bytes) : NULL;
    if (len > 0 && out == NULL) {
        phasers_fail(result, PHASERS_OMP_NO_MEMORY, ENOMEM);
        return;
    }

    /* A dynamic team could be smaller than asked for; a row must have the threads it names. */
    omp_set_dynamic(0);
    atomic_int status = PHASERS_OMP_OK;
    atomic_int detail = 0;
    /* Written by thread 0 before a barrier, read by every thread after it: the row is over. */
    atomic_bool stop = false;
    uint64_t ran = 0;
    uint64_t start = phasers_now_ns();

#pragma omp parallel num_threads(threads)
    {
        const int thread = omp_get_thread_num();
        const int team = omp_get_num_threads();
        const uint64_t rank = (uint64_t)thread;
        float *input = NULL;
        float *own = NULL;
        if (phasers_team_is_full(thread, team, threads, &status, &detail)) {
            /* GCC puts the private copy of out[:len] on the stack: check there is room, rather
             * than find out by a segmentation fault. */
            size_t stack = own_stack_size();
            if (stack < needed_stack) {
                int kib = stack / 1024 > INT_MAX ? INT_MAX : (int)(stack / 1024);
                phasers_record_error(&status, &detail, PHASERS_OMP_STACK, kib);
            }
            if (len > 0) {
                input = phasers_thread_alloc(bytes, &status, &detail);
                own = args->allreduce ? phasers_thread_alloc(bytes, &status, &detail) : NULL;
            }
            for (uint64_t i = 0; input != NULL && i < len; i++) {
                input[i] = phasers_reduce_value(rank, i);
            }
        }
#pragma omp barrier
        if (phasers_team_ready(team, threads, &status)) {
            uint64_t measure_start = 0;
            uint64_t iteration = 0;
            for (;; iteration++) {
                /* Every thread is done with the previous iteration's `out` (its copy, its
                 * check) before thread 0 clears it. */
#pragma omp barrier
                if (atomic_load_explicit(&stop, memory_order_relaxed)) {
                    break;
                }
                if (thread == 0 && len > 0) {
                    memset(out, 0, bytes);
                }
                /* `out` is clear before anyone adds into it; the iteration starts together. */
#pragma omp barrier
                uint64_t slot = iteration * threads + rank;
                stall(args->stalls_ns[slot], args->yield_in_stall);
                args->arrive_ns[slot] = phasers_now_ns();
                reduce_into(out, input, len, team);
                if (args->allreduce && len > 0) {
                    memcpy(own, out, bytes);
                }
                args->return_ns[slot] = phasers_now_ns();

                if (iteration == 0) {
                    /* The warm-up's result, checked on the Rust side (thread 0's) and here (every
                     * other allreduce copy against the shared sum). */
                    if (thread == 0 && len > 0) {
                        memcpy(args->first_result, args->allreduce ? own : out, bytes);
                    }
                    if (args->allreduce && len > 0 && memcmp(own, out, bytes) != 0) {
                        phasers_record_error(&status, &detail, PHASERS_OMP_WRONG_COPY, thread);
                    }
                }
                if (thread == 0) {
                    if (args->progress != NULL) {
                        /* A plain counter that the Rust side reads as an AtomicU64. */
                        __atomic_fetch_add(args->progress, 1, __ATOMIC_RELAXED);
                    }
                    uint64_t now = phasers_now_ns();
                    if (iteration == 0) {
                        measure_start = now;
                    } else {
                        /* The same rule as the Rust rows' StopRule. */
                        uint64_t elapsed = now - measure_start;
                        bool done = iteration + 1 >= args->max_iterations ||
                                    (iteration >= args->min_iterations &&
                                     elapsed >= args->min_time_ns) ||
                                    elapsed >= args->budget_ns;
                        if (done) {
                            /* Read after the next barrier. No thread can read it earlier: every
                             * thread read `stop` for this iteration before the barrier that
                             * follows the clearing of `out`, which thread 0 has since passed. */
                            atomic_store_explicit(&stop, true, memory_order_relaxed);
                        }
                    }
                }
            }
            if (thread == 0) {
                ran = iteration;
            }
        }
        free(input);
        free(own);
    }

    result->ran = ran;
    result->elapsed_ns = phasers_now_ns() - start;
    result->status = atomic_load(&status);
    result->detail = atomic_load(&detail);
    free(out);
}
