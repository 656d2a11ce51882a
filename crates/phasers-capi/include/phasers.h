/*
 * phasers.h: the C interface of the phasers synchronization library (libphasers.so / libphasers.a).
 *
 * C99 and C++ compatible. Build and link: see crates/phasers-capi/README.md, or
 *     cc prog.c $(pkg-config --cflags --libs phasers) -Wl,-rpath,$(pkg-config --variable=libdir phasers)
 *
 * CONVENTIONS
 *
 * Return values. Every function that does work returns an int: PHASERS_OK (0) or one of the
 * positive PHASERS_E* codes below. Results go through pointer arguments, written only on success.
 * phasers_strerror(code) describes a code; phasers_last_error() gives the full message of the
 * calling thread's last failure (for a timeout: the ranks still missing).
 *
 * Enumerations (algorithm, mode, element type, operator) are passed as int and checked: a value
 * outside the listed constants gives PHASERS_EINVAL.
 *
 * Handles. Objects are reached through opaque pointers made by the create functions. Every call
 * checks the handle it is given:
 *   - NULL gives PHASERS_ENULL;
 *   - a destroyed handle gives PHASERS_EDESTROYED. Destroying frees the object but keeps a 16-byte
 *     header (a "tombstone") allocated until the process exits, so that a later call with the stale
 *     pointer is detected instead of reading freed memory. Programs that create and destroy
 *     millions of objects pay 16 bytes for each;
 *   - a pointer of the wrong kind (a phaser passed as a barrier) or one that was never a handle
 *     gives PHASERS_EDESTROYED, detected from a magic word at its start. The check reads the first
 *     8 bytes the pointer points to, so it only works if that memory is readable: it catches
 *     mix-ups and stale handles, not arbitrary garbage pointers.
 * Using a handle while another thread destroys it is undefined behaviour, as with pthread objects:
 * make sure every other thread is done with a handle (for example by joining it) before destroying
 * it. Destroy does detect threads still inside a wait (PHASERS_EBUSY, see each destroy function).
 *
 * Threads. Barrier ranks, reduction ranks, registrations, team members and requests belong to one
 * thread at a time: a second thread that uses the same one while the first is inside a call gets
 * PHASERS_EBUSY (no data race, no hang). Everything else may be called from any thread.
 *
 * Buffers. Reductions and collectives take arrays as void pointers of the element type the call
 * names, with counts in elements (not bytes). A buffer of zero elements is not read and may be
 * NULL; otherwise NULL gives PHASERS_ENULL. A count whose size in bytes cannot exist (it overflows,
 * or exceeds PTRDIFF_MAX), a pointer not aligned for its element type, and an input that overlaps
 * the output give PHASERS_EINVAL. The library cannot check that the memory is really there: each
 * buffer must hold its count of elements and stay valid until the call returns (for a
 * non-blocking call, until its request completes).
 *
 * Collective calls. Every rank of a reduction and every member of a team takes part in each call,
 * in the same order. An error found in a participant's own arguments before the call starts
 * (PHASERS_ENULL, PHASERS_EINVAL for an enumeration value, a buffer or a size, PHASERS_EBUSY,
 * PHASERS_EDESTROYED) returns at once without taking part, so the others wait for it: fix the
 * program (a wait longer than PHASERS_STALL is reported on stderr). Arguments that differ between
 * participants (lengths, roots, operators) are found by the call itself and reported to every
 * participant (PHASERS_EMISMATCH), as is a root out of range (PHASERS_EINVAL).
 *
 * Waiting. Waits spin briefly, then yield, then sleep in the kernel; the environment variables
 * PHASERS_WAIT=auto|spin|yield|park and PHASERS_SPIN tune this without recompiling (see the Rust
 * crate's documentation of phasers::wait). A wait that lasts longer than PHASERS_STALL (default
 * 10s; "off" silences it) prints one line on stderr naming the object, the episode and who has not
 * arrived, and goes on waiting.
 *
 * No function lets a Rust panic escape: an internal panic is caught and reported as PHASERS_EPANIC.
 */
#ifndef PHASERS_H
#define PHASERS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------- */
/* Status codes                                                                                   */
/* ---------------------------------------------------------------------------------------------- */

enum {
    /* Success. */
    PHASERS_OK = 0,
    /* An argument is out of range: a rank, a party count, an enumeration value, a tree shape, an
       accumulator function of the wrong element type, a bitwise operator on floating point. */
    PHASERS_EINVAL = 1,
    /* A pointer the function needs is NULL. */
    PHASERS_ENULL = 2,
    /* The handle was already destroyed, or is not a handle of this kind made by this library. */
    PHASERS_EDESTROYED = 3,
    /* The timeout passed first. The arrival (barrier) or signal (phaser) stays in place: calling
       the wait again completes the same episode or phase. */
    PHASERS_ETIMEDOUT = 4,
    /* A participant was lost to an internal panic, so the object can never complete again. */
    PHASERS_EBROKEN = 5,
    /* The object's algorithm cannot perform the operation. */
    PHASERS_EUNSUPPORTED = 6,
    /* The registration's mode does not allow the operation (signal from a wait-only registration,
       wait from a signal-only one, register a child with a stronger mode, send to an accumulator
       from a wait-only registration). */
    PHASERS_ECAPABILITY = 7,
    /* The phaser was terminated (phasers_phaser_terminate, or no registration can signal any
       more); no later phase will complete. */
    PHASERS_ETERMINATED = 8,
    /* The handle is in use by another thread: two threads using the same barrier rank or the same
       registration at once, or a destroy while a thread waits. Nothing was changed. */
    PHASERS_EBUSY = 9,
    /* The library caught an internal panic (a bug: please report it with phasers_last_error()).
       The object involved may be broken; destroy it. */
    PHASERS_EPANIC = 10,
    /* The ranks or members of one collective call passed arguments that differ: the element
       count, the root, the operator, the element type or the collective itself.
       phasers_last_error() names two of them and what each passed. Every participant of the call
       gets it. */
    PHASERS_EMISMATCH = 11
};

/* A static, never NULL description of code; "unknown phasers error code" for a value that is none
   of the PHASERS_* codes. */
const char *phasers_strerror(int code);

/* The full message of the calling thread's last failed phasers call, or "" when its last call
   succeeded (or it made none). It names this header's functions, constants and types
   (phasers_registration_wait, PHASERS_MODE_WAIT, double), never the Rust library's. The library owns the string; it stays valid until this thread's
   next phasers call other than phasers_last_error, phasers_strerror and phasers_algorithm_name. */
const char *phasers_last_error(void);

/* ---------------------------------------------------------------------------------------------- */
/* Barriers                                                                                       */
/* ---------------------------------------------------------------------------------------------- */

/* A barrier of a fixed number of parties. Each thread identifies itself by a rank from 0 to
   parties - 1 (for example omp_get_thread_num() or the index given to its thread function); each
   rank must be used by one thread at a time. An episode completes when every rank has arrived. */
typedef struct phasers_barrier phasers_barrier;

/* What a completed wait reports. */
typedef struct phasers_wait_result {
    /* The episode that completed, counted from 0. */
    uint64_t episode;
    /* 1 for exactly one rank per episode (the leader, like PTHREAD_BARRIER_SERIAL_THREAD), else 0.
       Which rank leads depends on the algorithm. */
    int is_leader;
} phasers_wait_result;

/* Barrier algorithms. AUTO picks one from the party count, the cores available and the tuning
   profile that `phasers bench barrier --write-profile` wrote, if any. */
enum {
    PHASERS_ALGORITHM_AUTO = 0,
    PHASERS_ALGORITHM_SENSE_REVERSING = 1,
    PHASERS_ALGORITHM_COUNTING = 2,
    PHASERS_ALGORITHM_TICKET = 3,
    PHASERS_ALGORITHM_COMBINING_TREE = 4,
    PHASERS_ALGORITHM_MCS_TREE = 5,
    PHASERS_ALGORITHM_DISSEMINATION = 6,
    PHASERS_ALGORITHM_TOURNAMENT = 7
};

/* Creates a barrier of `parties` ranks (1 to 16384) running `algorithm` (PHASERS_ALGORITHM_*) and
   stores it in *out. Errors: PHASERS_ENULL (out), PHASERS_EINVAL (parties 0 or too many, unknown
   algorithm, or unparsable PHASERS_WAIT / PHASERS_SPIN / PHASERS_STALL). */
int phasers_barrier_create(size_t parties, int algorithm, phasers_barrier **out);

/* Stores the number of parties in *out. Errors: PHASERS_ENULL, PHASERS_EDESTROYED. */
int phasers_barrier_parties(const phasers_barrier *barrier, size_t *out);

/* Stores the algorithm the barrier runs in *out: what AUTO resolved to, never
   PHASERS_ALGORITHM_AUTO. Errors: PHASERS_ENULL, PHASERS_EDESTROYED. */
int phasers_barrier_algorithm(const phasers_barrier *barrier, int *out);

/* The name of a PHASERS_ALGORITHM_* value as the `phasers` command prints it ("auto",
   "sense-reversing", "counting", "ticket", "combining-tree", "mcs", "dissemination",
   "tournament"), or NULL for any other value. The string is static. */
const char *phasers_algorithm_name(int algorithm);

/* Arrives as `rank` and waits until every rank has arrived at this episode. Stores the outcome in
   *out unless out is NULL. Errors: PHASERS_ENULL (barrier), PHASERS_EDESTROYED, PHASERS_EINVAL
   (rank >= parties), PHASERS_EBUSY (another thread is inside a call with this rank),
   PHASERS_EBROKEN. */
int phasers_barrier_wait(phasers_barrier *barrier, size_t rank, phasers_wait_result *out);

/* As phasers_barrier_wait, giving up after timeout_ns nanoseconds with PHASERS_ETIMEDOUT;
   phasers_last_error() then names the ranks that had not arrived. The arrival stays in place: the
   next wait (timed or not) of the same rank completes the same episode and does not arrive again.
   A timeout of 0 only checks. */
int phasers_barrier_timedwait(phasers_barrier *barrier, size_t rank, uint64_t timeout_ns,
                              phasers_wait_result *out);

/* Destroys the barrier. Fails with PHASERS_EBUSY, changing nothing, while a rank waits for an
   episode that has not completed. Threads released by a completed episode that have not yet
   returned from their wait are waited for, so a thread may destroy the barrier as soon as its own
   last wait returned. A rank left pending by a timeout does not prevent destruction. Errors:
   PHASERS_ENULL, PHASERS_EDESTROYED (including a second destroy), PHASERS_EBUSY. */
int phasers_barrier_destroy(phasers_barrier *barrier);

/* ---------------------------------------------------------------------------------------------- */
/* Phasers                                                                                        */
/* ---------------------------------------------------------------------------------------------- */

/* A phaser (Habanero-Java style): a barrier whose members (registrations) can join and leave in
   any phase, with signal-only and wait-only members and split-phase signal / wait. */
typedef struct phasers_phaser phasers_phaser;

/* One task's membership of a phaser, with a mode; used by one thread at a time. */
typedef struct phasers_registration phasers_registration;

/* Registration modes. SIG_WAIT_SINGLE > SIG_WAIT > {SIG, WAIT}: a registration may register
   children with its own mode or a weaker one.
     SIG              signals (phases wait for it), never waits: a producer;
     WAIT             waits, never holds a phase back: a consumer;
     SIG_WAIT         signals and waits: barrier synchronization;
     SIG_WAIT_SINGLE  as SIG_WAIT (its single-action capability is not exposed in C yet). */
enum {
    PHASERS_MODE_SIG = 0,
    PHASERS_MODE_WAIT = 1,
    PHASERS_MODE_SIG_WAIT = 2,
    PHASERS_MODE_SIG_WAIT_SINGLE = 3
};

/* Creates a flat phaser and registers its creator with `mode` (PHASERS_MODE_*). Stores the phaser
   in *phaser and the creator's registration in *creator. Errors: PHASERS_ENULL, PHASERS_EINVAL
   (an unknown mode, or PHASERS_MODE_WAIT: a wait-only creator could register only waiters, so no
   phase would ever complete). */
int phasers_phaser_create(int mode, phasers_phaser **phaser, phasers_registration **creator);

/* As phasers_phaser_create, with a tree of sub-phasers: `tiers` levels (1 is flat) and up to
   `degree` (at least 2) children per sub-phaser and registrations per leaf. Trees scale to many
   threads: gathers run in parallel up the tree. Errors: as phasers_phaser_create, and
   PHASERS_EINVAL for tiers 0, degree < 2 or a tree of more than 65536 sub-phasers (at most 16
   tiers of degree 2, a degree of at most 65535 with 2 tiers), returned at once for any size_t. */
int phasers_phaser_create_tree(int mode, size_t tiers, size_t degree, phasers_phaser **phaser,
                               phasers_registration **creator);

/* Stores the phase in progress, which is the number of phases completed, in *out. Errors:
   PHASERS_ENULL, PHASERS_EDESTROYED. */
int phasers_phaser_phase(const phasers_phaser *phaser, uint64_t *out);

/* Terminates the phaser: every wait on it, including waits already blocked, returns
   PHASERS_ETERMINATED. Errors: PHASERS_ENULL, PHASERS_EDESTROYED. */
int phasers_phaser_terminate(phasers_phaser *phaser);

/* Destroys this phaser handle. The phaser itself lives on while registrations or accumulators
   use it; they stay valid. Errors: PHASERS_ENULL, PHASERS_EDESTROYED. */
int phasers_phaser_destroy(phasers_phaser *phaser);

/* Registers a child task with `mode`, no stronger than the parent's, and stores its registration
   in *out (hand it to the child's thread). The child starts in the parent's current phase: if the
   parent has not signalled phase p yet, phase p also waits for the child. Errors: PHASERS_ENULL,
   PHASERS_EDESTROYED, PHASERS_EINVAL (mode), PHASERS_ECAPABILITY (mode stronger than the
   parent's), PHASERS_EBUSY, PHASERS_ETERMINATED, PHASERS_EBROKEN. */
int phasers_registration_register(phasers_registration *parent, int mode,
                                  phasers_registration **out);

/* Signals the current phase without waiting: the first half of a split-phase barrier. Do local
   work, then call phasers_registration_wait. Errors: PHASERS_ENULL, PHASERS_EDESTROYED,
   PHASERS_ECAPABILITY (wait-only registration), PHASERS_EBUSY, PHASERS_ETERMINATED,
   PHASERS_EBROKEN. */
int phasers_registration_signal(phasers_registration *registration);

/* Waits until the phase this registration is in completes (signalling it first if it has not
   signalled it yet; a wait-only registration waits for its next phase), and stores that phase in *phase unless phase is NULL. Errors: PHASERS_ENULL
   (registration), PHASERS_EDESTROYED, PHASERS_ECAPABILITY (signal-only registration),
   PHASERS_EBUSY, PHASERS_ETERMINATED, PHASERS_EBROKEN. */
int phasers_registration_wait(phasers_registration *registration, uint64_t *phase);

/* Advances to the next phase: signals (unless already signalled, or wait-only), then waits
   (unless signal-only, which returns at once). Stores the phase completed (signal-only: the phase
   signalled) in *phase unless phase is NULL. Errors: as phasers_registration_wait, without
   PHASERS_ECAPABILITY. */
int phasers_registration_next(phasers_registration *registration, uint64_t *phase);

/* As phasers_registration_next, giving up after timeout_ns nanoseconds with PHASERS_ETIMEDOUT;
   phasers_last_error() names the registrations (by creation order, the creator being 0) that had
   not signalled. The signal stays in place: calling again waits for the same phase. */
int phasers_registration_next_timeout(phasers_registration *registration, uint64_t timeout_ns,
                                      uint64_t *phase);

/* Deregisters and destroys the registration, in any phase: later phases no longer wait for it.
   When the last registration that can signal is dropped, the phaser terminates. Errors:
   PHASERS_ENULL, PHASERS_EDESTROYED (including a second drop), PHASERS_EBUSY (another thread is
   inside a call on it; nothing was changed). */
int phasers_registration_drop(phasers_registration *registration);

/* ---------------------------------------------------------------------------------------------- */
/* Accumulators                                                                                   */
/* ---------------------------------------------------------------------------------------------- */

/* A reduction riding a phaser's phases: values sent during phase p are combined when p completes,
   and the result functions then return that combination. */
typedef struct phasers_accumulator phasers_accumulator;

/* Element types: int32_t, int64_t, uint32_t, uint64_t, float, double. */
enum {
    PHASERS_TYPE_I32 = 0,
    PHASERS_TYPE_I64 = 1,
    PHASERS_TYPE_U32 = 2,
    PHASERS_TYPE_U64 = 3,
    PHASERS_TYPE_F32 = 4,
    PHASERS_TYPE_F64 = 5
};

/* Operators. Integer sums and products wrap. MIN and MAX on floating point: a NaN loses. AND, OR
   and XOR are for integer types only. */
enum {
    PHASERS_OP_SUM = 0,
    PHASERS_OP_PRODUCT = 1,
    PHASERS_OP_MIN = 2,
    PHASERS_OP_MAX = 3,
    PHASERS_OP_AND = 4,
    PHASERS_OP_OR = 5,
    PHASERS_OP_XOR = 6
};

/* Creates an accumulator on `phaser` for element type `type` (PHASERS_TYPE_*) reducing with `op`
   (PHASERS_OP_*), and stores it in *out. With `reproducible` non-zero, floating-point results have
   the same bits for the same values whatever order threads arrive in (at a cost per phase: the
   partial values are sorted before they are combined); with 0 they may differ in the last bits.
   Errors: PHASERS_ENULL, PHASERS_EDESTROYED, PHASERS_EINVAL (type, op, or a bitwise op on a
   floating-point type). */
int phasers_accumulator_create(phasers_phaser *phaser, int type, int op, int reproducible,
                               phasers_accumulator **out);

/* Contributes v through `registration` to its current phase (after phasers_registration_signal:
   to the next phase). Several sends in one phase all count. Use the function of the accumulator's
   element type. Errors: PHASERS_ENULL, PHASERS_EDESTROYED, PHASERS_EINVAL (another element type,
   or a registration of another phaser), PHASERS_ECAPABILITY (wait-only registration),
   PHASERS_EBUSY (registration in use by another thread). */
int phasers_accumulator_send_i32(phasers_accumulator *accumulator,
                                 phasers_registration *registration, int32_t v);
/* As phasers_accumulator_send_i32, for PHASERS_TYPE_I64. */
int phasers_accumulator_send_i64(phasers_accumulator *accumulator,
                                 phasers_registration *registration, int64_t v);
/* As phasers_accumulator_send_i32, for PHASERS_TYPE_U32. */
int phasers_accumulator_send_u32(phasers_accumulator *accumulator,
                                 phasers_registration *registration, uint32_t v);
/* As phasers_accumulator_send_i32, for PHASERS_TYPE_U64. */
int phasers_accumulator_send_u64(phasers_accumulator *accumulator,
                                 phasers_registration *registration, uint64_t v);
/* As phasers_accumulator_send_i32, for PHASERS_TYPE_F32. */
int phasers_accumulator_send_f32(phasers_accumulator *accumulator,
                                 phasers_registration *registration, float v);
/* As phasers_accumulator_send_i32, for PHASERS_TYPE_F64. */
int phasers_accumulator_send_f64(phasers_accumulator *accumulator,
                                 phasers_registration *registration, double v);

/* Stores in *out the result of the most recently completed phase (the operator's identity before
   any phase completed: 0 for SUM, 1 for PRODUCT, the type's largest value for MIN, ...). Read it
   after your wait for the phase returned. Errors: PHASERS_ENULL, PHASERS_EDESTROYED,
   PHASERS_EINVAL (another element type). */
int phasers_accumulator_result_i32(const phasers_accumulator *accumulator, int32_t *out);
/* As phasers_accumulator_result_i32, for PHASERS_TYPE_I64. */
int phasers_accumulator_result_i64(const phasers_accumulator *accumulator, int64_t *out);
/* As phasers_accumulator_result_i32, for PHASERS_TYPE_U32. */
int phasers_accumulator_result_u32(const phasers_accumulator *accumulator, uint32_t *out);
/* As phasers_accumulator_result_i32, for PHASERS_TYPE_U64. */
int phasers_accumulator_result_u64(const phasers_accumulator *accumulator, uint64_t *out);
/* As phasers_accumulator_result_i32, for PHASERS_TYPE_F32. */
int phasers_accumulator_result_f32(const phasers_accumulator *accumulator, float *out);
/* As phasers_accumulator_result_i32, for PHASERS_TYPE_F64. */
int phasers_accumulator_result_f64(const phasers_accumulator *accumulator, double *out);

/* Destroys the accumulator. Values already sent still count in their phase. Errors:
   PHASERS_ENULL, PHASERS_EDESTROYED. */
int phasers_accumulator_destroy(phasers_accumulator *accumulator);

/* ---------------------------------------------------------------------------------------------- */
/* Reductions                                                                                     */
/* ---------------------------------------------------------------------------------------------- */

/* An array reduction among a fixed number of ranks (0 to parties - 1, for example
   omp_get_thread_num()): in each call every rank brings an array of `count` elements, and the
   element-wise reduction lands at the root (phasers_reduction_reduce) or at every rank
   (phasers_reduction_allreduce). The element type, the operator, the algorithm and the root are
   fixed at creation. Each rank must be used by one thread at a time. Reductions have no timeout:
   a rank that never calls leaves the others waiting (reported on stderr after PHASERS_STALL). */
typedef struct phasers_reduction phasers_reduction;

/* Reduction algorithms. AUTO picks one per call from the array length, the number of ranks, the
   cores and how spread out recent arrivals were.
     LINEAR         everyone meets, then each rank reduces 1/parties of the array across all
                    inputs; fixed combination order; everyone returns when the call is done;
     STATIC_TREE    pairs fixed by rank, the distance doubling; fixed order; a rank whose data was
                    consumed returns at once (quick return);
     DYNAMIC_PAIRS  pairs in arrival order; floating-point results may differ in the last bits
                    from call to call; quick return;
     DYNAMIC_GROUP  as DYNAMIC_PAIRS, but ranks that would return help later pairs instead. */
enum {
    PHASERS_REDUCE_AUTO = 0,
    PHASERS_REDUCE_LINEAR = 1,
    PHASERS_REDUCE_STATIC_TREE = 2,
    PHASERS_REDUCE_DYNAMIC_PAIRS = 3,
    PHASERS_REDUCE_DYNAMIC_GROUP = 4
};

/* Creates a reduction of `parties` ranks (1 to 65535) of element type `type` (PHASERS_TYPE_F32,
   PHASERS_TYPE_F64, PHASERS_TYPE_I32 or PHASERS_TYPE_I64) combining with `op` (PHASERS_OP_*) by
   `algorithm` (PHASERS_REDUCE_*), and stores it in *out. `root` is the rank that receives
   phasers_reduction_reduce's result. Errors: PHASERS_ENULL (out), PHASERS_EINVAL (parties 0 or too
   many, root >= parties, an unknown or unsupported type, op or algorithm, a bitwise op on a
   floating-point type, or unparsable PHASERS_WAIT / PHASERS_SPIN / PHASERS_STALL). */
int phasers_reduction_create(size_t parties, int type, int op, int algorithm, size_t root,
                             phasers_reduction **out);

/* Stores the number of ranks in *out. Errors: PHASERS_ENULL, PHASERS_EDESTROYED. */
int phasers_reduction_parties(const phasers_reduction *reduction, size_t *out);

/* Reduces every rank's `input` (count elements of the reduction's type) into the root's `output`
   (count elements, not overlapping input). Quick return: a rank whose data has been consumed may
   return before the root has the result (not under LINEAR and DYNAMIC_GROUP, where every rank
   returns when the call is done); its input is then free again. `output` is written at the root
   only; the other ranks' output is not read and may be NULL. Stores 1 in *has_result at the root
   and 0 at the other ranks, unless has_result is NULL.
   Errors: PHASERS_ENULL (reduction, or a NULL input, or the root's NULL output, with count > 0),
   PHASERS_EDESTROYED, PHASERS_EINVAL (rank >= parties, or a buffer as in CONVENTIONS),
   PHASERS_EBUSY (another thread is inside a call with this rank), PHASERS_EMISMATCH (the ranks
   passed different counts, or some called allreduce: every rank still in the call gets it; a rank
   that returned early gets it from its next call or the one after; the outputs of that call hold
   unspecified values, and the reduction is failed: every later call returns the same error, so
   destroy it), PHASERS_EBROKEN (a rank was lost to an internal panic). */
int phasers_reduction_reduce(phasers_reduction *reduction, size_t rank, const void *input,
                             void *output, size_t count, int *has_result);

/* Reduces every rank's `input` (count elements) into every rank's `output` (count elements, not
   overlapping input: pass separate arrays). Every rank returns when the result is in its output.
   Errors: as phasers_reduction_reduce, with output required at every rank; PHASERS_EMISMATCH
   reaches every rank from the call itself. */
int phasers_reduction_allreduce(phasers_reduction *reduction, size_t rank, const void *input,
                                void *output, size_t count);

/* Destroys the reduction. Fails with PHASERS_EBUSY, changing nothing, while a thread is inside a
   call on it: destroy it after every thread's last call returned (join the threads first).
   Errors: PHASERS_ENULL, PHASERS_EDESTROYED (including a second destroy), PHASERS_EBUSY. */
int phasers_reduction_destroy(phasers_reduction *reduction);

/* ---------------------------------------------------------------------------------------------- */
/* Teams                                                                                          */
/* ---------------------------------------------------------------------------------------------- */

/* A team of a fixed number of members (ranks 0 to parties - 1) that call collectives (MPI's
   names: barrier, broadcast, reduce, allreduce, gather, allgather, scatter, alltoall, scans), each
   passing its own buffers. Every member calls every collective of its team, in the same order.
   The team hands out one phasers_member per rank; a member belongs to one thread at a time. */
typedef struct phasers_team phasers_team;
/* One rank's membership of a team (or of a sub-team made by phasers_member_split). */
typedef struct phasers_member phasers_member;
/* A non-blocking collective in flight, started by a phasers_member_i* function. */
typedef struct phasers_request phasers_request;

/* Creates a team of `parties` members (1 to 65535) and stores it in *out. With `checked` non-zero
   (the Rust default) every call compares the members' arguments (collective, element type, count,
   root, operator, blocking or non-blocking form) and a difference gives PHASERS_EMISMATCH to every
   member before any data moves; the team stays usable. With 0 (unchecked, as in MPI) differing
   calls are the program's bug and their outcome is undefined (memory is still never read or
   written out of bounds, but members may wait for ever). `checked` is used as given (the
   environment variable PHASERS_CHECKED, which Rust teams without a choice follow, does not apply).
   Errors: PHASERS_ENULL (out), PHASERS_EINVAL (parties 0 or too many, or unparsable PHASERS_WAIT /
   PHASERS_SPIN / PHASERS_STALL). */
int phasers_team_create(size_t parties, int checked, phasers_team **out);

/* Stores the number of members in *out. Errors: PHASERS_ENULL, PHASERS_EDESTROYED. */
int phasers_team_parties(const phasers_team *team, size_t *out);

/* Stores the member of `rank` in *out (hand it to the thread that plays that rank). Each rank is
   handed out once. Errors: PHASERS_ENULL, PHASERS_EDESTROYED, PHASERS_EINVAL (rank >= parties, or
   its member was already handed out). */
int phasers_team_member(phasers_team *team, size_t rank, phasers_member **out);

/* Destroys the team. Fails with PHASERS_EBUSY, changing nothing, while member handles made from it
   (by phasers_team_member, or by splitting them) exist: destroy the members first. Errors:
   PHASERS_ENULL, PHASERS_EDESTROYED (including a second destroy), PHASERS_EBUSY. */
int phasers_team_destroy(phasers_team *team);

/* Store the member's rank in its team, and the number of members of its team, in *out. They work
   while the member is busy in another thread or with a request. Errors: PHASERS_ENULL,
   PHASERS_EDESTROYED. */
int phasers_member_rank(const phasers_member *member, size_t *out);
int phasers_member_parties(const phasers_member *member, size_t *out);

/* Collective: every member of the team calls it. Members that pass the same `color` (0 or more)
   form a sub-team, ranked by `key`, ties broken by their rank in this team (as MPI_Comm_split).
   Stores the caller's member of its sub-team in *out: a new handle, used and destroyed like the
   ones phasers_team_member gives (it counts towards this team's phasers_team_destroy), whose
   collectives run independently of this team's; this member stays usable. Sub-teams inherit
   checked mode. Errors: PHASERS_ENULL (member, out), PHASERS_EDESTROYED, PHASERS_EINVAL (a
   negative color), PHASERS_EBUSY (the member is in use by another thread or a request),
   PHASERS_EMISMATCH (another member called a different collective), PHASERS_EBROKEN. */
int phasers_member_split(phasers_member *member, int color, int key, phasers_member **out);

/* Destroys the member's handle. Destroying a member whose team still calls collectives breaks the
   team for the others: their calls return PHASERS_EBROKEN instead of waiting for it, as dropping a
   Rust Member does. Fails with PHASERS_EBUSY, changing nothing, while a thread is inside a call on
   it or a request of its is in flight (wait for or free the request first). Errors:
   PHASERS_ENULL, PHASERS_EDESTROYED (including a second destroy), PHASERS_EBUSY. */
int phasers_member_destroy(phasers_member *member);

/* The collectives. Every member of the team calls the same one, with the same element type
   (`type`, PHASERS_TYPE_*: all six), count, root and operator (`op`, PHASERS_OP_*; AND, OR and XOR
   on PHASERS_TYPE_F32 / F64 give PHASERS_EINVAL to every member). Buffers are void pointers of the
   element type, counts in elements, as CONVENTIONS says (inputs and outputs must not overlap).
   A collective returns once this member's outputs are written and its inputs are free again.

   Errors common to all of them:
     PHASERS_ENULL       member NULL, or a buffer the call reads or writes here NULL with a count
                         above 0;
     PHASERS_EDESTROYED  member destroyed, or not a member handle;
     PHASERS_EINVAL      an unknown type or op, a buffer as in CONVENTIONS (overlap, misalignment,
                         parties * count overflowing); a root >= parties or a bitwise op on
                         floating point (these two reach every member);
     PHASERS_EBUSY       another thread is inside a call on this member, or a request of its is in
                         flight;
     PHASERS_EMISMATCH   checked team: members passed a different collective, type, count, root,
                         operator or form (blocking against non-blocking); every member gets it,
                         the outputs are untouched, and the team stays usable;
     PHASERS_EBROKEN     a member was destroyed (or lost to an internal panic) while the team still
                         needed it. */

/* Waits until every member has called it. */
int phasers_member_barrier(phasers_member *member);
/* Copies the root's `buffer` (count elements) into every other member's `buffer`. */
int phasers_member_broadcast(phasers_member *member, int type, void *buffer, size_t count,
                             size_t root);
/* Reduces every member's `input` (count elements) element-wise into the root's `output` (count
   elements). Only the root's output is written; the others' is not read and may be NULL. */
int phasers_member_reduce(phasers_member *member, int type, int op, const void *input,
                          void *output, size_t count, size_t root);
/* Reduces every member's `input` into every member's `output` (count elements each). */
int phasers_member_allreduce(phasers_member *member, int type, int op, const void *input,
                             void *output, size_t count);
/* Gathers every member's `input` (count elements) into the root's `output` (parties * count
   elements, member r's block at r * count). The others' output is not read and may be NULL. */
int phasers_member_gather(phasers_member *member, int type, const void *input, void *output,
                          size_t count, size_t root);
/* As phasers_member_gather, into every member's `output` (parties * count elements). */
int phasers_member_allgather(phasers_member *member, int type, const void *input, void *output,
                             size_t count);
/* Sends block r (count elements at r * count) of the root's `input` (parties * count elements)
   to member r's `output` (count elements). The others' input is not read and may be NULL. */
int phasers_member_scatter(phasers_member *member, int type, const void *input, void *output,
                           size_t count, size_t root);
/* Every member's `input` and `output` hold parties * count elements: block r of member s's input
   goes to block s of member r's output. */
int phasers_member_alltoall(phasers_member *member, int type, const void *input, void *output,
                            size_t count);
/* Stores in member r's `output` the reduction of the inputs of members 0 to r (count elements
   each). */
int phasers_member_scan_inclusive(phasers_member *member, int type, int op, const void *input,
                                  void *output, size_t count);
/* Stores in member r's `output` the reduction of the inputs of members 0 to r - 1; member 0's
   output is left as it was. */
int phasers_member_scan_exclusive(phasers_member *member, int type, int op, const void *input,
                                  void *output, size_t count);

/* Non-blocking forms: the same arguments as the blocking collective, plus `out`, where the request
   is stored. The call starts and the function returns at once; the call makes progress in
   phasers_request_test / _wait / _timedwait / _free on this request (there is no background
   thread), and completes once every member has started it and each tests or waits until done.
   In a checked team, a member's blocking call and another's non-blocking one are a mismatch.

   Buffers (as MPI_I*): every buffer passed must stay valid, and must not be read (outputs) or
   written (inputs, outputs) by the program, until the request completes: phasers_request_test
   set *done to 1, or phasers_request_wait / _timedwait / _free returned. The library uses them
   until then, from whichever thread calls the request functions.

   The member: while a request is in flight, every other call on its member, including another
   non-blocking one and phasers_member_destroy, gives PHASERS_EBUSY. Finish the request first.

   Errors: as the blocking form, and PHASERS_ENULL for `out`. Errors found before the call starts
   return at once and make no request; the call's own errors (PHASERS_EMISMATCH, PHASERS_EINVAL
   for a root out of range or a bitwise op on floating point, PHASERS_EBROKEN) come from the
   request functions. */
int phasers_member_ibarrier(phasers_member *member, phasers_request **out);
int phasers_member_ibroadcast(phasers_member *member, int type, void *buffer, size_t count,
                              size_t root, phasers_request **out);
int phasers_member_ireduce(phasers_member *member, int type, int op, const void *input,
                           void *output, size_t count, size_t root, phasers_request **out);
int phasers_member_iallreduce(phasers_member *member, int type, int op, const void *input,
                              void *output, size_t count, phasers_request **out);
int phasers_member_igather(phasers_member *member, int type, const void *input, void *output,
                           size_t count, size_t root, phasers_request **out);
int phasers_member_iallgather(phasers_member *member, int type, const void *input, void *output,
                              size_t count, phasers_request **out);
int phasers_member_iscatter(phasers_member *member, int type, const void *input, void *output,
                            size_t count, size_t root, phasers_request **out);
int phasers_member_ialltoall(phasers_member *member, int type, const void *input, void *output,
                             size_t count, phasers_request **out);
int phasers_member_iscan_inclusive(phasers_member *member, int type, int op, const void *input,
                                   void *output, size_t count, phasers_request **out);
int phasers_member_iscan_exclusive(phasers_member *member, int type, int op, const void *input,
                                   void *output, size_t count, phasers_request **out);

/* Makes what progress is possible without waiting and stores in *done 1 once the call is over (its
   outputs written, its buffers free), else 0. The request stays valid either way: release it with
   phasers_request_wait (which then returns at once) or phasers_request_free. Returns the call's
   error once it is over with one (every later test or wait returns it again; *done is not
   written). Errors: PHASERS_ENULL (request, done), PHASERS_EDESTROYED (a request already waited
   for or freed), PHASERS_EBUSY (another thread is using the request), and the call's errors. */
int phasers_request_test(phasers_request *request, int *done);

/* Waits until the call is over, frees the request (whatever the outcome) and returns the call's
   outcome: PHASERS_OK or its error. Errors: PHASERS_ENULL, PHASERS_EDESTROYED, PHASERS_EBUSY
   (another thread is using the request; nothing was freed), and the call's errors. */
int phasers_request_wait(phasers_request *request);

/* As phasers_request_wait, giving up after timeout_ns nanoseconds with PHASERS_ETIMEDOUT, which
   leaves the request valid and in flight (phasers_last_error() names the members that had not
   started the call); call it again, or phasers_request_wait, to finish it. Any other outcome frees
   the request, as phasers_request_wait does. A timeout of 0 only checks. */
int phasers_request_timedwait(phasers_request *request, uint64_t timeout_ns);

/* Frees the request, first finishing its call (waiting for the other members if need be), as
   dropping a Rust Pending does; the call's own outcome is discarded (use phasers_request_wait to
   see it). Errors: PHASERS_ENULL, PHASERS_EDESTROYED (including a second free), PHASERS_EBUSY
   (another thread is using the request; nothing was freed). */
int phasers_request_free(phasers_request *request);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PHASERS_H */
