/* pthread_barrier_t behind an opaque pointer, so Rust needs neither the libc crate nor
 * glibc's layout of the type. */
#include "baselines.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

/* Aligned and sized to 128 bytes (two cache lines, for the adjacent-line prefetcher), so the
 * barrier's words share no line with unrelated heap data: the baseline gets the best placement a
 * careful user would give it. */
struct phasers_pthread_barrier {
    _Alignas(128) pthread_barrier_t barrier;
};

phasers_pthread_barrier *phasers_pthread_barrier_create(uint32_t parties, int *error)
{
    void *memory = NULL;
    int code = posix_memalign(&memory, _Alignof(phasers_pthread_barrier),
                              sizeof(phasers_pthread_barrier));
    if (code != 0) {
        *error = code;
        return NULL;
    }
    phasers_pthread_barrier *shim = memory;
    code = pthread_barrier_init(&shim->barrier, NULL, parties);
    if (code != 0) {
        free(shim);
        *error = code;
        return NULL;
    }
    return shim;
}

int phasers_pthread_barrier_wait(phasers_pthread_barrier *shim)
{
    int code = pthread_barrier_wait(&shim->barrier);
    return code == PTHREAD_BARRIER_SERIAL_THREAD ? 0 : code;
}

void phasers_pthread_barrier_destroy(phasers_pthread_barrier *shim)
{
    if (shim == NULL) {
        return;
    }
    /* glibc's destroy waits for waiters still on their way out of the last episode; it cannot
     * fail for a barrier nobody waits on, which is all the caller may destroy. */
    pthread_barrier_destroy(&shim->barrier);
    free(shim);
}
