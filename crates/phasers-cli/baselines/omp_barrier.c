/*
 * OpenMP's `#pragma omp barrier` and `#pragma omp for reduction` (libgomp), measured the way
 * EPCC syncbench measures them.
 *
 * Both only exist inside a parallel region, among OpenMP's own threads, so the whole timed loop
 * runs here rather than in Rust. One call is one EPCC round: the fork and join of the region are
 * inside the time, as in syncbench, and the reference round (PHASERS_OMP_LOOP) pays them too, so
 * they cancel when the reference is subtracted.
 */
#define _GNU_SOURCE
#include "omp_affinity.h"
#include "omp_common.h"

#include <limits.h>
#include <omp.h>
#include <stdatomic.h>

/* How often thread 0 means to read the clock. A read costs tens of nanoseconds, so at this
 * period it is invisible in the round, and a cut round overruns its deadline by about this much
 * (plus the iteration in flight). */
#define CHECK_PERIOD_NS 1000000.0

/* The iteration after which every thread stops, 0 while the round runs to the end. Thread 0 is
 * its only writer and writes it once; on a line of its own so the loads every iteration stay hits
 * in each core's cache. */
typedef struct {
    _Alignas(128) atomic_uint_fast64_t stop;
} cut_t;

/* Thread 0's private bookkeeping for reading the clock rarely but often enough. */
typedef struct {
    uint64_t deadline;
    uint64_t last_ns;
    uint64_t last_j;
    uint64_t next_j;
    uint64_t step;
} watch_t;

/* Called by thread 0 at iteration j, before its barrier of that iteration (for a reduction, the
 * barrier that ends the worksharing loop). Past the deadline it
 * cuts the round after iteration j: every other thread reads the cut before iteration j + 1, and
 * cannot begin it before thread 0 arrives at the barrier of iteration j, so all threads run
 * exactly j + 1 iterations and none is left waiting at a barrier the others skip. The barrier
 * orders the relaxed store before those loads. */
static void check_deadline(watch_t *watch, uint64_t j, cut_t *cut)
{
    uint64_t now = phasers_now_ns();
    if (now >= watch->deadline) {
        atomic_store_explicit(&cut->stop, j + 1, memory_order_relaxed);
        watch->next_j = UINT64_MAX;
        return;
    }
    /* Size the next step from the latest iterations rather than the mean since the start, so a
     * round that slows down (a preempted thread, oversubscription) is checked sooner; grow at most
     * twofold so one fast stretch cannot postpone the next check for long. */
    uint64_t done = j - watch->last_j;
    uint64_t spent = now - watch->last_ns;
    uint64_t step = 2 * watch->step;
    if (done > 0 && spent > 0) {
        double wanted = CHECK_PERIOD_NS * (double)done / (double)spent;
        if (wanted < (double)step) {
            step = wanted < 1.0 ? 1 : (uint64_t)wanted;
        }
    }
    watch->step = step;
    watch->last_j = j;
    watch->last_ns = now;
    watch->next_j = j + step;
}

void phasers_omp_round(uint32_t threads, uint64_t iterations, void (*delay)(uint64_t),
                       uint64_t delay_arg, int32_t work, bool pin, uint64_t deadline_ns,
                       phasers_omp_result *result)
{
    bool valid = threads > 0 && threads <= INT_MAX &&
                 (work == PHASERS_OMP_LOOP || work == PHASERS_OMP_BARRIER ||
                  work == PHASERS_OMP_REDUCTION);
    phasers_omp_affinity affinity;
    if (!phasers_open_result(result, valid) || !phasers_read_affinity(&affinity, result)) {
        return;
    }

    /* A dynamic team could be smaller than asked for; a benchmark row must have the threads it
     * names, and a smaller team is reported rather than measured. */
    omp_set_dynamic(0);
    cut_t cut;
    atomic_init(&cut.stop, 0);
    atomic_int status = PHASERS_OMP_OK;
    atomic_int detail = 0;
    uint64_t ran = 0;
    /* Shared by the team: EPCC's reduction variable `a`, one more per thread and iteration. */
    int64_t sum = 0;

    uint64_t start = phasers_now_ns();
    uint64_t deadline = deadline_ns > UINT64_MAX - start ? UINT64_MAX : start + deadline_ns;
#pragma omp parallel num_threads(threads)
    {
        int thread = omp_get_thread_num();
        int team = omp_get_num_threads();
        if (phasers_team_is_full(thread, team, threads, &status, &detail)) {
            phasers_place_thread(&affinity, thread, pin, &status, &detail);

            uint64_t j = 0;
            if (work == PHASERS_OMP_BARRIER) {
                watch_t watch = {deadline, start, 0, 0, 1};
                for (; j < iterations; j++) {
                    uint64_t stop = atomic_load_explicit(&cut.stop, memory_order_relaxed);
                    if (stop != 0 && stop <= j) {
                        break;
                    }
                    if (delay != NULL) {
                        delay(delay_arg);
                    }
                    if (thread == 0 && j == watch.next_j) {
                        check_deadline(&watch, j, &cut);
                    }
#pragma omp barrier
                }
            } else if (work == PHASERS_OMP_REDUCTION) {
                /* EPCC's reduction test as the seed gives it (figure 9c): a worksharing loop of one
                 * iteration per thread, whose implied barrier also combines the sums. That barrier
                 * is the one that carries the cut. */
                watch_t watch = {deadline, start, 0, 0, 1};
                for (; j < iterations; j++) {
                    uint64_t stop = atomic_load_explicit(&cut.stop, memory_order_relaxed);
                    if (stop != 0 && stop <= j) {
                        break;
                    }
                    if (thread == 0 && j == watch.next_j) {
                        check_deadline(&watch, j, &cut);
                    }
#pragma omp for reduction(+ : sum)
                    for (int i = 0; i < team; i++) {
                        if (delay != NULL) {
                            delay(delay_arg);
                        }
                        sum += 1;
                    }
                }
            } else {
                /* EPCC's reference loop: the same work without the barrier, and without a cut,
                 * which needs the barrier to reach every thread in time. */
                for (; j < iterations; j++) {
                    if (delay != NULL) {
                        delay(delay_arg);
                    }
                }
            }
            if (thread == 0) {
                ran = j;
            }
        }
    }
    uint64_t elapsed = phasers_now_ns() - start;

    /* Thread 0 is the caller's own thread: give it back the mask it came with. */
    phasers_restore_affinity(&affinity, pin, &status, &detail);
    result->ran = ran;
    result->elapsed_ns = elapsed;
    result->sum = sum;
    result->status = atomic_load(&status);
    result->detail = atomic_load(&detail);
}
