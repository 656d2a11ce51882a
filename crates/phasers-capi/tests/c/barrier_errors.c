/* Barrier error paths through the C API: timeouts that keep the arrival, EBUSY for a rank used
   by two threads and for destroy during a wait, destroyed / wrong-kind / NULL handles, invalid
   arguments, and the algorithm names. */
#include <pthread.h>
#include <stdint.h>

#include "check.h"

static phasers_barrier *barrier;

static void *wait_as_rank_0(void *unused) {
    (void)unused;
    phasers_wait_result result;
    EXPECT_OK(phasers_barrier_wait(barrier, 0, &result));
    CHECK(result.episode == 0);
    return NULL;
}

static void timeout_keeps_the_arrival(void) {
    phasers_barrier *b;
    EXPECT_OK(phasers_barrier_create(2, PHASERS_ALGORITHM_SENSE_REVERSING, &b));
    phasers_wait_result result;
    EXPECT_CODE(PHASERS_ETIMEDOUT, phasers_barrier_timedwait(b, 0, 1000000, &result));
    EXPECT_MESSAGE("ranks [1]");
    /* A timeout of 0 only checks: rank 1 is still missing. */
    EXPECT_CODE(PHASERS_ETIMEDOUT, phasers_barrier_timedwait(b, 0, 0, &result));
    EXPECT_MESSAGE("ranks [1]");
    /* Rank 1 arrives: the episode completes for it without waiting, since rank 0's arrival
       stayed; rank 0's next wait completes the same episode 0 instead of arriving again. */
    EXPECT_OK(phasers_barrier_timedwait(b, 1, 1000000000, &result));
    CHECK(result.episode == 0);
    CHECK(strcmp(phasers_last_error(), "") == 0);
    EXPECT_OK(phasers_barrier_wait(b, 0, &result));
    CHECK(result.episode == 0);
    EXPECT_OK(phasers_barrier_destroy(b));
}

static void busy_rank_and_busy_destroy(void) {
    EXPECT_OK(phasers_barrier_create(3, PHASERS_ALGORITHM_SENSE_REVERSING, &barrier));
    pthread_t waiter;
    CHECK(pthread_create(&waiter, NULL, wait_as_rank_0, NULL) == 0);
    /* Rank 1 polls with timeouts until the error says only rank 2 is missing: rank 0 has arrived,
       so its thread is inside phasers_barrier_wait. Rank 1's arrival stays in place. */
    for (;;) {
        EXPECT_CODE(PHASERS_ETIMEDOUT, phasers_barrier_timedwait(barrier, 1, 1000000, NULL));
        if (strstr(phasers_last_error(), "ranks [2]") != NULL) {
            break;
        }
        EXPECT_MESSAGE("ranks [0, 2]");
    }
    EXPECT_CODE(PHASERS_EBUSY, phasers_barrier_wait(barrier, 0, NULL));
    EXPECT_MESSAGE("rank 0");
    EXPECT_CODE(PHASERS_EBUSY, phasers_barrier_destroy(barrier));
    /* Nothing changed: rank 2 completes episode 0 with the others. */
    phasers_wait_result result;
    EXPECT_OK(phasers_barrier_wait(barrier, 2, &result));
    CHECK(result.episode == 0);
    EXPECT_OK(phasers_barrier_wait(barrier, 1, &result));
    CHECK(result.episode == 0);
    /* Rank 0's thread may still be returning from its wait: destroy waits for it. */
    EXPECT_OK(phasers_barrier_destroy(barrier));
    CHECK(pthread_join(waiter, NULL) == 0);
}

static void destroyed_null_and_foreign_handles(void) {
    phasers_barrier *b;
    EXPECT_OK(phasers_barrier_create(1, PHASERS_ALGORITHM_AUTO, &b));
    phasers_wait_result result;
    EXPECT_OK(phasers_barrier_wait(b, 0, &result));
    CHECK(result.episode == 0 && result.is_leader == 1);
    EXPECT_OK(phasers_barrier_destroy(b));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_barrier_destroy(b));
    EXPECT_MESSAGE("already destroyed");
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_barrier_wait(b, 0, NULL));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_barrier_timedwait(b, 0, 0, NULL));
    size_t parties;
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_barrier_parties(b, &parties));

    EXPECT_CODE(PHASERS_ENULL, phasers_barrier_wait(NULL, 0, NULL));
    EXPECT_CODE(PHASERS_ENULL, phasers_barrier_destroy(NULL));
    EXPECT_CODE(PHASERS_ENULL, phasers_barrier_create(2, PHASERS_ALGORITHM_AUTO, NULL));
    EXPECT_OK(phasers_barrier_create(2, PHASERS_ALGORITHM_AUTO, &b));
    EXPECT_CODE(PHASERS_ENULL, phasers_barrier_parties(b, NULL));
    EXPECT_CODE(PHASERS_ENULL, phasers_barrier_algorithm(b, NULL));
    EXPECT_CODE(PHASERS_ENULL, phasers_barrier_parties(NULL, &parties));

    /* A phaser handle passed as a barrier, and memory that was never a handle. */
    phasers_phaser *phaser;
    phasers_registration *creator;
    EXPECT_OK(phasers_phaser_create(PHASERS_MODE_SIG_WAIT, &phaser, &creator));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_barrier_wait((phasers_barrier *)(void *)phaser, 0, NULL));
    EXPECT_MESSAGE("phasers_phaser handle");
    uint64_t not_a_handle[4] = {0, 0, 0, 0};
    EXPECT_CODE(PHASERS_EDESTROYED,
                phasers_barrier_destroy((phasers_barrier *)(void *)not_a_handle));
    EXPECT_MESSAGE("magic word");
    EXPECT_OK(phasers_registration_drop(creator));
    EXPECT_OK(phasers_phaser_destroy(phaser));

    /* Still usable: the failures above changed nothing. */
    EXPECT_OK(phasers_barrier_destroy(b));
}

static void invalid_arguments(void) {
    phasers_barrier *b = NULL;
    EXPECT_CODE(PHASERS_EINVAL, phasers_barrier_create(0, PHASERS_ALGORITHM_AUTO, &b));
    EXPECT_MESSAGE("at least 1");
    EXPECT_CODE(PHASERS_EINVAL, phasers_barrier_create(4, -1, &b));
    EXPECT_CODE(PHASERS_EINVAL, phasers_barrier_create(4, PHASERS_ALGORITHM_TOURNAMENT + 1, &b));
    EXPECT_MESSAGE("PHASERS_ALGORITHM_");
    EXPECT_CODE(PHASERS_EINVAL, phasers_barrier_create((size_t)1 << 20, PHASERS_ALGORITHM_AUTO, &b));
    EXPECT_MESSAGE("16384");
    /* A negative count converted to size_t, and SIZE_MAX, are too many parties, not a huge
       allocation. */
    int negative = -1;
    EXPECT_CODE(PHASERS_EINVAL,
                phasers_barrier_create((size_t)negative, PHASERS_ALGORITHM_DISSEMINATION, &b));
    EXPECT_CODE(PHASERS_EINVAL, phasers_barrier_create(SIZE_MAX, PHASERS_ALGORITHM_TOURNAMENT, &b));
    EXPECT_MESSAGE("at most 16384");
    CHECK(b == NULL);
    /* The largest barrier is built, and a timeout no clock can hold is no timeout. */
    EXPECT_OK(phasers_barrier_create(16384, PHASERS_ALGORITHM_DISSEMINATION, &b));
    EXPECT_OK(phasers_barrier_destroy(b));
    EXPECT_OK(phasers_barrier_create(1, PHASERS_ALGORITHM_COUNTING, &b));
    phasers_wait_result result = {UINT64_MAX, -1};
    EXPECT_OK(phasers_barrier_timedwait(b, 0, UINT64_MAX, &result));
    CHECK(result.episode == 0 && result.is_leader == 1);
    EXPECT_OK(phasers_barrier_destroy(b));
    EXPECT_OK(phasers_barrier_create(2, PHASERS_ALGORITHM_DISSEMINATION, &b));
    EXPECT_CODE(PHASERS_EINVAL, phasers_barrier_wait(b, 2, NULL));
    EXPECT_MESSAGE("ranks are 0 to 1");
    EXPECT_OK(phasers_barrier_destroy(b));

    CHECK(strcmp(phasers_algorithm_name(PHASERS_ALGORITHM_AUTO), "auto") == 0);
    CHECK(strcmp(phasers_algorithm_name(PHASERS_ALGORITHM_MCS_TREE), "mcs") == 0);
    CHECK(strcmp(phasers_algorithm_name(PHASERS_ALGORITHM_TOURNAMENT), "tournament") == 0);
    CHECK(phasers_algorithm_name(-1) == NULL);
    CHECK(phasers_algorithm_name(PHASERS_ALGORITHM_TOURNAMENT + 1) == NULL);
}

static void every_code_is_described(void) {
    const char *unknown = "unknown phasers error code";
    for (int code = PHASERS_OK; code <= PHASERS_EMISMATCH; code++) {
        const char *text = phasers_strerror(code);
        CHECK(text != NULL && text[0] != '\0' && strcmp(text, unknown) != 0);
        for (int other = PHASERS_OK; other < code; other++) {
            CHECK(strcmp(text, phasers_strerror(other)) != 0);
        }
    }
    CHECK(strcmp(phasers_strerror(-1), unknown) == 0);
    CHECK(strcmp(phasers_strerror(PHASERS_EMISMATCH + 1), unknown) == 0);
}

int main(void) {
    CHECK(strcmp(phasers_last_error(), "") == 0);
    timeout_keeps_the_arrival();
    busy_rank_and_busy_destroy();
    destroyed_null_and_foreign_handles();
    invalid_arguments();
    every_code_is_described();
    printf("barrier errors ok\n");
    return 0;
}
