/*
 * The OpenMP side of the seed's dynamic-parallelism benchmark (figure 16a). The size of an
 * OpenMP team cannot change inside a parallel region, so a program whose parallelism grows one
 * task at a time forks a new region, with its join and its barrier, at every step. That cost is
 * what the phaser version, which registers one more task on a live phaser per step, is compared
 * with; there are no inner repetitions to amortize it, as in the seed.
 */
#include "omp_common.h"

#include <limits.h>
#include <omp.h>

void phasers_omp_dynamic(uint32_t max_threads, void (*delay)(uint64_t), uint64_t delay_arg,
                         phasers_omp_result *result)
{
    if (!phasers_open_result(result, max_threads >= 2 && max_threads <= INT_MAX)) {
        return;
    }

    /* A dynamic team could be smaller than asked for, and the step would not be the one named. */
    omp_set_dynamic(0);
    atomic_int status = PHASERS_OMP_OK;
    atomic_int detail = 0;
    int last = (int)max_threads;
    uint64_t start = phasers_now_ns();
    for (int nth = 2; nth <= last; nth++) {
#pragma omp parallel for num_threads(nth)
        for (int i = 0; i < nth; i++) {
            if (delay != NULL) {
                delay(delay_arg);
            }
            int team = omp_get_num_threads();
            if (team != nth) {
                phasers_record_error(&status, &detail, PHASERS_OMP_TOO_FEW_THREADS, team);
            }
        }
    }
    result->elapsed_ns = phasers_now_ns() - start;
    result->ran = max_threads - 1;
    result->status = atomic_load(&status);
    result->detail = atomic_load(&detail);
}
