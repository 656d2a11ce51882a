/* Checks pthread barriers through the system's <pthread.h> only: run it with and without
 * LD_PRELOAD=libphasers_pthread.so. It exits with status 0 when every check passed, and prints
 * what it found out about the implementation:
 *
 *   implementation: <the library pthread_barrier_wait resolves to>
 *   phasers_pthread_active: <-1 when the preload is not loaded, else what it returns>
 *   private_magic: <1 when a private barrier carries the preload's layout and live state, else 0>
 *   shared_magic: <the same for a process-shared barrier (the preload leaves those to glibc)>
 *
 * Checks, for 2, 3, 8 and 64 threads: each thread increments an arrival counter before every
 * wait and checks after it that at least (episode + 1) * threads arrivals happened; exactly one
 * wait per episode returns PTHREAD_BARRIER_SERIAL_THREAD, the others 0. Then: the serial thread
 * destroys the barrier as soon as its wait returns (the others may still be returning) and
 * initializes it again; count 0 gives EINVAL; a process-shared barrier works across threads and
 * across a fork. With the preload active also: destroy while a thread waits at an incomplete
 * episode gives EBUSY and changes nothing, and wait or destroy after destroy give EINVAL.
 *
 * Usage: barrier_invariant [episodes]   (default 2000; 64 threads run a tenth of it)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "FAIL: " __VA_ARGS__);                                                     \
        fprintf(stderr, "\n");                                                                     \
        exit(1);                                                                                   \
    } while (0)

/* The preload's layout (its README): glibc's count field (bytes 8..12) all ones, its shared field
   (12..16) "PHAS", and the state word (20..24) "ERS1" while the barrier is live. */
static int has_magic(const pthread_barrier_t *barrier) {
    const char *bytes = (const char *)barrier;
    static const char count[4] = {'\xff', '\xff', '\xff', '\xff'};
    return memcmp(bytes + 8, count, 4) == 0 && memcmp(bytes + 12, "PHAS", 4) == 0 &&
           memcmp(bytes + 20, "ERS1", 4) == 0;
}

static void sleep_ms(long ms) {
    struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
}

/* ---- the invariant, and the serial thread destroying and re-initializing ---- */

struct run {
    pthread_barrier_t barrier;
    pthread_barrier_t gate; /* orders re-initialization before the next use */
    int threads;
    long episodes;
    int reinit; /* the serial thread destroys and re-initializes `barrier` every episode */
    atomic_long arrivals;
    atomic_int *serials; /* per episode */
    atomic_int failed;
};

static void *run_thread(void *arg) {
    struct run *run = arg;
    for (long episode = 0; episode < run->episodes; episode++) {
        atomic_fetch_add_explicit(&run->arrivals, 1, memory_order_relaxed);
        int status = pthread_barrier_wait(&run->barrier);
        long seen = atomic_load_explicit(&run->arrivals, memory_order_relaxed);
        if (status != 0 && status != PTHREAD_BARRIER_SERIAL_THREAD) {
            fprintf(stderr, "FAIL: pthread_barrier_wait returned %d (%s)\n", status, strerror(status));
            atomic_store(&run->failed, 1);
            return NULL;
        }
        if (seen < (episode + 1) * run->threads) {
            fprintf(stderr, "FAIL: %d threads: left episode %ld having seen %ld arrivals\n",
                    run->threads, episode, seen);
            atomic_store(&run->failed, 1);
        }
        if (status == PTHREAD_BARRIER_SERIAL_THREAD) {
            atomic_fetch_add_explicit(&run->serials[episode], 1, memory_order_relaxed);
        }
        if (run->reinit) {
            if (status == PTHREAD_BARRIER_SERIAL_THREAD) {
                /* The others may still be inside pthread_barrier_wait: destroy must wait for
                   them, not fail. */
                int destroyed = pthread_barrier_destroy(&run->barrier);
                if (destroyed != 0) {
                    fprintf(stderr, "FAIL: destroy right after wait returned %d (%s)\n", destroyed,
                            strerror(destroyed));
                    atomic_store(&run->failed, 1);
                }
                if (pthread_barrier_init(&run->barrier, NULL, (unsigned)run->threads) != 0) {
                    fprintf(stderr, "FAIL: re-init failed\n");
                    atomic_store(&run->failed, 1);
                }
            }
            pthread_barrier_wait(&run->gate);
        }
    }
    return NULL;
}

static void invariant(int threads, long episodes, int reinit) {
    struct run run;
    memset(&run, 0, sizeof run);
    run.threads = threads;
    run.episodes = episodes;
    run.reinit = reinit;
    run.serials = calloc((size_t)episodes, sizeof *run.serials);
    if (!run.serials) FAIL("out of memory");
    if (pthread_barrier_init(&run.barrier, NULL, (unsigned)threads) != 0) FAIL("init");
    if (pthread_barrier_init(&run.gate, NULL, (unsigned)threads) != 0) FAIL("init gate");
    pthread_t *ids = calloc((size_t)threads, sizeof *ids);
    if (!ids) FAIL("out of memory");
    for (int t = 0; t < threads; t++) {
        if (pthread_create(&ids[t], NULL, run_thread, &run) != 0) FAIL("pthread_create");
    }
    for (int t = 0; t < threads; t++) pthread_join(ids[t], NULL);
    if (atomic_load(&run.failed)) exit(1);
    for (long episode = 0; episode < episodes; episode++) {
        int serials = atomic_load(&run.serials[episode]);
        if (serials != 1) {
            FAIL("%d threads: episode %ld had %d serial threads", threads, episode, serials);
        }
    }
    if (pthread_barrier_destroy(&run.barrier) != 0) FAIL("final destroy");
    if (pthread_barrier_destroy(&run.gate) != 0) FAIL("final destroy of the gate");
    free(ids);
    free(run.serials);
    printf("ok: %d threads x %ld episodes%s\n", threads, episodes,
           reinit ? ", serial thread destroys and re-initializes" : "");
}

/* ---- process-shared: falls back to the system, works across threads and a fork ---- */

static void process_shared(long episodes, int *magic) {
    pthread_barrierattr_t attr;
    if (pthread_barrierattr_init(&attr) != 0) FAIL("barrierattr_init");
    if (pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED) != 0) FAIL("setpshared");
    pthread_barrier_t *barrier = mmap(NULL, sizeof *barrier, PROT_READ | PROT_WRITE,
                                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (barrier == MAP_FAILED) FAIL("mmap");
    if (pthread_barrier_init(barrier, &attr, 2) != 0) FAIL("process-shared init");
    *magic = has_magic(barrier);
    pid_t child = fork();
    if (child < 0) FAIL("fork");
    int serials = 0;
    for (long episode = 0; episode < episodes; episode++) {
        int status = pthread_barrier_wait(barrier);
        if (status == PTHREAD_BARRIER_SERIAL_THREAD) {
            serials++;
        } else if (status != 0) {
            fprintf(stderr, "FAIL: process-shared wait returned %d\n", status);
            _exit(1);
        }
    }
    if (child == 0) _exit(serials > 255 ? 255 : serials);
    int child_status = 0;
    if (waitpid(child, &child_status, 0) != child) FAIL("waitpid");
    if (!WIFEXITED(child_status)) FAIL("the child process did not exit normally");
    int child_serials = WEXITSTATUS(child_status);
    if (episodes <= 255 && serials + child_serials != episodes) {
        FAIL("process-shared: %d + %d serial returns for %ld episodes", serials, child_serials,
             episodes);
    }
    if (pthread_barrier_destroy(barrier) != 0) FAIL("process-shared destroy");
    munmap(barrier, sizeof *barrier);
    pthread_barrierattr_destroy(&attr);
    printf("ok: process-shared barrier across a fork, %ld episodes\n", episodes);
}

/* ---- the preload's own errors ---- */

static pthread_barrier_t busy_barrier;
static atomic_int busy_arriving;

static void *busy_waiter(void *arg) {
    (void)arg;
    atomic_store(&busy_arriving, 1);
    return (void *)(long)pthread_barrier_wait(&busy_barrier);
}

static void preload_errors(void) {
    /* EBUSY: one of two calls waits. The waiter announces itself just before its call; if destroy
       wins the race anyway, the waiter gets EINVAL and the attempt is repeated. */
    int busy_seen = 0;
    for (int attempt = 0; attempt < 20 && !busy_seen; attempt++) {
        if (pthread_barrier_init(&busy_barrier, NULL, 2) != 0) FAIL("init");
        atomic_store(&busy_arriving, 0);
        pthread_t waiter;
        if (pthread_create(&waiter, NULL, busy_waiter, NULL) != 0) FAIL("pthread_create");
        while (!atomic_load(&busy_arriving)) sleep_ms(1);
        sleep_ms(20);
        int destroyed = pthread_barrier_destroy(&busy_barrier);
        void *waited = NULL;
        if (destroyed == EBUSY) {
            busy_seen = 1;
            /* Nothing changed: this call completes the episode and releases the waiter. */
            int mine = pthread_barrier_wait(&busy_barrier);
            pthread_join(waiter, &waited);
            int theirs = (int)(long)waited;
            if (!((mine == 0 && theirs == PTHREAD_BARRIER_SERIAL_THREAD) ||
                  (mine == PTHREAD_BARRIER_SERIAL_THREAD && theirs == 0))) {
                FAIL("after EBUSY the episode returned %d and %d", mine, theirs);
            }
            if (pthread_barrier_destroy(&busy_barrier) != 0) FAIL("destroy after the episode");
        } else if (destroyed == 0) {
            pthread_join(waiter, &waited);
            if ((int)(long)waited != EINVAL) {
                FAIL("a wait that started after destroy returned %d", (int)(long)waited);
            }
        } else {
            FAIL("destroy with a waiting thread returned %d", destroyed);
        }
    }
    if (!busy_seen) FAIL("destroy never returned EBUSY while a thread waited");
    printf("ok: destroy while a thread waits gives EBUSY\n");

    /* After destroy: EINVAL, without touching freed memory. */
    pthread_barrier_t barrier;
    if (pthread_barrier_init(&barrier, NULL, 1) != 0) FAIL("init");
    if (pthread_barrier_wait(&barrier) != PTHREAD_BARRIER_SERIAL_THREAD) FAIL("one-party wait");
    if (pthread_barrier_destroy(&barrier) != 0) FAIL("destroy");
    int waited = pthread_barrier_wait(&barrier);
    if (waited != EINVAL) FAIL("wait after destroy returned %d, expected EINVAL", waited);
    int again = pthread_barrier_destroy(&barrier);
    if (again != EINVAL) FAIL("destroy after destroy returned %d, expected EINVAL", again);
    if (pthread_barrier_init(&barrier, NULL, 1) != 0) FAIL("init after destroy");
    if (pthread_barrier_wait(&barrier) != PTHREAD_BARRIER_SERIAL_THREAD) FAIL("reused wait");
    if (pthread_barrier_destroy(&barrier) != 0) FAIL("destroy of the reused barrier");
    printf("ok: wait and destroy after destroy give EINVAL\n");
}

int main(int argc, char **argv) {
    long episodes = argc > 1 ? atol(argv[1]) : 2000;
    if (episodes < 10) FAIL("episodes must be at least 10");

    Dl_info info;
    void *wait_address = dlsym(RTLD_DEFAULT, "pthread_barrier_wait");
    if (!wait_address || !dladdr(wait_address, &info) || !info.dli_fname) FAIL("dladdr");
    printf("implementation: %s\n", info.dli_fname);
    int (*active_fn)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "phasers_pthread_active");
    int active = active_fn ? active_fn() : -1;
    printf("phasers_pthread_active: %d\n", active);

    pthread_barrier_t barrier;
    if (pthread_barrier_init(&barrier, NULL, 0) != EINVAL) FAIL("count 0 must give EINVAL");
    printf("ok: count 0 gives EINVAL\n");
    memset(&barrier, 0, sizeof barrier);
    if (pthread_barrier_init(&barrier, NULL, 2) != 0) FAIL("init");
    printf("private_magic: %d\n", has_magic(&barrier));
    if (pthread_barrier_destroy(&barrier) != 0) FAIL("destroy");

    int threads[] = {2, 3, 8, 64};
    for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
        long n = threads[i] > 8 ? episodes / 10 : episodes;
        invariant(threads[i], n, 0);
    }
    invariant(3, episodes / 10, 1);
    invariant(8, episodes / 10, 1);

    int shared_magic = 0;
    process_shared(episodes / 10 > 255 ? 255 : episodes / 10, &shared_magic);
    printf("shared_magic: %d\n", shared_magic);

    if (active == 1) preload_errors();
    printf("all checks passed\n");
    return 0;
}
