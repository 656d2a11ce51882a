/* The phaser API from C: next across threads, split phase, signal-only and wait-only modes with
   their capability errors, timeouts, EBUSY, termination, and handle lifetimes. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"

#define TASKS 4
#define PHASES 100

static atomic_uint_fast64_t arrivals;

static void *advance(void *arg) {
    phasers_registration *self = arg;
    for (uint64_t p = 0; p < PHASES; p++) {
        atomic_fetch_add(&arrivals, 1);
        uint64_t phase = UINT64_MAX;
        EXPECT_OK(phasers_registration_next(self, &phase));
        CHECK(phase == p);
        /* Phase p completed only after every task arrived at it. */
        CHECK(atomic_load(&arrivals) >= (p + 1) * TASKS);
    }
    EXPECT_OK(phasers_registration_drop(self));
    return NULL;
}

static void next_across_threads(size_t tiers, size_t degree) {
    phasers_phaser *phaser;
    phasers_registration *creator;
    EXPECT_OK(phasers_phaser_create_tree(PHASERS_MODE_SIG_WAIT, tiers, degree, &phaser, &creator));
    atomic_store(&arrivals, 0);
    pthread_t ids[TASKS];
    phasers_registration *tasks[TASKS];
    for (int t = 0; t < TASKS; t++) {
        EXPECT_OK(phasers_registration_register(creator, PHASERS_MODE_SIG_WAIT, &tasks[t]));
    }
    /* The creator leaves: later phases wait only for the tasks. */
    EXPECT_OK(phasers_registration_drop(creator));
    for (int t = 0; t < TASKS; t++) {
        CHECK(pthread_create(&ids[t], NULL, advance, tasks[t]) == 0);
    }
    for (int t = 0; t < TASKS; t++) {
        CHECK(pthread_join(ids[t], NULL) == 0);
    }
    uint64_t phase;
    EXPECT_OK(phasers_phaser_phase(phaser, &phase));
    /* The last task's drop completes phase PHASES, in which nobody is left (as Java's
       arriveAndDeregister does), and the phaser then terminates at PHASES + 1. */
    CHECK(phase == PHASES + 1);
    EXPECT_OK(phasers_phaser_destroy(phaser));
}

static void split_phase_and_modes(void) {
    phasers_phaser *phaser;
    phasers_registration *main_reg, *producer, *consumer, *child;
    EXPECT_OK(phasers_phaser_create(PHASERS_MODE_SIG_WAIT, &phaser, &main_reg));
    EXPECT_OK(phasers_registration_register(main_reg, PHASERS_MODE_SIG, &producer));
    EXPECT_OK(phasers_registration_register(main_reg, PHASERS_MODE_WAIT, &consumer));

    /* Capabilities. */
    EXPECT_CODE(PHASERS_ECAPABILITY, phasers_registration_wait(producer, NULL));
    EXPECT_MESSAGE("PHASERS_MODE_SIG;");
    EXPECT_CODE(PHASERS_ECAPABILITY, phasers_registration_signal(consumer));
    EXPECT_CODE(PHASERS_ECAPABILITY,
                phasers_registration_register(producer, PHASERS_MODE_SIG_WAIT, &child));
    EXPECT_CODE(PHASERS_ECAPABILITY,
                phasers_registration_register(main_reg, PHASERS_MODE_SIG_WAIT_SINGLE, &child));
    EXPECT_CODE(PHASERS_EINVAL, phasers_registration_register(main_reg, 4, &child));
    EXPECT_CODE(PHASERS_EINVAL, phasers_registration_register(main_reg, -1, &child));
    EXPECT_CODE(PHASERS_ENULL, phasers_registration_register(main_reg, PHASERS_MODE_SIG, NULL));

    /* Phase 0: the producer signals (signal-only next never blocks and reports the phase it
       signalled), the main task splits its barrier, the consumer waits. */
    uint64_t phase = UINT64_MAX;
    EXPECT_OK(phasers_registration_next(producer, &phase));
    CHECK(phase == 0);
    EXPECT_OK(phasers_registration_signal(main_reg));
    EXPECT_OK(phasers_registration_wait(consumer, &phase));
    CHECK(phase == 0);
    EXPECT_OK(phasers_registration_wait(main_reg, &phase));
    CHECK(phase == 0);
    /* Phase 1: the producer runs ahead; the phase waits for the main task too. */
    EXPECT_OK(phasers_registration_next(producer, NULL));
    EXPECT_OK(phasers_phaser_phase(phaser, &phase));
    CHECK(phase == 1);
    EXPECT_OK(phasers_registration_next(main_reg, &phase));
    CHECK(phase == 1);
    EXPECT_OK(phasers_registration_next(consumer, &phase));
    CHECK(phase == 1);

    EXPECT_OK(phasers_registration_drop(producer));
    EXPECT_OK(phasers_registration_drop(consumer));
    EXPECT_OK(phasers_registration_drop(main_reg));
    EXPECT_OK(phasers_phaser_destroy(phaser));
}

static phasers_registration *busy_task;

static void *next_once(void *unused) {
    (void)unused;
    uint64_t phase;
    EXPECT_OK(phasers_registration_next(busy_task, &phase));
    CHECK(phase == 0);
    return NULL;
}

static void timeout_and_busy(void) {
    phasers_phaser *phaser;
    phasers_registration *poller, *late;
    EXPECT_OK(phasers_phaser_create(PHASERS_MODE_SIG_WAIT, &phaser, &poller)); /* id 0 */
    EXPECT_OK(phasers_registration_register(poller, PHASERS_MODE_SIG_WAIT, &busy_task)); /* 1 */
    EXPECT_OK(phasers_registration_register(poller, PHASERS_MODE_SIG_WAIT, &late));      /* 2 */
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, next_once, NULL) == 0);
    /* A timeout of 0 only checks: registration 2 has not signalled. */
    EXPECT_CODE(PHASERS_ETIMEDOUT, phasers_registration_next_timeout(poller, 0, NULL));
    /* The poller's signal stays in place across timeouts; once only registration 2 is missing,
       the thread has signalled inside phasers_registration_next and is waiting there. */
    for (;;) {
        EXPECT_CODE(PHASERS_ETIMEDOUT, phasers_registration_next_timeout(poller, 1000000, NULL));
        if (strstr(phasers_last_error(), "ranks [2]") != NULL) {
            break;
        }
        EXPECT_MESSAGE("ranks [1, 2]");
    }
    EXPECT_CODE(PHASERS_EBUSY, phasers_registration_next(busy_task, NULL));
    EXPECT_CODE(PHASERS_EBUSY, phasers_registration_drop(busy_task));
    uint64_t phase = UINT64_MAX;
    EXPECT_OK(phasers_registration_next(late, &phase));
    CHECK(phase == 0);
    EXPECT_OK(phasers_registration_next_timeout(poller, 1000000000, &phase));
    CHECK(phase == 0);
    CHECK(pthread_join(thread, NULL) == 0);
    EXPECT_OK(phasers_registration_drop(busy_task));
    EXPECT_OK(phasers_registration_drop(late));
    EXPECT_OK(phasers_registration_drop(poller));
    EXPECT_OK(phasers_phaser_destroy(phaser));
}

static phasers_registration *blocked;

static void *wait_until_terminated(void *unused) {
    (void)unused;
    EXPECT_CODE(PHASERS_ETERMINATED, phasers_registration_next(blocked, NULL));
    return NULL;
}

static void termination(void) {
    phasers_phaser *phaser;
    phasers_registration *creator, *never;
    EXPECT_OK(phasers_phaser_create(PHASERS_MODE_SIG_WAIT, &phaser, &creator));
    EXPECT_OK(phasers_registration_register(creator, PHASERS_MODE_SIG_WAIT, &blocked));
    EXPECT_OK(phasers_registration_register(creator, PHASERS_MODE_SIG_WAIT, &never));
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, wait_until_terminated, NULL) == 0);
    EXPECT_OK(phasers_phaser_terminate(phaser));
    CHECK(pthread_join(thread, NULL) == 0);
    EXPECT_CODE(PHASERS_ETERMINATED, phasers_registration_next(creator, NULL));
    EXPECT_MESSAGE("terminated");
    EXPECT_OK(phasers_registration_drop(blocked));
    EXPECT_OK(phasers_registration_drop(never));
    EXPECT_OK(phasers_registration_drop(creator));
    EXPECT_OK(phasers_phaser_destroy(phaser));

    /* Dropping the last registration that can signal terminates the phaser too. */
    phasers_registration *watcher;
    EXPECT_OK(phasers_phaser_create(PHASERS_MODE_SIG_WAIT, &phaser, &creator));
    EXPECT_OK(phasers_registration_register(creator, PHASERS_MODE_WAIT, &watcher));
    EXPECT_OK(phasers_registration_drop(creator));
    /* The drop completes phase 0, which the watcher sees; phase 1 never comes. */
    uint64_t completed = UINT64_MAX;
    EXPECT_OK(phasers_registration_wait(watcher, &completed));
    CHECK(completed == 0);
    EXPECT_CODE(PHASERS_ETERMINATED, phasers_registration_wait(watcher, NULL));
    EXPECT_OK(phasers_registration_drop(watcher));
    EXPECT_OK(phasers_phaser_destroy(phaser));
}

static void handle_lifetimes(void) {
    phasers_phaser *phaser;
    phasers_registration *creator, *child;
    EXPECT_OK(phasers_phaser_create(PHASERS_MODE_SIG_WAIT_SINGLE, &phaser, &creator));
    /* The registrations keep the phaser alive after its handle is destroyed. */
    EXPECT_OK(phasers_phaser_destroy(phaser));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_phaser_destroy(phaser));
    uint64_t phase;
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_phaser_phase(phaser, &phase));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_phaser_terminate(phaser));
    EXPECT_OK(phasers_registration_register(creator, PHASERS_MODE_SIG_WAIT, &child));
    EXPECT_OK(phasers_registration_signal(child));
    EXPECT_OK(phasers_registration_next(creator, &phase));
    CHECK(phase == 0);
    EXPECT_OK(phasers_registration_drop(child));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_registration_drop(child));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_registration_next(child, NULL));
    EXPECT_OK(phasers_registration_drop(creator));

    /* NULL, wrong kind, invalid values. */
    EXPECT_CODE(PHASERS_ENULL, phasers_registration_next(NULL, &phase));
    EXPECT_CODE(PHASERS_ENULL, phasers_registration_signal(NULL));
    EXPECT_CODE(PHASERS_ENULL, phasers_registration_drop(NULL));
    EXPECT_CODE(PHASERS_ENULL, phasers_phaser_phase(NULL, &phase));
    EXPECT_CODE(PHASERS_ENULL, phasers_phaser_create(PHASERS_MODE_SIG, NULL, &creator));
    EXPECT_CODE(PHASERS_ENULL, phasers_phaser_create(PHASERS_MODE_SIG, &phaser, NULL));
    EXPECT_CODE(PHASERS_EINVAL, phasers_phaser_create(4, &phaser, &creator));
    EXPECT_CODE(PHASERS_EINVAL, phasers_phaser_create_tree(PHASERS_MODE_SIG_WAIT, 0, 4, &phaser,
                                                           &creator));
    EXPECT_CODE(PHASERS_EINVAL, phasers_phaser_create_tree(PHASERS_MODE_SIG_WAIT, 2, 1, &phaser,
                                                           &creator));
    /* Sizes from a negative int or SIZE_MAX are refused at once, not looped over or allocated. */
    int negative = -1;
    EXPECT_CODE(PHASERS_EINVAL, phasers_phaser_create_tree(PHASERS_MODE_SIG_WAIT, (size_t)negative,
                                                           2, &phaser, &creator));
    EXPECT_MESSAGE("65536");
    EXPECT_CODE(PHASERS_EINVAL, phasers_phaser_create_tree(PHASERS_MODE_SIG_WAIT, SIZE_MAX,
                                                           SIZE_MAX, &phaser, &creator));
    EXPECT_CODE(PHASERS_EINVAL, phasers_phaser_create_tree(PHASERS_MODE_SIG_WAIT, 2, SIZE_MAX,
                                                           &phaser, &creator));
    EXPECT_CODE(PHASERS_EINVAL, phasers_phaser_create_tree(PHASERS_MODE_SIG_WAIT, 17, 2, &phaser,
                                                           &creator));
    /* A wait-only creator could never see a phase complete. */
    EXPECT_CODE(PHASERS_EINVAL, phasers_phaser_create(PHASERS_MODE_WAIT, &phaser, &creator));
    EXPECT_MESSAGE("PHASERS_MODE_WAIT");
    /* The largest trees work, and a timeout no clock can hold is no timeout. */
    EXPECT_OK(phasers_phaser_create_tree(PHASERS_MODE_SIG_WAIT, 16, 2, &phaser, &creator));
    phase = UINT64_MAX;
    EXPECT_OK(phasers_registration_next_timeout(creator, UINT64_MAX, &phase));
    CHECK(phase == 0);
    EXPECT_OK(phasers_registration_drop(creator));
    EXPECT_OK(phasers_phaser_destroy(phaser));
    EXPECT_OK(phasers_phaser_create_tree(PHASERS_MODE_SIG_WAIT, 2, 65535, &phaser, &creator));
    EXPECT_OK(phasers_registration_next(creator, &phase));
    CHECK(phase == 0);
    EXPECT_OK(phasers_registration_drop(creator));
    EXPECT_OK(phasers_phaser_destroy(phaser));
    phasers_barrier *barrier;
    EXPECT_OK(phasers_barrier_create(1, PHASERS_ALGORITHM_AUTO, &barrier));
    EXPECT_CODE(PHASERS_EDESTROYED,
                phasers_registration_next((phasers_registration *)(void *)barrier, NULL));
    EXPECT_MESSAGE("phasers_barrier handle");
    EXPECT_CODE(PHASERS_EDESTROYED,
                phasers_phaser_phase((const phasers_phaser *)(const void *)barrier, &phase));
    EXPECT_OK(phasers_barrier_destroy(barrier));
}

int main(void) {
    next_across_threads(1, 2);
    next_across_threads(2, 2);
    split_phase_and_modes();
    timeout_and_busy();
    termination();
    handle_lifetimes();
    printf("phaser ok\n");
    return 0;
}
