/* The barrier invariant through the C API: usage: barrier_invariant ALGORITHM THREADS EPISODES.
   Each thread (rank = its index) publishes the episode it is about to wait for; after the wait of
   episode e returns, every thread must have published at least e + 1 (nobody left before all
   arrived). Each episode number must come back to every rank, with exactly one leader. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"

static phasers_barrier *barrier;
static size_t threads;
static uint64_t episodes;
static atomic_uint_fast64_t *arrived;   /* arrived[t]: episodes thread t has arrived at */
static atomic_uint *leaders;            /* leaders[e]: ranks that led episode e */

static void *run(void *arg) {
    size_t rank = (size_t)(uintptr_t)arg;
    for (uint64_t e = 0; e < episodes; e++) {
        atomic_store_explicit(&arrived[rank], e + 1, memory_order_release);
        phasers_wait_result result;
        EXPECT_OK(phasers_barrier_wait(barrier, rank, &result));
        CHECK(result.episode == e);
        CHECK(result.is_leader == 0 || result.is_leader == 1);
        if (result.is_leader) {
            atomic_fetch_add(&leaders[e], 1);
        }
        for (size_t other = 0; other < threads; other++) {
            uint64_t seen = atomic_load_explicit(&arrived[other], memory_order_acquire);
            if (seen < e + 1) {
                fprintf(stderr, "rank %zu left episode %llu while rank %zu had arrived at only %llu\n",
                        rank, (unsigned long long)e, other, (unsigned long long)seen);
                exit(1);
            }
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s ALGORITHM THREADS EPISODES\n", argv[0]);
        return 2;
    }
    int algorithm = atoi(argv[1]);
    threads = (size_t)strtoul(argv[2], NULL, 10);
    episodes = strtoull(argv[3], NULL, 10);
    arrived = calloc(threads, sizeof *arrived);
    leaders = calloc(episodes, sizeof *leaders);
    pthread_t *ids = calloc(threads, sizeof *ids);
    CHECK(arrived != NULL && leaders != NULL && ids != NULL);

    EXPECT_OK(phasers_barrier_create(threads, algorithm, &barrier));
    size_t parties = 0;
    EXPECT_OK(phasers_barrier_parties(barrier, &parties));
    CHECK(parties == threads);
    int resolved = -1;
    EXPECT_OK(phasers_barrier_algorithm(barrier, &resolved));
    CHECK(resolved > PHASERS_ALGORITHM_AUTO && resolved <= PHASERS_ALGORITHM_TOURNAMENT);
    if (algorithm != PHASERS_ALGORITHM_AUTO) {
        CHECK(resolved == algorithm);
    }

    for (size_t t = 0; t < threads; t++) {
        CHECK(pthread_create(&ids[t], NULL, run, (void *)(uintptr_t)t) == 0);
    }
    for (size_t t = 0; t < threads; t++) {
        CHECK(pthread_join(ids[t], NULL) == 0);
    }
    for (uint64_t e = 0; e < episodes; e++) {
        if (atomic_load(&leaders[e]) != 1) {
            fprintf(stderr, "episode %llu had %u leaders\n", (unsigned long long)e,
                    atomic_load(&leaders[e]));
            return 1;
        }
    }
    EXPECT_OK(phasers_barrier_destroy(barrier));
    printf("%s: %zu threads x %llu episodes ok\n", phasers_algorithm_name(resolved), threads,
           (unsigned long long)episodes);
    free(arrived);
    free((void *)leaders);
    free(ids);
    return 0;
}
