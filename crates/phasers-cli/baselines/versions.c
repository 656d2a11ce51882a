/* The versions a report needs to be reproduced: which compiler built the C baselines, and which
 * glibc they run on (read at run time: the binary may run on a newer glibc than it was built
 * against). */
#include "baselines.h"

#include <gnu/libc-version.h>
#include <omp.h>

const char *phasers_c_compiler_version(void)
{
    return "GCC " __VERSION__;
}

const char *phasers_glibc_version(void)
{
    return gnu_get_libc_version();
}

int64_t phasers_openmp_spec(void)
{
    return _OPENMP;
}
