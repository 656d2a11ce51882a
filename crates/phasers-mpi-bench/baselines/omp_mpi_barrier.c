/* The EPCC mixed-mode barrier: every thread of every rank meets by an OpenMP barrier, then the
 * master thread runs MPI_Barrier, then a second OpenMP barrier releases the threads. This is what
 * a hybrid MPI+OpenMP program writes today, and the baseline of the combined barrier (seed 001). */

#include <mpi.h>
#include <omp.h>
#include <stdint.h>

/* Runs `iterations` mixed-mode barriers with `threads` OpenMP threads on this rank, inside one
 * parallel region. Returns the size of the team OpenMP gave (the caller checks it is `threads`),
 * or -1 when an MPI_Barrier failed. The master thread is the caller, so MPI_THREAD_FUNNELED is
 * enough. */
int phasers_mpi_omp_mpi_barrier(MPI_Comm comm, int threads, int64_t iterations)
{
    int team = 0;
    int failed = 0;
#pragma omp parallel num_threads(threads) shared(team, failed)
    {
#pragma omp master
        team = omp_get_num_threads();
        for (int64_t i = 0; i < iterations; i++) {
#pragma omp barrier
#pragma omp master
            {
                if (MPI_Barrier(comm) != MPI_SUCCESS)
                    failed = 1;
            }
#pragma omp barrier
        }
    }
    return failed ? -1 : team;
}
