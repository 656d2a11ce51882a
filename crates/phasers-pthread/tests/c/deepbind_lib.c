/* A shared library that calls pthread_barrier_* itself. deepbind.c loads it with
 * dlopen(..., RTLD_NOW | RTLD_DEEPBIND), so its references bind to its own dependencies first:
 * glibc's functions, even when LD_PRELOAD=libphasers_pthread.so replaces them for the program.
 */
#define _GNU_SOURCE
#include <pthread.h>

/* The function the library's calls go to, for dladdr. */
void *deepbind_wait_function(void) { return (void *)&pthread_barrier_wait; }

int deepbind_wait(pthread_barrier_t *barrier) { return pthread_barrier_wait(barrier); }

int deepbind_destroy(pthread_barrier_t *barrier) { return pthread_barrier_destroy(barrier); }
