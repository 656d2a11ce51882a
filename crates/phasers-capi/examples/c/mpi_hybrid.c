/* An MPI program with 2 threads per rank: a hybrid team's allreduce across every thread of every
 * rank, checked against the program's own MPI_Allreduce, and a process barrier among the ranks.
 * Needs libphasers installed with `scripts/install-capi.sh --mpi` (phasers_mpi.h, phasers-mpi.pc).
 *
 *     cc mpi_hybrid.c $(pkg-config --cflags --libs phasers-mpi) \
 *         -Wl,-rpath,$(pkg-config --variable=libdir phasers) -pthread -o mpi_hybrid
 *     mpirun -np 2 ./mpi_hybrid
 *
 * Prints "mpi_hybrid ok on N ranks: ..." on rank 0, and exits with 1 on any failure.
 */
#include <phasers_mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 2
#define ROUNDS 50

/* On a failed call: the call, its status and phasers_last_error(), then the whole job stops (the
   other ranks would otherwise wait for this one for ever). */
static void check(int rc, const char *call) {
    if (rc != PHASERS_OK) {
        fprintf(stderr, "%s: %s: %s\n", call, phasers_strerror(rc), phasers_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

typedef struct {
    phasers_mpi_member *member;
    double last_sum;   /* the result of the last round */
    int failed;
} worker;

/* Each round, every member contributes (its team rank + 1) * round; every member must get the
   same total, which is the closed form parties * (parties + 1) / 2 * round. */
static void *work(void *argument) {
    worker *me = argument;
    size_t rank, parties;
    check(phasers_mpi_member_rank(me->member, &rank), "phasers_mpi_member_rank");
    check(phasers_mpi_member_parties(me->member, &parties), "phasers_mpi_member_parties");
    for (int round = 1; round <= ROUNDS; round++) {
        double mine = (double)(rank + 1) * round, total = -1.0;
        check(phasers_mpi_member_allreduce(me->member, PHASERS_TYPE_F64, PHASERS_OP_SUM, &mine,
                                           &total, 1),
              "phasers_mpi_member_allreduce");
        if (total != (double)(parties * (parties + 1) / 2) * round) {
            me->failed = 1;
        }
        me->last_sum = total;
        check(phasers_mpi_member_barrier(me->member), "phasers_mpi_member_barrier");
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided;
    /* The program owns MPI; more than one thread per rank needs MPI_THREAD_SERIALIZED. */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    if (provided < MPI_THREAD_SERIALIZED) {
        fprintf(stderr, "this MPI provides no MPI_THREAD_SERIALIZED\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* A process barrier: the episodes count from 0 on every rank alike. */
    phasers_mpi_barrier *barrier;
    check(phasers_mpi_barrier_create(MPI_COMM_WORLD, PHASERS_MPI_ALGORITHM_DISSEMINATION, &barrier),
          "phasers_mpi_barrier_create");
    int failed = 0;
    for (uint64_t e = 0; e < ROUNDS; e++) {
        uint64_t episode;
        check(phasers_mpi_barrier_wait(barrier, &episode), "phasers_mpi_barrier_wait");
        failed |= episode != e;
    }
    check(phasers_mpi_barrier_destroy(barrier), "phasers_mpi_barrier_destroy");

    /* A hybrid team of THREADS members per rank. */
    phasers_mpi_team *team;
    check(phasers_mpi_team_create(MPI_COMM_WORLD, THREADS, 1, &team), "phasers_mpi_team_create");
    worker workers[THREADS] = {0};
    pthread_t threads[THREADS];
    for (size_t t = 0; t < THREADS; t++) {
        check(phasers_mpi_team_member(team, t, &workers[t].member), "phasers_mpi_team_member");
    }
    for (size_t t = 0; t < THREADS; t++) {
        if (pthread_create(&threads[t], NULL, work, &workers[t]) != 0) {
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    for (size_t t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        failed |= workers[t].failed;
    }
    /* The same sum by MPI itself: each rank's threads contribute their member ranks + 1. */
    double mine = 0.0, expected = 0.0;
    for (size_t t = 0; t < THREADS; t++) {
        mine += (double)((size_t)rank * THREADS + t + 1) * ROUNDS;
    }
    MPI_Allreduce(&mine, &expected, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (size_t t = 0; t < THREADS; t++) {
        failed |= workers[t].last_sum != expected;
        check(phasers_mpi_member_destroy(workers[t].member), "phasers_mpi_member_destroy");
    }
    check(phasers_mpi_team_destroy(team), "phasers_mpi_team_destroy");

    int any_failed = 0;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0) {
        if (any_failed) {
            printf("mpi_hybrid FAILED on %d ranks\n", size);
        } else {
            printf("mpi_hybrid ok on %d ranks: %d threads each, allreduce sum %.0f as MPI's\n", size,
                   THREADS, expected);
        }
    }
    MPI_Finalize();
    return any_failed;
}
