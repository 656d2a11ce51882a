/* What pthread barriers cost in memory: initializes BARRIERS barriers of COUNT parties each and
 * prints the growth of the resident set (Rss in /proc/self/smaps_rollup, else VmRSS in
 * /proc/self/status) per barrier and per party.
 * The preload builds and writes all of a barrier's state in pthread_barrier_init, so no wait is
 * needed (and one thread could not complete an episode of COUNT parties); glibc's barrier lives
 * entirely inside the pthread_barrier_t and costs nothing more.
 * Run it once per measurement, in a fresh process: memory freed earlier would be reused and hide
 * the cost.
 *
 * Usage: barrier_memory COUNT BARRIERS
 * Output: one line,
 *   "count=<n> barriers=<n> rss_growth_kib=<n> bytes_per_barrier=<n> bytes_per_party=<n>
 *    implementation=<library>"
 * where bytes_per_party is bytes_per_barrier / COUNT. Exit status 0, or 1 when an init fails
 * (the line then says which, with its error).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The resident set in KiB: "Rss:" in /proc/self/smaps_rollup, which the kernel counts by walking
   the page tables, else "VmRSS:" in /proc/self/status, whose counters the kernel may update
   lazily (a few hundred KiB off). */
static long rss_kib(void) {
    static const struct {
        const char *path, *format;
    } sources[] = {{"/proc/self/smaps_rollup", "Rss: %ld kB"}, {"/proc/self/status", "VmRSS: %ld kB"}};
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++) {
        FILE *file = fopen(sources[i].path, "r");
        if (!file) continue;
        char line[256];
        long kib = -1;
        while (fgets(line, sizeof line, file)) {
            if (sscanf(line, sources[i].format, &kib) == 1) break;
        }
        fclose(file);
        if (kib >= 0) return kib;
    }
    return -1;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: barrier_memory COUNT BARRIERS\n");
        return 2;
    }
    unsigned count = (unsigned)strtoul(argv[1], NULL, 10);
    long barriers = atol(argv[2]);
    if (count == 0 || barriers <= 0) {
        fprintf(stderr, "COUNT and BARRIERS must be positive\n");
        return 2;
    }
    Dl_info info;
    void *wait_address = dlsym(RTLD_DEFAULT, "pthread_barrier_wait");
    const char *implementation =
        wait_address && dladdr(wait_address, &info) && info.dli_fname ? info.dli_fname : "?";

    /* The array itself is allocated and touched first, so that only the barriers' own memory
       counts. A barrier of 1 first, so that the library's lazy state (configuration, the
       system functions) is in place too. */
    pthread_barrier_t *all = malloc((size_t)barriers * sizeof *all);
    if (!all) return 2;
    memset(all, 0xA5, (size_t)barriers * sizeof *all); /* not 0: the compiler may skip that */
    pthread_barrier_t warm;
    if (pthread_barrier_init(&warm, NULL, 1) != 0) return 2;
    if (pthread_barrier_wait(&warm) != PTHREAD_BARRIER_SERIAL_THREAD) return 2;

    long before = rss_kib();
    for (long i = 0; i < barriers; i++) {
        int error = pthread_barrier_init(&all[i], NULL, count);
        if (error) {
            printf("count=%u barriers=%ld init_failed=%s implementation=%s\n", count, barriers,
                   strerror(error), implementation);
            return 1;
        }
    }
    long after = rss_kib();
    double bytes = (double)(after - before) * 1024.0 / (double)barriers;
    printf("count=%u barriers=%ld rss_growth_kib=%ld bytes_per_barrier=%.0f bytes_per_party=%.1f "
           "implementation=%s\n",
           count, barriers, after - before, bytes, bytes / count, implementation);
    for (long i = 0; i < barriers; i++) pthread_barrier_destroy(&all[i]);
    pthread_barrier_destroy(&warm);
    free(all);
    return 0;
}
