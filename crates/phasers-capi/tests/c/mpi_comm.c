/* The MPI entry points (phasers_mpi.h) from a C MPI program that owns MPI, run under mpirun on 2
   or more ranks of one node: before MPI_Init_thread and after MPI_Finalize they refuse; in
   between, a process barrier, a combined barrier (2 threads per rank) and a hybrid team (2 threads
   per rank) are built on the program's own communicators (the world, a duplicate, and a split that
   halves the ranks and reverses their order, freed by the program right after create) and checked:
   the barrier invariant through counters in MPI shared memory (no messages), one leader per rank
   and episode, allreduce results against the program's own MPI_Allreduce, timeouts that keep the
   arrival, and the error codes of bad input; and the *_fcomm variants, which take a communicator's
   Fortran handle (from MPI_Comm_c2f), with null and (under Open MPI) unknown handles refused.
   Prints "mpi_comm ok on N ranks" on rank 0. */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "phasers_mpi.h"

#define THREADS 2
#define EPISODES 40

/* Arrival counters every rank of a communicator can read: one MPI shared-memory window. */
typedef struct {
    MPI_Win window;
    uint64_t *counters;
} shared_counters;

/* Collective over comm, whose ranks share one node: `count` counters, all 0. */
static shared_counters shared_new(MPI_Comm comm, size_t count) {
    int rank;
    MPI_Comm_rank(comm, &rank);
    shared_counters shared;
    uint64_t *mine;
    MPI_Aint bytes = rank == 0 ? (MPI_Aint)(count * sizeof(uint64_t)) : 0;
    CHECK(MPI_Win_allocate_shared(bytes, sizeof(uint64_t), MPI_INFO_NULL, comm, &mine,
                                  &shared.window) == MPI_SUCCESS);
    MPI_Aint size;
    int unit;
    CHECK(MPI_Win_shared_query(shared.window, 0, &size, &unit, &shared.counters) == MPI_SUCCESS);
    if (rank == 0) {
        memset(shared.counters, 0, count * sizeof(uint64_t));
    }
    MPI_Barrier(comm);
    return shared;
}

static void shared_store(shared_counters *shared, size_t index, uint64_t value) {
    __atomic_store_n(&shared->counters[index], value, __ATOMIC_SEQ_CST);
}

/* After episode e completed, every counter must read e + 1 or e + 2. */
static void shared_check(shared_counters *shared, size_t count, uint64_t episode,
                         const char *what) {
    for (size_t i = 0; i < count; i++) {
        uint64_t seen = __atomic_load_n(&shared->counters[i], __ATOMIC_SEQ_CST);
        if (seen != episode + 1 && seen != episode + 2) {
            fprintf(stderr, "%s: left episode %llu while participant %zu had arrived %llu times\n",
                    what, (unsigned long long)episode, i, (unsigned long long)seen);
            exit(1);
        }
    }
}

static void shared_free(shared_counters *shared) { MPI_Win_free(&shared->window); }

static void nap_sometimes(unsigned *seed) {
    if (rand_r(seed) % 8 == 0) {
        struct timespec nap = {0, 200000};
        nanosleep(&nap, NULL);
    }
}

/* A process barrier of every algorithm on comm. */
static void process_barriers(MPI_Comm comm, const char *name) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int algorithm = PHASERS_MPI_ALGORITHM_DISSEMINATION;
         algorithm <= PHASERS_MPI_ALGORITHM_AUTO; algorithm++) {
        shared_counters arrivals = shared_new(comm, (size_t)size);
        phasers_mpi_barrier *barrier;
        EXPECT_OK(phasers_mpi_barrier_create(comm, algorithm, &barrier));
        size_t got;
        EXPECT_OK(phasers_mpi_barrier_rank(barrier, &got));
        CHECK(got == (size_t)rank);
        EXPECT_OK(phasers_mpi_barrier_parties(barrier, &got));
        CHECK(got == (size_t)size);
        unsigned seed = (unsigned)(rank * 31 + algorithm);
        for (uint64_t e = 0; e < EPISODES; e++) {
            nap_sometimes(&seed);
            shared_store(&arrivals, (size_t)rank, e + 1);
            uint64_t episode = UINT64_MAX;
            EXPECT_OK(phasers_mpi_barrier_wait(barrier, &episode));
            CHECK(episode == e);
            shared_check(&arrivals, (size_t)size, e, name);
        }
        EXPECT_OK(phasers_mpi_barrier_wait(barrier, NULL));
        EXPECT_OK(phasers_mpi_barrier_destroy(barrier));
        EXPECT_CODE(PHASERS_EDESTROYED, phasers_mpi_barrier_wait(barrier, NULL));
        shared_free(&arrivals);
    }
}

typedef struct {
    phasers_mpi_combined *barrier;
    shared_counters *arrivals;
    size_t thread, rank, parties;
    unsigned leaders[EPISODES];
    const char *name;
} combined_thread;

static void *combined_body(void *argument) {
    combined_thread *me = argument;
    unsigned seed = (unsigned)(me->rank * 17 + me->thread);
    for (uint64_t e = 0; e < EPISODES; e++) {
        nap_sometimes(&seed);
        shared_store(me->arrivals, me->rank * THREADS + me->thread, e + 1);
        phasers_wait_result result;
        EXPECT_OK(phasers_mpi_combined_wait(me->barrier, me->thread, &result));
        CHECK(result.episode == e);
        me->leaders[e] = (unsigned)result.is_leader;
        shared_check(me->arrivals, me->parties, e, me->name);
    }
    return NULL;
}

static void combined_barrier(MPI_Comm comm, const char *name) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    shared_counters arrivals = shared_new(comm, (size_t)size * THREADS);
    phasers_mpi_combined *barrier;
    EXPECT_OK(phasers_mpi_combined_create(comm, THREADS, PHASERS_MPI_ALGORITHM_DISSEMINATION,
                                          &barrier));
    size_t parties;
    EXPECT_OK(phasers_mpi_combined_parties(barrier, &parties));
    CHECK(parties == (size_t)size * THREADS);
    EXPECT_CODE(PHASERS_EINVAL, phasers_mpi_combined_wait(barrier, THREADS, NULL));
    EXPECT_MESSAGE("out of range");
    combined_thread threads[THREADS];
    pthread_t ids[THREADS];
    for (size_t t = 0; t < THREADS; t++) {
        threads[t] = (combined_thread){.barrier = barrier,
                                       .arrivals = &arrivals,
                                       .thread = t,
                                       .rank = (size_t)rank,
                                       .parties = parties,
                                       .name = name};
        CHECK(pthread_create(&ids[t], NULL, combined_body, &threads[t]) == 0);
    }
    for (size_t t = 0; t < THREADS; t++) {
        CHECK(pthread_join(ids[t], NULL) == 0);
    }
    for (size_t e = 0; e < EPISODES; e++) {
        unsigned leaders = 0;
        for (size_t t = 0; t < THREADS; t++) {
            leaders += threads[t].leaders[e];
        }
        CHECK(leaders == 1);
    }
    EXPECT_OK(phasers_mpi_combined_destroy(barrier));
    shared_free(&arrivals);
}

typedef struct {
    phasers_mpi_member *member;
    int64_t sum;
    double floats[3];
} team_thread;

static void *team_body(void *argument) {
    team_thread *me = argument;
    size_t rank;
    EXPECT_OK(phasers_mpi_member_rank(me->member, &rank));
    /* A bitwise operator on floating point is the call's error: every member of every rank makes
       the call and every one gets PHASERS_EINVAL; the team goes on. */
    double x = 1.0, y;
    EXPECT_CODE(PHASERS_EINVAL, phasers_mpi_member_allreduce(me->member, PHASERS_TYPE_F64,
                                                             PHASERS_OP_XOR, &x, &y, 1));
    EXPECT_MESSAGE("bitwise");
    for (int call = 0; call < EPISODES; call++) {
        int64_t mine = (int64_t)rank + 1;
        EXPECT_OK(phasers_mpi_member_allreduce(me->member, PHASERS_TYPE_I64, PHASERS_OP_SUM, &mine,
                                               &me->sum, 1));
        double input[3] = {1.0, (double)mine, -(double)mine};
        EXPECT_OK(phasers_mpi_member_allreduce(me->member, PHASERS_TYPE_F64, PHASERS_OP_SUM, input,
                                               me->floats, 3));
        EXPECT_OK(phasers_mpi_member_barrier(me->member));
    }
    return NULL;
}

static void hybrid_team(MPI_Comm comm) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    phasers_mpi_team *team;
    EXPECT_OK(phasers_mpi_team_create(comm, THREADS, 1, &team));
    size_t parties;
    EXPECT_OK(phasers_mpi_team_parties(team, &parties));
    CHECK(parties == (size_t)size * THREADS);
    team_thread threads[THREADS];
    pthread_t ids[THREADS];
    for (size_t t = 0; t < THREADS; t++) {
        EXPECT_OK(phasers_mpi_team_member(team, t, &threads[t].member));
        size_t member_rank;
        EXPECT_OK(phasers_mpi_member_rank(threads[t].member, &member_rank));
        CHECK(member_rank == (size_t)rank * THREADS + t);
    }
    phasers_mpi_member *again;
    EXPECT_CODE(PHASERS_EINVAL, phasers_mpi_team_member(team, 0, &again));
    EXPECT_MESSAGE("handed out already");
    EXPECT_CODE(PHASERS_EINVAL, phasers_mpi_team_member(team, THREADS, &again));
    /* Arguments the C layer refuses on its own: the member takes no part in a call. */
    double x = 1.0, y;
    EXPECT_CODE(PHASERS_EINVAL, phasers_mpi_member_allreduce(threads[0].member, 99,
                                                             PHASERS_OP_SUM, &x, &y, 1));
    EXPECT_CODE(PHASERS_ENULL, phasers_mpi_member_allreduce(threads[0].member, PHASERS_TYPE_F64,
                                                            PHASERS_OP_SUM, NULL, &y, 1));
    for (size_t t = 0; t < THREADS; t++) {
        CHECK(pthread_create(&ids[t], NULL, team_body, &threads[t]) == 0);
    }
    for (size_t t = 0; t < THREADS; t++) {
        CHECK(pthread_join(ids[t], NULL) == 0);
    }
    /* The program's own MPI_Allreduce on the same communicator agrees with the team's. */
    int64_t members = (int64_t)parties, expected = members * (members + 1) / 2;
    int64_t team_sum = threads[0].sum, total;
    MPI_Allreduce(&team_sum, &total, 1, MPI_INT64_T, MPI_SUM, comm);
    CHECK(total == expected * size);
    for (size_t t = 0; t < THREADS; t++) {
        CHECK(threads[t].sum == expected);
        CHECK(threads[t].floats[0] == (double)members);
        CHECK(threads[t].floats[1] == (double)expected);
        CHECK(threads[t].floats[2] == -(double)expected);
    }
    EXPECT_CODE(PHASERS_EBUSY, phasers_mpi_team_destroy(team));
    EXPECT_MESSAGE("member handle(s)");
    /* Every member of every rank is done before any is destroyed (a destroyed member breaks the
       team for the others' later calls). */
    MPI_Barrier(comm);
    for (size_t t = 0; t < THREADS; t++) {
        EXPECT_OK(phasers_mpi_member_destroy(threads[t].member));
    }
    EXPECT_OK(phasers_mpi_team_destroy(team));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_mpi_member_barrier(threads[0].member));
}

/* A timed wait gives up while another rank is late, keeps the arrival, and completes on the
   next wait. */
static void timeout_keeps_the_arrival(MPI_Comm comm) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    phasers_mpi_barrier *barrier;
    EXPECT_OK(phasers_mpi_barrier_create(comm, PHASERS_MPI_ALGORITHM_DISSEMINATION, &barrier));
    uint64_t episode = UINT64_MAX;
    if (rank == 0) {
        EXPECT_CODE(PHASERS_ETIMEDOUT, phasers_mpi_barrier_timedwait(barrier, 1000000, &episode));
        EXPECT_MESSAGE("still waiting for rank");
        /* Tell the others to arrive now. */
        MPI_Barrier(comm);
        EXPECT_OK(phasers_mpi_barrier_wait(barrier, &episode));
    } else {
        MPI_Barrier(comm);
        EXPECT_OK(phasers_mpi_barrier_wait(barrier, &episode));
    }
    CHECK(episode == 0);
    EXPECT_OK(phasers_mpi_barrier_destroy(barrier));
}

static void bad_input(void) {
    phasers_mpi_barrier *barrier;
    EXPECT_CODE(PHASERS_ENULL,
                phasers_mpi_barrier_create(MPI_COMM_WORLD, PHASERS_MPI_ALGORITHM_LIBRARY, NULL));
    EXPECT_CODE(PHASERS_EINVAL, phasers_mpi_barrier_create(MPI_COMM_WORLD, 5, &barrier));
    EXPECT_MESSAGE("PHASERS_MPI_ALGORITHM_");
    EXPECT_CODE(PHASERS_EINVAL, phasers_mpi_barrier_create(MPI_COMM_NULL,
                                                           PHASERS_MPI_ALGORITHM_LIBRARY, &barrier));
    EXPECT_MESSAGE("MPI_COMM_NULL");
    phasers_mpi_combined *combined;
    EXPECT_CODE(PHASERS_EINVAL, phasers_mpi_combined_create(MPI_COMM_WORLD, 0,
                                                            PHASERS_MPI_ALGORITHM_LIBRARY,
                                                            &combined));
    EXPECT_CODE(PHASERS_ENULL, phasers_mpi_barrier_wait(NULL, NULL));
    /* A handle of another kind is refused by its magic word. */
    phasers_mpi_team *team;
    EXPECT_OK(phasers_mpi_team_create(MPI_COMM_WORLD, 1, 0, &team));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_mpi_barrier_wait((phasers_mpi_barrier *)(void *)team,
                                                             NULL));
    EXPECT_MESSAGE("phasers_mpi_team handle");
    EXPECT_OK(phasers_mpi_team_destroy(team));
}

/* The *_fcomm variants take the Fortran handle of a communicator: the objects they build work on
   the communicator it names (here the half in reverse order: ranks and sizes show it was not the
   world), and null or unknown handles are refused without an MPI error. */
static void fortran_handles(MPI_Comm half) {
    int half_rank, half_size, world_size;
    MPI_Comm_rank(half, &half_rank);
    MPI_Comm_size(half, &half_size);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Fint handle = MPI_Comm_c2f(half);

    phasers_mpi_barrier *barrier;
    EXPECT_OK(phasers_mpi_barrier_create_fcomm(handle, PHASERS_MPI_ALGORITHM_DISSEMINATION,
                                               &barrier));
    size_t got;
    EXPECT_OK(phasers_mpi_barrier_rank(barrier, &got));
    CHECK(got == (size_t)half_rank);
    EXPECT_OK(phasers_mpi_barrier_parties(barrier, &got));
    CHECK(got == (size_t)half_size);
    for (uint64_t e = 0; e < 3; e++) {
        uint64_t episode = UINT64_MAX;
        EXPECT_OK(phasers_mpi_barrier_wait(barrier, &episode));
        CHECK(episode == e);
    }
    EXPECT_OK(phasers_mpi_barrier_destroy(barrier));

    phasers_mpi_combined *combined;
    EXPECT_OK(phasers_mpi_combined_create_fcomm(MPI_Comm_c2f(MPI_COMM_WORLD), 1,
                                                PHASERS_MPI_ALGORITHM_LIBRARY, &combined));
    EXPECT_OK(phasers_mpi_combined_parties(combined, &got));
    CHECK(got == (size_t)world_size);
    phasers_wait_result result;
    EXPECT_OK(phasers_mpi_combined_wait(combined, 0, &result));
    CHECK(result.episode == 0 && result.is_leader);
    EXPECT_OK(phasers_mpi_combined_destroy(combined));

    /* One member per rank of the half: the sum of the ranks of the half. */
    phasers_mpi_team *team;
    EXPECT_OK(phasers_mpi_team_create_fcomm(handle, 1, 1, &team));
    phasers_mpi_member *member;
    EXPECT_OK(phasers_mpi_team_member(team, 0, &member));
    int64_t mine = half_rank + 1, total = 0;
    EXPECT_OK(phasers_mpi_member_allreduce(member, PHASERS_TYPE_I64, PHASERS_OP_SUM, &mine, &total,
                                           1));
    CHECK(total == (int64_t)half_size * (half_size + 1) / 2);
    EXPECT_OK(phasers_mpi_member_destroy(member));
    EXPECT_OK(phasers_mpi_team_destroy(team));

    /* Refused on every rank alike, before any collective step. */
    EXPECT_CODE(PHASERS_EINVAL,
                phasers_mpi_barrier_create_fcomm(MPI_Comm_c2f(MPI_COMM_NULL),
                                                 PHASERS_MPI_ALGORITHM_LIBRARY, &barrier));
    EXPECT_MESSAGE("MPI_COMM_NULL");
    EXPECT_CODE(PHASERS_ENULL, phasers_mpi_team_create_fcomm(handle, 1, 1, NULL));
#ifdef OPEN_MPI
    /* Open MPI's MPI_Comm_f2c maps an integer that names no communicator to a null handle. */
    const MPI_Fint unknown[3] = {-1, 1 << 30, 123457};
    for (int i = 0; i < 3; i++) {
        EXPECT_CODE(PHASERS_EINVAL, phasers_mpi_team_create_fcomm(unknown[i], 1, 1, &team));
        EXPECT_MESSAGE("names no communicator");
    }
    /* A freed communicator's handle names nothing any more. */
    MPI_Comm scratch;
    MPI_Comm_dup(MPI_COMM_WORLD, &scratch);
    MPI_Fint freed = MPI_Comm_c2f(scratch);
    MPI_Comm_free(&scratch);
    EXPECT_CODE(PHASERS_EINVAL, phasers_mpi_combined_create_fcomm(freed, 1,
                                                                  PHASERS_MPI_ALGORITHM_LIBRARY,
                                                                  &combined));
    EXPECT_MESSAGE("names no communicator");
#endif
}

int main(void) {
    phasers_mpi_barrier *barrier;
    /* Before MPI starts there is nothing to adopt, and no MPI call is made. */
    EXPECT_CODE(PHASERS_EINVAL, phasers_mpi_barrier_create(MPI_COMM_WORLD,
                                                           PHASERS_MPI_ALGORITHM_LIBRARY, &barrier));
    EXPECT_MESSAGE("not initialized");
    /* The Fortran variant too: MPI_Comm_f2c is not called before MPI runs. */
    phasers_mpi_team *early;
    EXPECT_CODE(PHASERS_EINVAL, phasers_mpi_team_create_fcomm(0, 1, 1, &early));
    EXPECT_MESSAGE("not initialized");

    int provided;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
    CHECK(provided >= MPI_THREAD_SERIALIZED);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* The program's communicators: a duplicate, and halves in reverse rank order. */
    MPI_Comm duplicate, half;
    MPI_Comm_dup(MPI_COMM_WORLD, &duplicate);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
    MPI_Comm comms[3] = {MPI_COMM_WORLD, duplicate, half};
    const char *names[3] = {"MPI_COMM_WORLD", "a duplicate", "a half in reverse order"};
    for (int c = 0; c < 3; c++) {
        process_barriers(comms[c], names[c]);
        combined_barrier(comms[c], names[c]);
        hybrid_team(comms[c]);
    }

    /* The program may free its communicator right after create: the objects keep their own. */
    MPI_Comm scratch;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &scratch);
    phasers_mpi_barrier *kept;
    EXPECT_OK(phasers_mpi_barrier_create(scratch, PHASERS_MPI_ALGORITHM_MCS_TREE, &kept));
    MPI_Comm_free(&scratch);
    for (uint64_t e = 0; e < 5; e++) {
        uint64_t episode;
        EXPECT_OK(phasers_mpi_barrier_wait(kept, &episode));
        CHECK(episode == e);
    }
    EXPECT_OK(phasers_mpi_barrier_destroy(kept));

    /* The library never frees the program's communicators: they still work. */
    for (int c = 1; c < 3; c++) {
        int one = 1, count = 0, members;
        MPI_Comm_size(comms[c], &members);
        MPI_Allreduce(&one, &count, 1, MPI_INT, MPI_SUM, comms[c]);
        CHECK(count == members);
    }

    if (size > 1) {
        timeout_keeps_the_arrival(MPI_COMM_WORLD);
    }
    bad_input();
    fortran_handles(half);

    MPI_Comm_free(&half);
    MPI_Comm_free(&duplicate);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();

    /* After MPI_Finalize nothing can be built. */
    EXPECT_CODE(PHASERS_EINVAL, phasers_mpi_barrier_create(MPI_COMM_WORLD,
                                                           PHASERS_MPI_ALGORITHM_LIBRARY, &barrier));
    EXPECT_MESSAGE("finalized");
    if (rank == 0) {
        printf("mpi_comm ok on %d ranks\n", size);
    }
    return 0;
}
