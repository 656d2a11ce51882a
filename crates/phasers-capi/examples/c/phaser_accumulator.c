/* Tasks registered on a phaser sum their values each phase through an accumulator; a producer
 * registered signal-only runs ahead without waiting.
 *
 *     cc phaser_accumulator.c $(pkg-config --cflags --libs phasers) \
 *         -Wl,-rpath,$(pkg-config --variable=libdir phasers) -lpthread -o phaser_accumulator
 */
#include <phasers.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define TASKS 3
#define PHASES 4

static phasers_accumulator *total;

struct task {
    phasers_registration *registration;
    int64_t id;
};

static void *work(void *arg) {
    struct task *task = (struct task *)arg;
    for (int64_t phase = 0; phase < PHASES; phase++) {
        /* Contribute to this phase's sum, then advance: next returns when every task has. */
        if (phasers_accumulator_send_i64(total, task->registration, task->id * 10 + phase) !=
                PHASERS_OK ||
            phasers_registration_next(task->registration, NULL) != PHASERS_OK) {
            fprintf(stderr, "task %lld: %s\n", (long long)task->id, phasers_last_error());
            return (void *)1;
        }
    }
    phasers_registration_drop(task->registration); /* deregisters */
    return NULL;
}

static int check(int rc, const char *what) {
    if (rc != PHASERS_OK) {
        fprintf(stderr, "%s: %s (%s)\n", what, phasers_strerror(rc), phasers_last_error());
    }
    return rc != PHASERS_OK;
}

int main(void) {
    phasers_phaser *phaser;
    phasers_registration *main_task;
    if (check(phasers_phaser_create(PHASERS_MODE_SIG_WAIT, &phaser, &main_task), "create") ||
        check(phasers_accumulator_create(phaser, PHASERS_TYPE_I64, PHASERS_OP_SUM, 0, &total),
              "accumulator")) {
        return 1;
    }
    struct task tasks[TASKS];
    pthread_t threads[TASKS];
    for (int t = 0; t < TASKS; t++) {
        tasks[t].id = t + 1;
        if (check(phasers_registration_register(main_task, PHASERS_MODE_SIG_WAIT,
                                                &tasks[t].registration),
                  "register")) {
            return 1;
        }
        pthread_create(&threads[t], NULL, work, &tasks[t]);
    }
    int failed = 0;
    for (int phase = 0; phase < PHASES; phase++) {
        uint64_t completed;
        int64_t sum;
        if (check(phasers_registration_next(main_task, &completed), "next") ||
            check(phasers_accumulator_result_i64(total, &sum), "result")) {
            return 1;
        }
        /* Tasks 1, 2, 3 sent 10 + phase, 20 + phase, 30 + phase. */
        int64_t expected = 60 + 3 * phase;
        printf("phase %llu: sum %lld\n", (unsigned long long)completed, (long long)sum);
        failed |= sum != expected;
    }
    for (int t = 0; t < TASKS; t++) {
        void *status;
        pthread_join(threads[t], &status);
        failed |= status != NULL;
    }
    phasers_accumulator_destroy(total);
    phasers_registration_drop(main_task);
    phasers_phaser_destroy(phaser);
    printf(failed ? "FAILED\n" : "ok\n");
    return failed;
}
