/* Threads that alternate computing and meeting at a phasers barrier, each naming itself by rank.
 *
 *     cc barrier.c $(pkg-config --cflags --libs phasers) \
 *         -Wl,-rpath,$(pkg-config --variable=libdir phasers) -lpthread -o barrier && ./barrier
 */
#include <phasers.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define THREADS 4
#define STEPS 1000

static phasers_barrier *barrier;
static double cells[THREADS];

static void *worker(void *arg) {
    size_t rank = (size_t)(uintptr_t)arg;
    for (int step = 0; step < STEPS; step++) {
        cells[rank] += 1.0; /* this step's work on the rank's own data */
        phasers_wait_result result;
        int rc = phasers_barrier_wait(barrier, rank, &result);
        if (rc != PHASERS_OK) {
            fprintf(stderr, "rank %zu: %s: %s\n", rank, phasers_strerror(rc), phasers_last_error());
            return (void *)1;
        }
        /* Every rank has finished the step: its neighbour's cell is safe to read. The leader (one
           rank per episode) could do a serial part here. */
        if (result.is_leader && result.episode % 250 == 0) {
            printf("step %llu done, neighbour of rank %zu has %.0f\n",
                   (unsigned long long)result.episode, rank, cells[(rank + 1) % THREADS]);
        }
        /* A second barrier: nobody starts writing the next step before everyone has read. */
        rc = phasers_barrier_wait(barrier, rank, NULL);
        if (rc != PHASERS_OK) {
            return (void *)1;
        }
    }
    return NULL;
}

int main(void) {
    int rc = phasers_barrier_create(THREADS, PHASERS_ALGORITHM_AUTO, &barrier);
    if (rc != PHASERS_OK) {
        fprintf(stderr, "create: %s\n", phasers_last_error());
        return 1;
    }
    int algorithm;
    phasers_barrier_algorithm(barrier, &algorithm);
    printf("%d threads on a %s barrier\n", THREADS, phasers_algorithm_name(algorithm));

    pthread_t threads[THREADS];
    for (size_t t = 0; t < THREADS; t++) {
        pthread_create(&threads[t], NULL, worker, (void *)(uintptr_t)t);
    }
    int failed = 0;
    for (size_t t = 0; t < THREADS; t++) {
        void *status;
        pthread_join(threads[t], &status);
        failed |= status != NULL;
    }
    phasers_barrier_destroy(barrier);
    for (size_t t = 0; t < THREADS; t++) {
        failed |= cells[t] != STEPS;
    }
    printf(failed ? "FAILED\n" : "every rank did %d steps\n", STEPS);
    return failed;
}
