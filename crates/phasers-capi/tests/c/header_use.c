/* Compiled as C99 and as C++ with every warning an error: the header must be clean in both, and
   its declarations must link against the library. */
#include "phasers.h"

#include <stdio.h>
#include <string.h>

int main(void) {
    phasers_barrier *barrier = NULL;
    phasers_wait_result result;
    phasers_phaser *phaser = NULL;
    phasers_registration *creator = NULL;
    phasers_accumulator *accumulator = NULL;
    double sum = 0.0;
    int algorithm = PHASERS_ALGORITHM_AUTO;
    phasers_reduction *reduction = NULL;
    phasers_team *team = NULL;
    phasers_member *member = NULL;
    phasers_request *request = NULL;
    double values[2] = {1.5, 2.5}, results[2] = {0.0, 0.0};
    int has_result = 0;

    if (phasers_barrier_create(1, PHASERS_ALGORITHM_AUTO, &barrier) != PHASERS_OK ||
        phasers_barrier_wait(barrier, 0, &result) != PHASERS_OK || result.is_leader != 1 ||
        phasers_barrier_algorithm(barrier, &algorithm) != PHASERS_OK ||
        phasers_barrier_destroy(barrier) != PHASERS_OK) {
        fprintf(stderr, "barrier: %s\n", phasers_last_error());
        return 1;
    }
    if (phasers_phaser_create(PHASERS_MODE_SIG_WAIT, &phaser, &creator) != PHASERS_OK ||
        phasers_accumulator_create(phaser, PHASERS_TYPE_F64, PHASERS_OP_SUM, 1, &accumulator) !=
            PHASERS_OK ||
        phasers_accumulator_send_f64(accumulator, creator, 2.5) != PHASERS_OK ||
        phasers_registration_next(creator, NULL) != PHASERS_OK ||
        phasers_accumulator_result_f64(accumulator, &sum) != PHASERS_OK || sum != 2.5 ||
        phasers_accumulator_destroy(accumulator) != PHASERS_OK ||
        phasers_registration_drop(creator) != PHASERS_OK ||
        phasers_phaser_destroy(phaser) != PHASERS_OK) {
        fprintf(stderr, "phaser: %s\n", phasers_last_error());
        return 1;
    }
    if (phasers_reduction_create(1, PHASERS_TYPE_F64, PHASERS_OP_SUM, PHASERS_REDUCE_AUTO, 0,
                                 &reduction) != PHASERS_OK ||
        phasers_reduction_reduce(reduction, 0, values, results, 2, &has_result) != PHASERS_OK ||
        has_result != 1 || results[1] != 2.5 ||
        phasers_reduction_destroy(reduction) != PHASERS_OK) {
        fprintf(stderr, "reduction: %s\n", phasers_last_error());
        return 1;
    }
    if (phasers_team_create(1, 1, &team) != PHASERS_OK ||
        phasers_team_member(team, 0, &member) != PHASERS_OK ||
        phasers_member_iallreduce(member, PHASERS_TYPE_F64, PHASERS_OP_MAX, values, results, 2,
                                  &request) != PHASERS_OK ||
        phasers_request_wait(request) != PHASERS_OK || results[0] != 1.5 ||
        phasers_member_destroy(member) != PHASERS_OK ||
        phasers_team_destroy(team) != PHASERS_OK) {
        fprintf(stderr, "team: %s\n", phasers_last_error());
        return 1;
    }
    if (strcmp(phasers_strerror(PHASERS_EBUSY), "the handle is in use by another thread") != 0) {
        return 1;
    }
    printf("header ok: %s\n", phasers_algorithm_name(algorithm));
    return 0;
}
