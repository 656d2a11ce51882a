/* The last arrival releases everyone, as glibc's pthread_barrier_wait guarantees: threads that
 * have already arrived do no further work for the episode to complete, so one of them may run a
 * signal handler that waits for another thread of the same episode to be released.
 *
 * Each round: a barrier of N parties and N threads, which arrive one at a time in a fixed order
 * (the next one only once the previous one sleeps inside pthread_barrier_wait). One of them, the
 * "awaited" thread, arrives at position P (0 = first, N - 1 = last). Every other thread that has
 * arrived before the last one gets SIGUSR1 through pthread_kill (mode "all"), or only the one at
 * position Q does (mode "one": every Q in turn); the handler spins, with 1 ms sleeps, until the
 * awaited thread's pthread_barrier_wait has returned. Then the last thread arrives. With glibc the
 * last arrival releases everyone, so the awaited thread returns and the handlers end.
 *
 * An implementation in which arrived threads must pass the release on (a tree's wake-ups, the
 * rounds of a dissemination or tournament barrier) hangs there instead: the awaited thread waits
 * for a thread that is stuck in its handler, which waits for the awaited thread. The program
 * detects that after TIMEOUT_MS, prints one "HANG:" line for the round, tells the handlers to give
 * up (so the stuck threads finish the episode and the program can go on), and exits with status
 * 2 at the end. Status 0 and "all rounds passed": no round hung. Status 1: another failure.
 *
 * Usage: signal_release TIMEOUT_MS MODE N...    (MODE: all or one)
 * Prints "implementation: <library>" first, one line per hung round, and a summary.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "FAIL: " __VA_ARGS__);                                                     \
        fprintf(stderr, "\n");                                                                     \
        exit(1);                                                                                   \
    } while (0)

/* How long an arrival may take to reach its sleep inside pthread_barrier_wait before the
   program assumes it has arrived anyway (a waiter that only spins never sleeps). */
#define ARRIVAL_GRACE_MS 2000

static void sleep_ms(long ms) {
    struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {
    }
}

static long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---- shared with the signal handler: lock-free atomics only ---- */

static atomic_long awaited_returned; /* the last round whose awaited thread's wait returned */
static atomic_long handler_round;    /* the round the handlers wait for */
static atomic_int give_up;           /* set when a round hung: the handlers return */
static atomic_int handlers_entered;
static atomic_int handlers_left;

static void handler(int signal) {
    (void)signal;
    int saved = errno;
    long round = atomic_load(&handler_round);
    atomic_fetch_add(&handlers_entered, 1);
    while (atomic_load(&awaited_returned) < round && !atomic_load(&give_up)) {
        struct timespec pause = {0, 1000000L};
        nanosleep(&pause, NULL); /* async-signal-safe */
    }
    atomic_fetch_add(&handlers_left, 1);
    errno = saved;
}

/* ---- the threads ---- */

struct worker {
    pthread_t id;
    atomic_int tid;
    atomic_long go;       /* the round in which to arrive next */
    atomic_long arriving; /* the round whose pthread_barrier_wait this thread is calling */
    atomic_long done;     /* the round whose pthread_barrier_wait has returned */
    int awaited;          /* this round's awaited thread */
};

static pthread_barrier_t barrier;
static atomic_int wait_errors;
static atomic_int serials;

static void *worker_main(void *arg) {
    struct worker *self = arg;
    atomic_store(&self->tid, (int)gettid());
    for (long last = 0;; ) {
        long round;
        while ((round = atomic_load(&self->go)) == last) sleep_ms(1);
        if (round < 0) return NULL;
        last = round;
        int awaited = self->awaited; /* written before `go` */
        atomic_store(&self->arriving, round);
        int status = pthread_barrier_wait(&barrier);
        if (awaited) atomic_store(&awaited_returned, round);
        if (status == PTHREAD_BARRIER_SERIAL_THREAD) {
            atomic_fetch_add(&serials, 1);
        } else if (status != 0) {
            fprintf(stderr, "FAIL: pthread_barrier_wait returned %d (%s)\n", status,
                    strerror(status));
            atomic_fetch_add(&wait_errors, 1);
        }
        atomic_store(&self->done, round);
    }
}

/* The thread's scheduler state from /proc ('S' while it sleeps), or 0 if it cannot be read. */
static char thread_state(int tid) {
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    FILE *file = fopen(path, "r");
    if (!file) return 0;
    size_t length = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    text[length] = 0;
    const char *close = strrchr(text, ')'); /* the name may hold spaces and parentheses */
    return close && close[1] == ' ' ? close[2] : 0;
}

/* Lets `w` arrive in `round` and returns once it sleeps inside pthread_barrier_wait. */
static void arrive(struct worker *w, long round) {
    atomic_store(&w->go, round);
    while (atomic_load(&w->arriving) < round) sleep_ms(1);
    long until = now_ms() + ARRIVAL_GRACE_MS;
    while (thread_state(atomic_load(&w->tid)) != 'S' && now_ms() < until) sleep_ms(1);
}

static int hung_rounds;
static long rounds;

/* One round: N parties, the awaited thread at position `awaited`, and the signalled positions
   (mask bit q: position q gets SIGUSR1 after arriving). */
static void round_of(struct worker *workers, int n, int awaited, unsigned long long signalled,
                     long timeout_ms, const char *what) {
    long round = ++rounds;
    for (int i = 0; i < n; i++) {
        workers[i].awaited = i == awaited;
    }
    atomic_store(&handler_round, round);
    atomic_store(&give_up, 0);
    int expected = 0;
    for (int position = 0; position < n - 1; position++) {
        arrive(&workers[position], round);
        if (signalled >> position & 1) {
            expected++;
            int error = pthread_kill(workers[position].id, SIGUSR1);
            if (error) FAIL("pthread_kill: %s", strerror(error));
            long until = now_ms() + ARRIVAL_GRACE_MS;
            while (atomic_load(&handlers_entered) < expected && now_ms() < until) sleep_ms(1);
            if (atomic_load(&handlers_entered) < expected) FAIL("the signal handler did not run");
        }
    }
    /* The last arrival, which must release everyone, the awaited thread included. */
    atomic_store(&workers[n - 1].go, round);
    long until = now_ms() + timeout_ms;
    while (atomic_load(&awaited_returned) < round && now_ms() < until) sleep_ms(1);
    if (atomic_load(&awaited_returned) < round) {
        hung_rounds++;
        printf("HANG: %d parties, awaited thread arrived %d of %d, %s: its pthread_barrier_wait "
               "had not returned %ld ms after the last arrival\n",
               n, awaited + 1, n, what, timeout_ms);
        fflush(stdout);
        atomic_store(&give_up, 1); /* the stuck threads finish the episode */
    }
    /* Everyone returns and every handler has ended before the next round. */
    until = now_ms() + 60000;
    for (int i = 0; i < n; i++) {
        while (atomic_load(&workers[i].done) < round && now_ms() < until) sleep_ms(1);
        if (atomic_load(&workers[i].done) < round) FAIL("a thread never returned, even after give-up");
    }
    while (atomic_load(&handlers_left) < expected && now_ms() < until) sleep_ms(1);
    atomic_store(&handlers_entered, 0);
    atomic_store(&handlers_left, 0);
    if (atomic_load(&serials) != 1) FAIL("round %ld had %d serial threads", round, atomic_load(&serials));
    atomic_store(&serials, 0);
}

static void parties(int n, int one, long timeout_ms) {
    if (pthread_barrier_init(&barrier, NULL, (unsigned)n) != 0) FAIL("init(%d)", n);
    struct worker *workers = calloc((size_t)n, sizeof *workers);
    if (!workers) FAIL("out of memory");
    for (int i = 0; i < n; i++) {
        if (pthread_create(&workers[i].id, NULL, worker_main, &workers[i]) != 0) FAIL("create");
    }
    for (int i = 0; i < n; i++) {
        while (atomic_load(&workers[i].tid) == 0) sleep_ms(1);
    }
    /* Warm-up: one episode with no signal (binds the symbols, builds lazy state). */
    round_of(workers, n, n - 1, 0, timeout_ms, "warm-up");
    for (int awaited = 0; awaited < n; awaited++) {
        unsigned long long before_last = (n - 1 >= 64) ? ~0ULL : (1ULL << (n - 1)) - 1;
        unsigned long long others = before_last & ~(1ULL << awaited);
        if (!one) {
            round_of(workers, n, awaited, others, timeout_ms, "every other arrived thread signalled");
            continue;
        }
        for (int q = 0; q < n - 1; q++) {
            if (!(others >> q & 1)) continue;
            char what[64];
            snprintf(what, sizeof what, "the thread that arrived %d signalled", q + 1);
            round_of(workers, n, awaited, 1ULL << q, timeout_ms, what);
        }
    }
    for (int i = 0; i < n; i++) atomic_store(&workers[i].go, -1);
    for (int i = 0; i < n; i++) pthread_join(workers[i].id, NULL);
    if (pthread_barrier_destroy(&barrier) != 0) FAIL("destroy");
    free(workers);
}

int main(int argc, char **argv) {
    if (argc < 4) FAIL("usage: signal_release TIMEOUT_MS all|one N...");
    long timeout_ms = atol(argv[1]);
    int one = strcmp(argv[2], "one") == 0;
    if (!one && strcmp(argv[2], "all") != 0) FAIL("mode must be all or one");

    Dl_info info;
    void *wait_address = dlsym(RTLD_DEFAULT, "pthread_barrier_wait");
    if (!wait_address || !dladdr(wait_address, &info) || !info.dli_fname) FAIL("dladdr");
    printf("implementation: %s\n", info.dli_fname);

    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    if (sigaction(SIGUSR1, &action, NULL) != 0) FAIL("sigaction");

    for (int i = 3; i < argc; i++) {
        int n = atoi(argv[i]);
        if (n < 2 || n > 64) FAIL("N must be 2 to 64");
        parties(n, one, timeout_ms);
    }
    if (atomic_load(&wait_errors)) FAIL("pthread_barrier_wait failed");
    printf("%ld rounds, %d hung\n", rounds, hung_rounds);
    if (hung_rounds) return 2;
    printf("all rounds passed\n");
    return 0;
}
