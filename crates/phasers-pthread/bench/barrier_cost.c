/* Cost per barrier of pthread_barrier_wait: THREADS threads make ITERATIONS back-to-back waits
 * (after a warm-up of ITERATIONS / 10), and the program prints the mean time per barrier episode
 * in nanoseconds, measured by thread 0 between two waits that every thread takes part in.
 * Uses only the system's <pthread.h>, so the same binary measures glibc's barrier and, under
 * LD_PRELOAD=libphasers_pthread.so, the phasers one (scripts/bench-pthread-preload.sh runs both).
 *
 * Usage: barrier_cost THREADS ITERATIONS
 * Output: one line, "threads=<n> iterations=<n> ns_per_barrier=<x> implementation=<library>".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_barrier_t barrier;
static long iterations;
static double elapsed_ns;

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int wait_checked(void) {
    int status = pthread_barrier_wait(&barrier);
    if (status != 0 && status != PTHREAD_BARRIER_SERIAL_THREAD) {
        fprintf(stderr, "pthread_barrier_wait returned %d\n", status);
        exit(1);
    }
    return status;
}

static void *worker(void *arg) {
    long id = (long)arg;
    for (long i = 0; i < iterations / 10; i++) wait_checked();
    wait_checked(); /* everyone starts the timed loop together */
    double start = now_ns();
    for (long i = 0; i < iterations; i++) wait_checked();
    if (id == 0) elapsed_ns = now_ns() - start;
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s THREADS ITERATIONS\n", argv[0]);
        return 2;
    }
    int threads = atoi(argv[1]);
    iterations = atol(argv[2]);
    if (threads < 1 || iterations < 10) {
        fprintf(stderr, "THREADS must be at least 1 and ITERATIONS at least 10\n");
        return 2;
    }
    if (pthread_barrier_init(&barrier, NULL, (unsigned)threads) != 0) {
        fprintf(stderr, "pthread_barrier_init failed\n");
        return 1;
    }
    pthread_t *ids = malloc((size_t)threads * sizeof *ids);
    if (!ids) return 1;
    for (long t = 0; t < threads; t++) {
        if (pthread_create(&ids[t], NULL, worker, (void *)t) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    }
    for (int t = 0; t < threads; t++) pthread_join(ids[t], NULL);
    pthread_barrier_destroy(&barrier);
    free(ids);

    Dl_info info;
    const char *library = "unknown";
    void *address = dlsym(RTLD_DEFAULT, "pthread_barrier_wait");
    if (address && dladdr(address, &info) && info.dli_fname) library = info.dli_fname;
    printf("threads=%d iterations=%ld ns_per_barrier=%.1f implementation=%s\n", threads, iterations,
           elapsed_ns / (double)iterations, library);
    return 0;
}
