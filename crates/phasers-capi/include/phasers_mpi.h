/*
 * phasers_mpi.h: phasers across MPI processes, from C and C++ MPI programs.
 *
 * Needs libphasers built with the cargo feature `mpi`, installed (scripts/install-capi.sh --mpi
 * PREFIX, which also installs this header and phasers-mpi.pc) or in the build tree:
 *     cc prog.c $(pkg-config --cflags --libs phasers-mpi) \
 *         -Wl,-rpath,$(pkg-config --variable=libdir phasers) -pthread -o prog
 *     cargo build --release -p phasers-capi --features mpi
 *     mpicc prog.c -I crates/phasers-capi/include -L target/release \
 *         -Wl,-rpath,$PWD/target/release -lphasers -o prog
 * and then
 *     mpirun -np 4 ./prog
 * Everything in phasers.h holds here too: status codes, phasers_last_error(), checked handles,
 * PHASERS_EBUSY for a handle or thread slot used by two threads at once, no panic crossing into C.
 *
 * MPI IS THE PROGRAM'S
 *
 * The program initializes MPI (MPI_Init_thread) before the first phasers_mpi_* call and finalizes
 * it (MPI_Finalize) after destroying every phasers_mpi_* handle; this library never initializes or
 * finalizes MPI. A create function called before MPI_Init_thread or after MPI_Finalize returns
 * PHASERS_EINVAL, and phasers_last_error() says which. A combined barrier or a hybrid team with
 * more than one thread per rank needs MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE (any thread may
 * lead the process step); with less, create returns PHASERS_EINVAL. Under MPI_THREAD_SERIALIZED
 * the library serializes only its own MPI calls: the program must not call MPI while another of
 * its threads is inside a phasers_mpi_* call, or must initialize with MPI_THREAD_MULTIPLE.
 *
 * THE COMMUNICATOR IS THE CALLER'S
 *
 * Every create function takes an MPI_Comm: MPI_COMM_WORLD, a duplicate, a split, any
 * intra-communicator. It is collective over that communicator: every rank of it calls the same
 * create function, in the same order as its other collective calls on it. The library duplicates
 * comm (MPI_Comm_dup) and works on its own duplicate, so its messages never match the program's;
 * it never frees comm, which the program may free as soon as create returns. MPI_COMM_NULL and
 * inter-communicators give PHASERS_EINVAL; any other invalid handle is MPI's error (by default,
 * MPI aborts the job). Fortran programs pass their communicator's integer handle to the *_fcomm
 * variants at the end of this header.
 *
 * Every rank's threads must all take part in every episode or call; a wait longer than
 * PHASERS_MPI_STALL_WARN seconds (default 10, "off" silences it) prints what it waits for on
 * stderr. A rank that dies makes mpirun end the job.
 */
#ifndef PHASERS_MPI_H
#define PHASERS_MPI_H

#include <mpi.h>

#include "phasers.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the ranks of a communicator meet. */
enum {
    /* ceil(log2 P) rounds of point-to-point tokens; no release phase. */
    PHASERS_MPI_ALGORITHM_DISSEMINATION = 0,
    /* A 4-ary arrival tree and a binary wake-up tree. */
    PHASERS_MPI_ALGORITHM_MCS_TREE = 1,
    /* The MPI library's own barrier (MPI_Ibarrier, polled). */
    PHASERS_MPI_ALGORITHM_LIBRARY = 2,
    /* The ranks of a node meet in shared memory; one leader per node takes the network step
       (dissemination among the leaders). */
    PHASERS_MPI_ALGORITHM_NODE_SHM = 3,
    /* Measures the others when built (collective) and uses the fastest; every rank chooses
       alike. */
    PHASERS_MPI_ALGORITHM_AUTO = 4
};

/* ---------------------------------------------------------------------------------------------- */
/* Process barriers: one thread per rank                                                          */
/* ---------------------------------------------------------------------------------------------- */

/* This rank's side of a barrier among the ranks of a communicator. One thread at a time uses it. */
typedef struct phasers_mpi_barrier phasers_mpi_barrier;

/* Collective over comm. Builds this rank's side of a barrier among the ranks of comm, running
   algorithm (PHASERS_MPI_ALGORITHM_*), and stores it in *out.
   Errors: PHASERS_ENULL (out), PHASERS_EINVAL (algorithm; comm is MPI_COMM_NULL or an
   inter-communicator; MPI not initialized or already finalized). */
int phasers_mpi_barrier_create(MPI_Comm comm, int algorithm, phasers_mpi_barrier **out);

/* This rank's rank in comm, and the number of ranks of comm. */
int phasers_mpi_barrier_rank(const phasers_mpi_barrier *barrier, size_t *out);
int phasers_mpi_barrier_parties(const phasers_mpi_barrier *barrier, size_t *out);

/* Waits until every rank of comm has arrived. Stores the episode that completed (from 0) in
   *episode unless episode is NULL. */
int phasers_mpi_barrier_wait(phasers_mpi_barrier *barrier, uint64_t *episode);

/* As phasers_mpi_barrier_wait, giving up after timeout_ns nanoseconds with PHASERS_ETIMEDOUT
   (phasers_last_error() names the ranks still missing). The arrival stays: the next wait completes
   the same episode. */
int phasers_mpi_barrier_timedwait(phasers_mpi_barrier *barrier, uint64_t timeout_ns,
                                  uint64_t *episode);

/* Destroys this rank's side; PHASERS_EBUSY while a thread waits on it. */
int phasers_mpi_barrier_destroy(phasers_mpi_barrier *barrier);

/* ---------------------------------------------------------------------------------------------- */
/* Combined barriers: every thread of every rank                                                  */
/* ---------------------------------------------------------------------------------------------- */

/* This rank's side of a barrier across the threads of every rank of a communicator. The threads of
   a rank meet in shared memory; the last to arrive runs the process step, then releases them. Each
   thread names itself by number, from 0 to this rank's count - 1 (omp_get_thread_num()). */
typedef struct phasers_mpi_combined phasers_mpi_combined;

/* Collective over comm. Builds this rank's side of a barrier of `threads` threads in this rank
   (each rank passes its own count) whose process step runs process_algorithm
   (PHASERS_MPI_ALGORITHM_*), and stores it in *out.
   Errors: as phasers_mpi_barrier_create; PHASERS_EINVAL for 0 threads, or more than one thread
   when MPI provides less than MPI_THREAD_SERIALIZED. */
int phasers_mpi_combined_create(MPI_Comm comm, size_t threads, int process_algorithm,
                                phasers_mpi_combined **out);

/* The number of threads over every rank: the sum of the ranks' counts. */
int phasers_mpi_combined_parties(const phasers_mpi_combined *barrier, size_t *out);

/* Waits as `thread` until every thread of every rank has arrived; stores the outcome in *out
   unless out is NULL (is_leader: one thread per rank and episode, the one that ran the process
   step). Errors: PHASERS_EINVAL (thread out of range), PHASERS_EBUSY (another thread uses the same
   number), PHASERS_EBROKEN (a thread of this rank was lost). */
int phasers_mpi_combined_wait(phasers_mpi_combined *barrier, size_t thread,
                              phasers_wait_result *out);

/* As phasers_mpi_combined_wait, giving up after timeout_ns nanoseconds with PHASERS_ETIMEDOUT;
   the arrival stays. */
int phasers_mpi_combined_timedwait(phasers_mpi_combined *barrier, size_t thread,
                                   uint64_t timeout_ns, phasers_wait_result *out);

/* Destroys this rank's side; PHASERS_EBUSY while a thread is inside a wait (destroy after joining
   the threads). */
int phasers_mpi_combined_destroy(phasers_mpi_combined *barrier);

/* ---------------------------------------------------------------------------------------------- */
/* Hybrid teams: collectives over the threads of every rank                                       */
/* ---------------------------------------------------------------------------------------------- */

/* A team of every thread of every rank of a communicator. Members are ranked by their rank in
   comm, then by thread. Each member belongs to one thread at a time. */
typedef struct phasers_mpi_team phasers_mpi_team;
typedef struct phasers_mpi_member phasers_mpi_member;

/* Collective over comm. Builds a team of `threads` members in this rank (each rank passes its
   own count), checked unless checked is 0 (checked: calls whose arguments differ across members
   give every member PHASERS_EMISMATCH instead of a hang), and stores it in *out.
   Errors: as phasers_mpi_barrier_create; PHASERS_EINVAL for 0 threads on any rank (every rank gets
   it), or more than one thread when MPI provides less than MPI_THREAD_SERIALIZED. */
int phasers_mpi_team_create(MPI_Comm comm, size_t threads, int checked, phasers_mpi_team **out);

/* The number of members over every rank. */
int phasers_mpi_team_parties(const phasers_mpi_team *team, size_t *out);

/* Stores the member of this rank's `thread` in *out; each is handed out once (PHASERS_EINVAL the
   second time). */
int phasers_mpi_team_member(phasers_mpi_team *team, size_t thread, phasers_mpi_member **out);

/* Destroys the team; PHASERS_EBUSY while member handles made from it exist. */
int phasers_mpi_team_destroy(phasers_mpi_team *team);

/* The member's rank in the team (over every rank), and the team's number of members. */
int phasers_mpi_member_rank(const phasers_mpi_member *member, size_t *out);
int phasers_mpi_member_parties(const phasers_mpi_member *member, size_t *out);

/* Waits until every member, on every rank, has called it. */
int phasers_mpi_member_barrier(phasers_mpi_member *member);

/* Reduces every member's input with op (PHASERS_OP_*) into every member's output: count elements
   of type_ (PHASERS_TYPE_*) each, in separate arrays. A NULL buffer (PHASERS_ENULL), an unknown
   type_ or op, overlapping or misaligned buffers (PHASERS_EINVAL) return at once without taking
   part. Errors of the call itself reach every member, which must all make it: a bitwise operator
   on floating point (PHASERS_EINVAL), and, when checked, counts, types or operators that differ
   (PHASERS_EMISMATCH). */
int phasers_mpi_member_allreduce(phasers_mpi_member *member, int type_, int op, const void *input,
                                 void *output, size_t count);

/* Destroys the member's handle; PHASERS_EBUSY while a thread is inside a call on it. The other
   members of its team get PHASERS_EBROKEN from their next call: destroy members after the last
   collective, then the team. */
int phasers_mpi_member_destroy(phasers_mpi_member *member);

/* ---------------------------------------------------------------------------------------------- */
/* Fortran communicators                                                                          */
/* ---------------------------------------------------------------------------------------------- */

/* The create functions above, for a communicator given as its Fortran handle (MPI_Fint: the mpi
   module's INTEGER, or mpi_f08's comm%MPI_VAL; a C program gets one from MPI_Comm_c2f). MPI must
   be running: before MPI_Init_thread or after MPI_Finalize they return PHASERS_EINVAL without
   converting comm. Then comm is converted with MPI_Comm_f2c, and everything else is as in the
   function of the same name without _fcomm.
   Rule for comm: it is MPI_COMM_NULL's handle (PHASERS_EINVAL), or a handle MPI returned and has
   not freed. Open MPI's MPI_Comm_f2c turns every other integer into a null handle, which these
   functions refuse with PHASERS_EINVAL (phasers_last_error() names the handle); MPICH's is a cast,
   so there an invalid integer becomes an invalid MPI_Comm: MPI's error (by default, MPI aborts
   the job). fortran/phasers_mpi.f90 (the Fortran module phasers_mpi) binds these. */
int phasers_mpi_barrier_create_fcomm(MPI_Fint comm, int algorithm, phasers_mpi_barrier **out);
int phasers_mpi_combined_create_fcomm(MPI_Fint comm, size_t threads, int process_algorithm,
                                      phasers_mpi_combined **out);
int phasers_mpi_team_create_fcomm(MPI_Fint comm, size_t threads, int checked,
                                  phasers_mpi_team **out);

#ifdef __cplusplus
}
#endif

#endif /* PHASERS_MPI_H */
