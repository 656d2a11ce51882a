/* A barrier that the program initializes (through the preload, when it is loaded) and that a
 * library loaded with RTLD_DEEPBIND then uses through glibc's own functions (deepbind_lib.c).
 *
 * Without the preload every call is glibc's and all succeed. With it, the program's calls are the
 * preload's, and the library's are glibc's on the preload's layout: glibc's destroy does nothing
 * and returns 0, and glibc's wait stops the process with glibc's message "The futex facility
 * returned an unexpected error code." and abort() (SIGABRT), as the preload's README documents;
 * the layout the preload used before made glibc divide by a count of 0 (SIGFPE).
 *
 * Usage: deepbind LIBRARY      (the path of deepbind_lib.so)
 * Prints, in order:
 *   implementation: <the library the program's pthread_barrier_wait resolves to>
 *   program wait: <what the program's pthread_barrier_wait returned>
 *   library binds pthread_barrier_wait to: <the library the DEEPBIND library's calls go to>
 *   library destroy: <what the library's pthread_barrier_destroy returned on a second barrier>
 *   program destroy after library destroy: <what the program's destroy then returned>
 *   calling the library's wait
 *   library wait: <what it returned>           (only when it returns)
 *   all calls returned
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "FAIL: " __VA_ARGS__);                                                     \
        fprintf(stderr, "\n");                                                                     \
        exit(1);                                                                                   \
    } while (0)

static const char *library_of(void *address) {
    Dl_info info;
    if (!address || !dladdr(address, &info) || !info.dli_fname) return "?";
    return info.dli_fname;
}

int main(int argc, char **argv) {
    if (argc != 2) FAIL("usage: deepbind LIBRARY");
    /* The expected abort must not leave a core file behind. */
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    setvbuf(stdout, NULL, _IONBF, 0);

    printf("implementation: %s\n", library_of(dlsym(RTLD_DEFAULT, "pthread_barrier_wait")));

    /* Zeroed first, as static and calloc'ed barriers are: the old layout left glibc's count 0. */
    pthread_barrier_t barrier, second;
    memset(&barrier, 0, sizeof barrier);
    memset(&second, 0, sizeof second);
    if (pthread_barrier_init(&barrier, NULL, 1) != 0) FAIL("init");
    if (pthread_barrier_init(&second, NULL, 1) != 0) FAIL("init of the second barrier");
    printf("program wait: %d\n", pthread_barrier_wait(&barrier));

    void *library = dlopen(argv[1], RTLD_NOW | RTLD_DEEPBIND);
    if (!library) FAIL("dlopen: %s", dlerror());
    void *(*wait_function)(void) = (void *(*)(void))dlsym(library, "deepbind_wait_function");
    int (*library_wait)(pthread_barrier_t *) =
        (int (*)(pthread_barrier_t *))dlsym(library, "deepbind_wait");
    int (*library_destroy)(pthread_barrier_t *) =
        (int (*)(pthread_barrier_t *))dlsym(library, "deepbind_destroy");
    if (!wait_function || !library_wait || !library_destroy) FAIL("dlsym: %s", dlerror());
    printf("library binds pthread_barrier_wait to: %s\n", library_of(wait_function()));

    printf("library destroy: %d\n", library_destroy(&second));
    /* Under the preload glibc's destroy changed nothing, so the preload still frees its barrier;
       under glibc this destroys a destroyed barrier, which glibc allows. */
    printf("program destroy after library destroy: %d\n", pthread_barrier_destroy(&second));

    printf("calling the library's wait\n");
    int waited = library_wait(&barrier);
    printf("library wait: %d\n", waited);
    printf("all calls returned\n");
    return 0;
}
