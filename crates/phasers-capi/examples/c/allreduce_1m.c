/* Times an allreduce of 1M (2^20) doubles across 2 threads, to compare the C interface with Rust.
 *
 *     cc -O2 allreduce_1m.c $(pkg-config --cflags --libs phasers) \
 *         -Wl,-rpath,$(pkg-config --variable=libdir phasers) -lpthread -o allreduce_1m
 *     ./allreduce_1m [iterations] [reduction|team]
 *
 * `reduction` (the default) runs phasers_reduction_allreduce (PHASERS_REDUCE_AUTO), `team` runs
 * phasers_member_allreduce. Each thread makes one call to warm up, then `iterations` (default 100)
 * timed calls; the program prints rank 0's time per call in nanoseconds and checks the sums.
 * Build the library with --release for numbers worth comparing.
 */
#define _POSIX_C_SOURCE 200809L

#include <phasers.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define THREADS 2
#define COUNT (1u << 20)

static long iterations = 100;
static int use_team;
static phasers_reduction *reduction;
static phasers_member *members[THREADS];
static double elapsed_ns[THREADS];

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int allreduce(size_t rank, const double *input, double *output) {
    if (use_team) {
        return phasers_member_allreduce(members[rank], PHASERS_TYPE_F64, PHASERS_OP_SUM, input,
                                        output, COUNT);
    }
    return phasers_reduction_allreduce(reduction, rank, input, output, COUNT);
}

static void *worker(void *arg) {
    size_t rank = (size_t)(uintptr_t)arg;
    double *input = malloc(COUNT * sizeof(double));
    double *output = malloc(COUNT * sizeof(double));
    if (input == NULL || output == NULL) {
        fprintf(stderr, "out of memory\n");
        return (void *)1;
    }
    for (size_t i = 0; i < COUNT; i++) {
        input[i] = (double)(rank + 1) + (double)(i % 7);
    }
    void *status = NULL;
    int rc = allreduce(rank, input, output); /* warm-up: first touch of the buffers */
    int64_t start = now_ns();
    for (long call = 0; call < iterations && rc == PHASERS_OK; call++) {
        rc = allreduce(rank, input, output);
    }
    elapsed_ns[rank] = (double)(now_ns() - start);
    if (rc != PHASERS_OK) {
        fprintf(stderr, "rank %zu: %s: %s\n", rank, phasers_strerror(rc), phasers_last_error());
        status = (void *)1;
    }
    /* Every element holds the sum over the ranks: 1 + 2 + 2 * (i % 7). */
    for (size_t i = 0; status == NULL && i < COUNT; i++) {
        if (output[i] != 3.0 + 2.0 * (double)(i % 7)) {
            fprintf(stderr, "rank %zu: element %zu is %g\n", rank, i, output[i]);
            status = (void *)1;
        }
    }
    free(input);
    free(output);
    return status;
}

int main(int argc, char **argv) {
    if (argc > 1) {
        iterations = strtol(argv[1], NULL, 10);
    }
    if (argc > 2) {
        use_team = strcmp(argv[2], "team") == 0;
    }
    if (iterations < 1) {
        fprintf(stderr, "usage: %s [iterations >= 1] [reduction|team]\n", argv[0]);
        return 2;
    }
    phasers_team *team = NULL;
    int rc = PHASERS_OK;
    if (use_team) {
        rc = phasers_team_create(THREADS, 1, &team);
        for (size_t r = 0; r < THREADS && rc == PHASERS_OK; r++) {
            rc = phasers_team_member(team, r, &members[r]);
        }
    } else {
        rc = phasers_reduction_create(THREADS, PHASERS_TYPE_F64, PHASERS_OP_SUM,
                                      PHASERS_REDUCE_AUTO, 0, &reduction);
    }
    if (rc != PHASERS_OK) {
        fprintf(stderr, "setup: %s\n", phasers_last_error());
        return 1;
    }
    pthread_t threads[THREADS];
    for (uintptr_t r = 0; r < THREADS; r++) {
        pthread_create(&threads[r], NULL, worker, (void *)r);
    }
    int failed = 0;
    for (int r = 0; r < THREADS; r++) {
        void *status;
        pthread_join(threads[r], &status);
        failed |= status != NULL;
    }
    if (use_team) {
        for (int r = 0; r < THREADS; r++) {
            phasers_member_destroy(members[r]);
        }
        phasers_team_destroy(team);
    } else {
        phasers_reduction_destroy(reduction);
    }
    if (failed) {
        return 1;
    }
    printf("%s allreduce of %u doubles, %d threads, %ld calls: %.0f ns per call\n",
           use_team ? "team" : "reduction", COUNT, THREADS, iterations,
           elapsed_ns[0] / (double)iterations);
    return 0;
}
