/* Teams from C: every collective, blocking and non-blocking (completed by wait, test, timedwait
   and free), for every element type and operator with 2 to 4 threads against a sequential
   computation; split; checked mismatches (PHASERS_EMISMATCH on every member); a member or a
   request used by two threads at once and a member held by a request (PHASERS_EBUSY, made
   deterministic); timedwait's PHASERS_ETIMEDOUT leaving the request in flight; a destroyed member
   breaking the team; NULL, destroyed and foreign handles; invalid arguments and buffers. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"

#define MAX_PARTIES 4
#define MAX_COUNT 40 /* 40 doubles: past the 64 bytes that travel inline */
#define SENTINEL 77
#define LONG_NS 60000000000ull

/* ---- running a body in one thread per member ---- */

struct ctx {
    phasers_member *m;
    int rank, parties;
};

typedef void (*body_fn)(struct ctx *);

struct thread_arg {
    struct ctx ctx;
    body_fn body;
};

static void *thread_main(void *arg) {
    struct thread_arg *t = arg;
    t->body(&t->ctx);
    return NULL;
}

/* A team of `parties` members, one thread each running `body`; the members and the team are
   destroyed afterwards (checking that the team refuses while members exist). */
static void with_team(int parties, int checked, body_fn body) {
    phasers_team *team;
    EXPECT_OK(phasers_team_create((size_t)parties, checked, &team));
    size_t got = 0;
    EXPECT_OK(phasers_team_parties(team, &got));
    CHECK(got == (size_t)parties);
    struct thread_arg args[MAX_PARTIES];
    pthread_t ids[MAX_PARTIES];
    for (int r = 0; r < parties; r++) {
        EXPECT_OK(phasers_team_member(team, (size_t)r, &args[r].ctx.m));
        size_t rank = 99, count = 0;
        EXPECT_OK(phasers_member_rank(args[r].ctx.m, &rank));
        EXPECT_OK(phasers_member_parties(args[r].ctx.m, &count));
        CHECK(rank == (size_t)r && count == (size_t)parties);
        args[r].ctx.rank = r;
        args[r].ctx.parties = parties;
        args[r].body = body;
    }
    for (int r = 0; r < parties; r++) {
        CHECK(pthread_create(&ids[r], NULL, thread_main, &args[r]) == 0);
    }
    for (int r = 0; r < parties; r++) {
        CHECK(pthread_join(ids[r], NULL) == 0);
    }
    EXPECT_CODE(PHASERS_EBUSY, phasers_team_destroy(team));
    EXPECT_MESSAGE("member handle");
    for (int r = 0; r < parties; r++) {
        EXPECT_OK(phasers_member_destroy(args[r].ctx.m));
    }
    EXPECT_OK(phasers_team_destroy(team));
}

/* Completes a request the `how`-th way: wait, test until done then wait, timedwait, free. */
static void complete(phasers_request *request, int how) {
    switch (how % 4) {
    case 0:
        EXPECT_OK(phasers_request_wait(request));
        break;
    case 1: {
        int done = 0;
        while (!done) {
            EXPECT_OK(phasers_request_test(request, &done));
            if (!done) {
                sched_yield();
            }
        }
        EXPECT_OK(phasers_request_test(request, &done)); /* stays over */
        CHECK(done == 1);
        EXPECT_OK(phasers_request_wait(request));
        break;
    }
    case 2:
        EXPECT_OK(phasers_request_timedwait(request, LONG_NS));
        break;
    default:
        /* free finishes the call: the outputs are written when it returns. */
        EXPECT_OK(phasers_request_free(request));
        break;
    }
}

/* The blocking call, or the non-blocking one (whose last argument is &request_) completed the
   how_-th way. */
#define COLLECTIVE(nb_, how_, BLOCKING, NONBLOCKING)                                              \
    do {                                                                                          \
        if (!(nb_)) {                                                                             \
            EXPECT_OK(BLOCKING);                                                                  \
        } else {                                                                                  \
            phasers_request *request_ = NULL;                                                     \
            EXPECT_OK(NONBLOCKING);                                                               \
            complete(request_, (how_)++);                                                         \
        }                                                                                         \
    } while (0)

/* ---- every collective, type and operator ---- */

#define EXPECT_EQ(T, got, want, what)                                                             \
    do {                                                                                          \
        T got_ = (got), want_ = (want);                                                           \
        if (got_ != want_) {                                                                      \
            fprintf(stderr, "%s:%d: %s: %s got %.17g, expected %.17g (rank %d, nb %d, count %d)\n", \
                    __FILE__, __LINE__, #T, what, (double)got_, (double)want_, c->rank, nb,       \
                    count);                                                                       \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

#define INTEGER_BITWISE(op, a, b) (op == PHASERS_OP_AND ? (a & b) : op == PHASERS_OP_OR ? (a | b) : (a ^ b))
#define FLOAT_BITWISE(op, a, b) ((void)(op), (void)(b), a)

/* DEFINE_TYPE(T, suffix, TYPE, SIGNED, OPS, BITWISE): the collectives of one element type. */
#define DEFINE_TYPE(T, suffix, TYPE, SIGNED, OPS, BITWISE)                                        \
    static T val_##suffix(int op, int rank, int i, int salt) {                                    \
        if (op == PHASERS_OP_PRODUCT) {                                                           \
            return (T)((rank + i + salt) % 3 + 1);                                                \
        }                                                                                         \
        return (T)((rank * 7 + i * 3 + salt) % 23 - (SIGNED ? 11 : 0));                           \
    }                                                                                             \
    static T fold_##suffix(int op, T a, T b) {                                                    \
        switch (op) {                                                                             \
        case PHASERS_OP_SUM: return (T)(a + b);                                                   \
        case PHASERS_OP_PRODUCT: return (T)(a * b);                                               \
        case PHASERS_OP_MIN: return a < b ? a : b;                                                \
        case PHASERS_OP_MAX: return a > b ? a : b;                                                \
        default: return (T)BITWISE(op, a, b);                                                     \
        }                                                                                         \
    }                                                                                             \
    /* The reduction of the values of ranks from .. to - 1. */                                    \
    static T ranks_##suffix(int op, int from, int to, int i, int salt) {                          \
        T acc = val_##suffix(op, from, i, salt);                                                  \
        for (int r = from + 1; r < to; r++) {                                                     \
            acc = fold_##suffix(op, acc, val_##suffix(op, r, i, salt));                           \
        }                                                                                         \
        return acc;                                                                               \
    }                                                                                             \
    static void collectives_##suffix(struct ctx *c, int nb, int count, int *how) {                \
        phasers_member *m = c->m;                                                                 \
        int me = c->rank, parties = c->parties;                                                   \
        size_t n = (size_t)count;                                                                 \
        T in[MAX_PARTIES * MAX_COUNT], out[MAX_PARTIES * MAX_COUNT];                              \
        /* broadcast from the last member */                                                      \
        int root = parties - 1;                                                                   \
        for (int i = 0; i < count; i++) {                                                         \
            out[i] = val_##suffix(PHASERS_OP_SUM, me, i, 1);                                      \
        }                                                                                         \
        COLLECTIVE(nb, *how, phasers_member_broadcast(m, TYPE, out, n, (size_t)root),             \
                   phasers_member_ibroadcast(m, TYPE, out, n, (size_t)root, &request_));          \
        for (int i = 0; i < count; i++) {                                                         \
            EXPECT_EQ(T, out[i], val_##suffix(PHASERS_OP_SUM, root, i, 1), "broadcast");          \
        }                                                                                         \
        for (int op = 0; op < OPS; op++) {                                                        \
            root = op % parties;                                                                  \
            for (int i = 0; i < count; i++) {                                                     \
                in[i] = val_##suffix(op, me, i, op);                                              \
                out[i] = (T)SENTINEL;                                                             \
            }                                                                                     \
            /* reduce: the others pass NULL for even ops, an output left untouched otherwise */   \
            T *reduce_out = me == root || op % 2 ? out : NULL;                                    \
            COLLECTIVE(nb, *how,                                                                  \
                       phasers_member_reduce(m, TYPE, op, in, reduce_out, n, (size_t)root),       \
                       phasers_member_ireduce(m, TYPE, op, in, reduce_out, n, (size_t)root,       \
                                              &request_));                                        \
            for (int i = 0; i < count; i++) {                                                     \
                EXPECT_EQ(T, out[i],                                                              \
                          me == root ? ranks_##suffix(op, 0, parties, i, op) : (T)SENTINEL,       \
                          "reduce");                                                              \
            }                                                                                     \
            COLLECTIVE(nb, *how, phasers_member_allreduce(m, TYPE, op, in, out, n),               \
                       phasers_member_iallreduce(m, TYPE, op, in, out, n, &request_));            \
            for (int i = 0; i < count; i++) {                                                     \
                EXPECT_EQ(T, out[i], ranks_##suffix(op, 0, parties, i, op), "allreduce");         \
            }                                                                                     \
            COLLECTIVE(nb, *how, phasers_member_scan_inclusive(m, TYPE, op, in, out, n),          \
                       phasers_member_iscan_inclusive(m, TYPE, op, in, out, n, &request_));       \
            for (int i = 0; i < count; i++) {                                                     \
                EXPECT_EQ(T, out[i], ranks_##suffix(op, 0, me + 1, i, op), "scan_inclusive");     \
                out[i] = (T)SENTINEL;                                                             \
            }                                                                                     \
            COLLECTIVE(nb, *how, phasers_member_scan_exclusive(m, TYPE, op, in, out, n),          \
                       phasers_member_iscan_exclusive(m, TYPE, op, in, out, n, &request_));       \
            for (int i = 0; i < count; i++) {                                                     \
                EXPECT_EQ(T, out[i], me == 0 ? (T)SENTINEL : ranks_##suffix(op, 0, me, i, op),    \
                          "scan_exclusive");                                                      \
            }                                                                                     \
        }                                                                                         \
        /* gather to member 1 (0 with one member); the others pass NULL */                        \
        root = 1 % parties;                                                                       \
        for (int i = 0; i < count; i++) {                                                         \
            in[i] = val_##suffix(PHASERS_OP_SUM, me, i, 5);                                       \
        }                                                                                         \
        T *gather_out = me == root ? out : NULL;                                                  \
        COLLECTIVE(nb, *how, phasers_member_gather(m, TYPE, in, gather_out, n, (size_t)root),     \
                   phasers_member_igather(m, TYPE, in, gather_out, n, (size_t)root, &request_));  \
        for (int r = 0; me == root && r < parties; r++) {                                         \
            for (int i = 0; i < count; i++) {                                                     \
                EXPECT_EQ(T, out[r * count + i], val_##suffix(PHASERS_OP_SUM, r, i, 5), "gather"); \
            }                                                                                     \
        }                                                                                         \
        COLLECTIVE(nb, *how, phasers_member_allgather(m, TYPE, in, out, n),                       \
                   phasers_member_iallgather(m, TYPE, in, out, n, &request_));                    \
        for (int r = 0; r < parties; r++) {                                                       \
            for (int i = 0; i < count; i++) {                                                     \
                EXPECT_EQ(T, out[r * count + i], val_##suffix(PHASERS_OP_SUM, r, i, 5),           \
                          "allgather");                                                           \
            }                                                                                     \
        }                                                                                         \
        /* scatter from member 0; the others pass NULL input */                                   \
        root = 0;                                                                                 \
        for (int r = 0; r < parties; r++) {                                                       \
            for (int i = 0; i < count; i++) {                                                     \
                in[r * count + i] = val_##suffix(PHASERS_OP_SUM, r, i, 9);                        \
            }                                                                                     \
        }                                                                                         \
        T *scatter_in = me == root ? in : NULL;                                                   \
        COLLECTIVE(nb, *how, phasers_member_scatter(m, TYPE, scatter_in, out, n, (size_t)root),   \
                   phasers_member_iscatter(m, TYPE, scatter_in, out, n, (size_t)root,             \
                                           &request_));                                           \
        for (int i = 0; i < count; i++) {                                                         \
            EXPECT_EQ(T, out[i], val_##suffix(PHASERS_OP_SUM, me, i, 9), "scatter");              \
        }                                                                                         \
        /* alltoall: block r of member s's input goes to block s of member r's output */         \
        for (int r = 0; r < parties; r++) {                                                       \
            for (int i = 0; i < count; i++) {                                                     \
                in[r * count + i] = val_##suffix(PHASERS_OP_SUM, me * 4 + r, i, 13);              \
            }                                                                                     \
        }                                                                                         \
        COLLECTIVE(nb, *how, phasers_member_alltoall(m, TYPE, in, out, n),                        \
                   phasers_member_ialltoall(m, TYPE, in, out, n, &request_));                     \
        for (int s = 0; s < parties; s++) {                                                       \
            for (int i = 0; i < count; i++) {                                                     \
                EXPECT_EQ(T, out[s * count + i], val_##suffix(PHASERS_OP_SUM, s * 4 + me, i, 13), \
                          "alltoall");                                                            \
            }                                                                                     \
        }                                                                                         \
        COLLECTIVE(nb, *how, phasers_member_barrier(m), phasers_member_ibarrier(m, &request_));   \
    }

DEFINE_TYPE(int32_t, i32, PHASERS_TYPE_I32, 1, 7, INTEGER_BITWISE)
DEFINE_TYPE(int64_t, i64, PHASERS_TYPE_I64, 1, 7, INTEGER_BITWISE)
DEFINE_TYPE(uint32_t, u32, PHASERS_TYPE_U32, 0, 7, INTEGER_BITWISE)
DEFINE_TYPE(uint64_t, u64, PHASERS_TYPE_U64, 0, 7, INTEGER_BITWISE)
DEFINE_TYPE(float, f32, PHASERS_TYPE_F32, 1, 4, FLOAT_BITWISE)
DEFINE_TYPE(double, f64, PHASERS_TYPE_F64, 1, 4, FLOAT_BITWISE)

static void every_collective(struct ctx *c) {
    int how = c->rank; /* members complete their requests in different ways */
    static const int counts[] = {3, MAX_COUNT};
    for (int nb = 0; nb <= 1; nb++) {
        for (int k = 0; k < 2; k++) {
            collectives_i32(c, nb, counts[k], &how);
            collectives_i64(c, nb, counts[k], &how);
            collectives_u32(c, nb, counts[k], &how);
            collectives_u64(c, nb, counts[k], &how);
            collectives_f32(c, nb, counts[k], &how);
            collectives_f64(c, nb, counts[k], &how);
        }
    }
}

/* ---- checked mismatches: every member gets PHASERS_EMISMATCH; the team stays usable ---- */

static void mismatched(struct ctx *c) {
    phasers_member *m = c->m;
    int me = c->rank;
    int64_t in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8 * MAX_PARTIES];
    phasers_request *request;

    EXPECT_CODE(PHASERS_EMISMATCH, phasers_member_allreduce(m, PHASERS_TYPE_I64, PHASERS_OP_SUM,
                                                            in, out, me == 1 ? 2 : 3));
    EXPECT_MESSAGE("mismatched length");
    EXPECT_CODE(PHASERS_EMISMATCH,
                phasers_member_broadcast(m, PHASERS_TYPE_I64, out, 3, me == 2 ? 1 : 0));
    EXPECT_MESSAGE("mismatched root");
    EXPECT_CODE(PHASERS_EMISMATCH,
                phasers_member_allreduce(m, PHASERS_TYPE_I64,
                                         me == 0 ? PHASERS_OP_MAX : PHASERS_OP_SUM, in, out, 3));
    EXPECT_MESSAGE("mismatched operation");
    EXPECT_CODE(PHASERS_EMISMATCH,
                phasers_member_allgather(m, me == 1 ? PHASERS_TYPE_U64 : PHASERS_TYPE_I64, in, out,
                                         2));
    EXPECT_MESSAGE("mismatched element type");
    if (me == 0) {
        EXPECT_CODE(PHASERS_EMISMATCH, phasers_member_barrier(m));
    } else {
        EXPECT_CODE(PHASERS_EMISMATCH, phasers_member_scan_inclusive(m, PHASERS_TYPE_I64,
                                                                     PHASERS_OP_SUM, in, out, 2));
    }
    EXPECT_MESSAGE("mismatched collective");
    /* A blocking call against non-blocking ones. */
    if (me == 0) {
        EXPECT_CODE(PHASERS_EMISMATCH, phasers_member_gather(m, PHASERS_TYPE_I64, in, NULL, 2, 1));
    } else {
        EXPECT_OK(phasers_member_igather(m, PHASERS_TYPE_I64, in, out, 2, 1, &request));
        EXPECT_CODE(PHASERS_EMISMATCH, phasers_request_wait(request));
    }
    EXPECT_MESSAGE("mismatched form");
    /* Non-blocking calls that differ: the error comes from the request (test, then wait). */
    EXPECT_OK(phasers_member_iscatter(m, PHASERS_TYPE_I64, in, out, me == 2 ? 1 : 2, 0, &request));
    int done = 0;
    int code;
    while ((code = phasers_request_test(request, &done)) == PHASERS_OK) {
        CHECK(done == 0);
        sched_yield();
    }
    CHECK(code == PHASERS_EMISMATCH);
    EXPECT_CODE(PHASERS_EMISMATCH, phasers_request_wait(request));
    /* Matched again: the team works. */
    EXPECT_OK(phasers_member_allreduce(m, PHASERS_TYPE_I64, PHASERS_OP_SUM, in, out, 3));
    CHECK(out[0] == 3 && out[2] == 9);
}

/* Errors found by the call reach every member: a root out of range, a bitwise op on floats. */
static void invalid_for_all(struct ctx *c) {
    double in[2] = {1, 2}, out[2];
    EXPECT_CODE(PHASERS_EINVAL, phasers_member_broadcast(c->m, PHASERS_TYPE_F64, out, 2, 5));
    EXPECT_MESSAGE("root 5 is out of range");
    EXPECT_CODE(PHASERS_EINVAL,
                phasers_member_allreduce(c->m, PHASERS_TYPE_F64, PHASERS_OP_XOR, in, out, 2));
    EXPECT_MESSAGE("integers only");
    phasers_request *request;
    EXPECT_OK(phasers_member_ireduce(c->m, PHASERS_TYPE_F32, PHASERS_OP_AND, in, out, 2, 0,
                                     &request));
    EXPECT_CODE(PHASERS_EINVAL, phasers_request_wait(request));
    EXPECT_OK(phasers_member_allreduce(c->m, PHASERS_TYPE_F64, PHASERS_OP_MAX, in, out, 2));
    CHECK(out[1] == 2);
}

/* An unchecked team works for matched calls. */
static void unchecked(struct ctx *c) {
    uint32_t in[3] = {1u << c->rank, 0, 5}, out[3];
    EXPECT_OK(phasers_member_allreduce(c->m, PHASERS_TYPE_U32, PHASERS_OP_OR, in, out, 3));
    CHECK(out[0] == (1u << c->parties) - 1 && out[2] == 5);
}

/* ---- split ---- */

static void split(struct ctx *c) {
    phasers_member *sub;
    int me = c->rank;
    /* Even and odd ranks; the key reverses the order. */
    EXPECT_OK(phasers_member_split(c->m, me % 2, -me, &sub));
    size_t rank = 99, parties = 0;
    EXPECT_OK(phasers_member_rank(sub, &rank));
    EXPECT_OK(phasers_member_parties(sub, &parties));
    CHECK(parties == 2 && rank == (me < 2 ? 1u : 0u));
    int64_t in[1] = {me}, out[1];
    EXPECT_OK(phasers_member_allreduce(sub, PHASERS_TYPE_I64, PHASERS_OP_SUM, in, out, 1));
    CHECK(out[0] == (me % 2 ? 1 + 3 : 0 + 2));
    phasers_request *request;
    EXPECT_OK(phasers_member_ibarrier(sub, &request));
    EXPECT_OK(phasers_request_wait(request));
    /* The team itself still works, independently. */
    EXPECT_OK(phasers_member_allreduce(c->m, PHASERS_TYPE_I64, PHASERS_OP_SUM, in, out, 1));
    CHECK(out[0] == 6);
    EXPECT_OK(phasers_member_destroy(sub));
}

/* ---- two threads on one member, a member held by a request, two threads on one request ---- */

static phasers_member *shared_member;
static phasers_request *shared_request;
static atomic_int busy_count, ok_count;

static void *barrier_on_shared_member(void *unused) {
    (void)unused;
    int code = phasers_member_barrier(shared_member);
    if (code == PHASERS_EBUSY) {
        EXPECT_MESSAGE("in use by another thread");
        atomic_fetch_add(&busy_count, 1);
    } else {
        EXPECT_OK(code);
        atomic_fetch_add(&ok_count, 1);
    }
    return NULL;
}

static void *wait_on_shared_request(void *unused) {
    (void)unused;
    int code = phasers_request_wait(shared_request);
    if (code == PHASERS_EBUSY) {
        EXPECT_MESSAGE("request is in use by another thread");
        atomic_fetch_add(&busy_count, 1);
    } else {
        EXPECT_OK(code);
        atomic_fetch_add(&ok_count, 1);
    }
    return NULL;
}

static void busy(void) {
    phasers_team *team;
    phasers_member *m0, *m1;
    EXPECT_OK(phasers_team_create(2, 1, &team));
    EXPECT_OK(phasers_team_member(team, 0, &m0));
    EXPECT_OK(phasers_team_member(team, 1, &m1));

    /* Two threads call a barrier as member 0. Member 1 has not called, so whichever thread took
       member 0 first stays inside until it does: the other must get PHASERS_EBUSY. */
    shared_member = m0;
    pthread_t a, b;
    CHECK(pthread_create(&a, NULL, barrier_on_shared_member, NULL) == 0);
    CHECK(pthread_create(&b, NULL, barrier_on_shared_member, NULL) == 0);
    while (atomic_load(&busy_count) == 0) {
        sched_yield();
    }
    CHECK(atomic_load(&ok_count) == 0);
    /* A thread is inside a call on member 0: every other call and its destroy are refused. */
    phasers_request *request;
    EXPECT_CODE(PHASERS_EBUSY, phasers_member_ibarrier(m0, &request));
    EXPECT_CODE(PHASERS_EBUSY, phasers_member_destroy(m0));
    size_t rank;
    EXPECT_OK(phasers_member_rank(m0, &rank)); /* queries need no hold */
    EXPECT_OK(phasers_member_barrier(m1));
    CHECK(pthread_join(a, NULL) == 0 && pthread_join(b, NULL) == 0);
    CHECK(atomic_load(&busy_count) == 1 && atomic_load(&ok_count) == 1);

    /* A request holds its member until it is waited for or freed. */
    int done = -1;
    EXPECT_OK(phasers_member_ibarrier(m0, &request));
    EXPECT_CODE(PHASERS_EBUSY, phasers_member_barrier(m0));
    EXPECT_MESSAGE("non-blocking call in flight");
    double x[1] = {1}, y[1];
    phasers_request *second;
    EXPECT_CODE(PHASERS_EBUSY,
                phasers_member_iallreduce(m0, PHASERS_TYPE_F64, PHASERS_OP_SUM, x, y, 1, &second));
    EXPECT_CODE(PHASERS_EBUSY, phasers_member_destroy(m0));
    EXPECT_OK(phasers_request_test(request, &done));
    CHECK(done == 0); /* member 1 has not started it */
    phasers_request *other;
    EXPECT_OK(phasers_member_ibarrier(m1, &other));
    while (!done) {
        EXPECT_OK(phasers_request_test(request, &done));
        int other_done;
        EXPECT_OK(phasers_request_test(other, &other_done));
    }
    EXPECT_OK(phasers_request_free(request));
    EXPECT_OK(phasers_request_wait(other));

    /* Two threads wait on one request: one gets PHASERS_EBUSY (member 1 has not started the
       call, so the other stays inside its wait until it does). */
    atomic_store(&busy_count, 0);
    atomic_store(&ok_count, 0);
    EXPECT_OK(phasers_member_iallreduce(m0, PHASERS_TYPE_F64, PHASERS_OP_SUM, x, y, 1,
                                        &shared_request));
    CHECK(pthread_create(&a, NULL, wait_on_shared_request, NULL) == 0);
    CHECK(pthread_create(&b, NULL, wait_on_shared_request, NULL) == 0);
    while (atomic_load(&busy_count) == 0) {
        sched_yield();
    }
    CHECK(atomic_load(&ok_count) == 0);
    double x1[1] = {2}, y1[1];
    phasers_request *r1;
    EXPECT_OK(phasers_member_iallreduce(m1, PHASERS_TYPE_F64, PHASERS_OP_SUM, x1, y1, 1, &r1));
    EXPECT_OK(phasers_request_wait(r1));
    CHECK(pthread_join(a, NULL) == 0 && pthread_join(b, NULL) == 0);
    CHECK(atomic_load(&busy_count) == 1 && atomic_load(&ok_count) == 1);
    CHECK(y[0] == 3 && y1[0] == 3);

    EXPECT_OK(phasers_member_destroy(m0));
    EXPECT_OK(phasers_member_destroy(m1));
    EXPECT_OK(phasers_team_destroy(team));
}

/* ---- timedwait: PHASERS_ETIMEDOUT leaves the request in flight; a later wait completes it ---- */

static void timeouts(void) {
    phasers_team *team;
    phasers_member *m0, *m1;
    EXPECT_OK(phasers_team_create(2, 1, &team));
    EXPECT_OK(phasers_team_member(team, 0, &m0));
    EXPECT_OK(phasers_team_member(team, 1, &m1));
    int64_t in0[2] = {1, 2}, in1[2] = {10, 20}, out0[2] = {0, 0}, out1[2];
    phasers_request *r0, *r1;
    EXPECT_OK(phasers_member_iallreduce(m0, PHASERS_TYPE_I64, PHASERS_OP_SUM, in0, out0, 2, &r0));
    EXPECT_CODE(PHASERS_ETIMEDOUT, phasers_request_timedwait(r0, 1000000));
    EXPECT_MESSAGE("[1]");
    EXPECT_CODE(PHASERS_ETIMEDOUT, phasers_request_timedwait(r0, 0)); /* 0 only checks */
    CHECK(out0[0] == 0); /* nothing written yet */
    int done = -1;
    EXPECT_OK(phasers_request_test(r0, &done));
    CHECK(done == 0);
    EXPECT_OK(phasers_member_iallreduce(m1, PHASERS_TYPE_I64, PHASERS_OP_SUM, in1, out1, 2, &r1));
    EXPECT_OK(phasers_request_timedwait(r0, LONG_NS)); /* completes, and frees r0 */
    CHECK(out0[0] == 11 && out0[1] == 22);
    EXPECT_OK(phasers_request_wait(r1));
    CHECK(out1[0] == 11 && out1[1] == 22);
    /* r0 and r1 are gone. */
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_request_test(r0, &done));
    EXPECT_MESSAGE("already destroyed");
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_request_wait(r0));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_request_timedwait(r0, 0));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_request_free(r1));
    EXPECT_OK(phasers_member_destroy(m0));
    EXPECT_OK(phasers_member_destroy(m1));
    EXPECT_OK(phasers_team_destroy(team));
}

/* ---- a destroyed member breaks the team for the others ---- */

static void broken(void) {
    phasers_team *team;
    phasers_member *m0, *m1;
    EXPECT_OK(phasers_team_create(2, 1, &team));
    EXPECT_OK(phasers_team_member(team, 0, &m0));
    EXPECT_OK(phasers_team_member(team, 1, &m1));
    EXPECT_OK(phasers_member_destroy(m1));
    EXPECT_CODE(PHASERS_EBROKEN, phasers_member_barrier(m0));
    /* A non-blocking call on a broken team fails at once and makes no request: the member is not
       left held. */
    phasers_request *request = NULL;
    int64_t in[1] = {1}, out[1];
    EXPECT_CODE(PHASERS_EBROKEN, phasers_member_iallreduce(m0, PHASERS_TYPE_I64, PHASERS_OP_SUM, in,
                                                           out, 1, &request));
    CHECK(request == NULL);
    EXPECT_CODE(PHASERS_EBROKEN, phasers_member_ibarrier(m0, &request));
    EXPECT_OK(phasers_member_destroy(m0));
    EXPECT_OK(phasers_team_destroy(team));
}

/* ---- a request in flight when a member is destroyed: a poll says what the wait would ---- */

/* Issue 31: phasers_request_test used to report done = 0 for ever on a broken team, so a program
   polling MPI_Test style spun for ever while timedwait said EBROKEN. Both calls, and both the
   barrier and a reduction, must now report the break; the request stays valid after a failed
   test, as after any test, and the member is free again once it is freed. */
static void broken_while_polling(void) {
    for (int which = 0; which < 2; which++) {
        phasers_team *team;
        phasers_member *m0, *m1;
        EXPECT_OK(phasers_team_create(2, 1, &team));
        EXPECT_OK(phasers_team_member(team, 0, &m0));
        EXPECT_OK(phasers_team_member(team, 1, &m1));
        phasers_request *request = NULL;
        int64_t in[1] = {1}, out[1] = {0};
        if (which == 0) {
            EXPECT_OK(phasers_member_ibarrier(m0, &request));
        } else {
            EXPECT_OK(phasers_member_iallreduce(m0, PHASERS_TYPE_I64, PHASERS_OP_SUM, in, out, 1,
                                                &request));
        }
        int done = -1;
        EXPECT_OK(phasers_request_test(request, &done));
        CHECK(done == 0); /* member 1 has not started the call */
        EXPECT_OK(phasers_member_destroy(m1));
        done = -1;
        EXPECT_CODE(PHASERS_EBROKEN, phasers_request_test(request, &done));
        EXPECT_MESSAGE("participant 1");
        EXPECT_CODE(PHASERS_EBROKEN, phasers_request_test(request, &done)); /* and it stays so */
        EXPECT_CODE(PHASERS_EBROKEN, phasers_request_timedwait(request, 0)); /* frees it */
        CHECK(out[0] == 0); /* nothing was written */
        EXPECT_CODE(PHASERS_EBROKEN, phasers_member_barrier(m0));
        EXPECT_OK(phasers_member_destroy(m0));
        EXPECT_OK(phasers_team_destroy(team));
    }
}

/* ---- handles and arguments ---- */

static void errors(void) {
    phasers_team *team;
    phasers_member *m, *dead, *sub;
    phasers_request *request;
    EXPECT_CODE(PHASERS_ENULL, phasers_team_create(1, 1, NULL));
    EXPECT_CODE(PHASERS_EINVAL, phasers_team_create(0, 1, &team));
    EXPECT_CODE(PHASERS_EINVAL, phasers_team_create(65536, 1, &team));
    EXPECT_OK(phasers_team_create(1, 1, &team));
    EXPECT_CODE(PHASERS_EINVAL, phasers_team_member(team, 1, &m));
    EXPECT_MESSAGE("out of range");
    EXPECT_CODE(PHASERS_ENULL, phasers_team_member(team, 0, NULL));
    EXPECT_CODE(PHASERS_ENULL, phasers_team_member(NULL, 0, &m));
    EXPECT_OK(phasers_team_member(team, 0, &m));
    EXPECT_CODE(PHASERS_EINVAL, phasers_team_member(team, 0, &dead));
    EXPECT_MESSAGE("already handed out");
    size_t n;
    EXPECT_CODE(PHASERS_ENULL, phasers_team_parties(NULL, &n));
    EXPECT_CODE(PHASERS_ENULL, phasers_team_parties(team, NULL));
    EXPECT_CODE(PHASERS_ENULL, phasers_team_destroy(NULL));

    /* One member: every collective completes at once. */
    double in[4] = {1, 2, 3, 4}, out[4] = {0};
    EXPECT_OK(phasers_member_allreduce(m, PHASERS_TYPE_F64, PHASERS_OP_SUM, in, out, 4));
    CHECK(out[3] == 4);
    EXPECT_OK(phasers_member_allreduce(m, PHASERS_TYPE_F64, PHASERS_OP_SUM, NULL, NULL, 0));
    EXPECT_CODE(PHASERS_EINVAL, phasers_member_allreduce(m, 6, PHASERS_OP_SUM, in, out, 4));
    EXPECT_MESSAGE("PHASERS_TYPE_");
    EXPECT_CODE(PHASERS_EINVAL, phasers_member_allreduce(m, PHASERS_TYPE_F64, 7, in, out, 4));
    EXPECT_MESSAGE("PHASERS_OP_");
    EXPECT_CODE(PHASERS_EINVAL, phasers_member_ireduce(m, -1, PHASERS_OP_SUM, in, out, 4, 0,
                                                       &request));
    EXPECT_CODE(PHASERS_EINVAL,
                phasers_member_allreduce(m, PHASERS_TYPE_F64, PHASERS_OP_SUM, in, in + 1, 2));
    EXPECT_MESSAGE("overlap");
    EXPECT_CODE(PHASERS_EINVAL,
                phasers_member_allreduce(m, PHASERS_TYPE_F64, PHASERS_OP_SUM,
                                         (const char *)in + 1, out, 1));
    EXPECT_MESSAGE("aligned");
    EXPECT_CODE(PHASERS_EINVAL, phasers_member_alltoall(m, PHASERS_TYPE_F64, in, out,
                                                        SIZE_MAX / 4));
    EXPECT_CODE(PHASERS_EINVAL, phasers_member_split(m, -1, 0, &sub));
    EXPECT_MESSAGE("negative");

    /* NULL */
    EXPECT_CODE(PHASERS_ENULL, phasers_member_allreduce(m, PHASERS_TYPE_F64, PHASERS_OP_SUM, NULL,
                                                        out, 4));
    EXPECT_MESSAGE("input is NULL");
    EXPECT_CODE(PHASERS_ENULL, phasers_member_allreduce(m, PHASERS_TYPE_F64, PHASERS_OP_SUM, in,
                                                        NULL, 4));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_broadcast(m, PHASERS_TYPE_F64, NULL, 4, 0));
    EXPECT_MESSAGE("buffer is NULL");
    EXPECT_CODE(PHASERS_ENULL, phasers_member_reduce(m, PHASERS_TYPE_F64, PHASERS_OP_SUM, in, NULL,
                                                     4, 0)); /* at the root */
    EXPECT_CODE(PHASERS_ENULL, phasers_member_gather(m, PHASERS_TYPE_F64, in, NULL, 4, 0));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_scatter(m, PHASERS_TYPE_F64, NULL, out, 4, 0));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_iallgather(m, PHASERS_TYPE_F64, in, out, 4, NULL));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_ibarrier(m, NULL));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_split(m, 0, 0, NULL));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_rank(m, NULL));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_parties(m, NULL));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_barrier(NULL));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_ibarrier(NULL, &request));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_broadcast(NULL, PHASERS_TYPE_F64, out, 4, 0));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_ibroadcast(NULL, PHASERS_TYPE_F64, out, 4, 0,
                                                         &request));
    EXPECT_CODE(PHASERS_ENULL,
                phasers_member_reduce(NULL, PHASERS_TYPE_F64, PHASERS_OP_SUM, in, out, 4, 0));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_ireduce(NULL, PHASERS_TYPE_F64, PHASERS_OP_SUM, in,
                                                      out, 4, 0, &request));
    EXPECT_CODE(PHASERS_ENULL,
                phasers_member_allreduce(NULL, PHASERS_TYPE_F64, PHASERS_OP_SUM, in, out, 4));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_iallreduce(NULL, PHASERS_TYPE_F64, PHASERS_OP_SUM,
                                                         in, out, 4, &request));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_gather(NULL, PHASERS_TYPE_F64, in, out, 1, 0));
    EXPECT_CODE(PHASERS_ENULL,
                phasers_member_igather(NULL, PHASERS_TYPE_F64, in, out, 1, 0, &request));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_allgather(NULL, PHASERS_TYPE_F64, in, out, 1));
    EXPECT_CODE(PHASERS_ENULL,
                phasers_member_iallgather(NULL, PHASERS_TYPE_F64, in, out, 1, &request));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_scatter(NULL, PHASERS_TYPE_F64, in, out, 1, 0));
    EXPECT_CODE(PHASERS_ENULL,
                phasers_member_iscatter(NULL, PHASERS_TYPE_F64, in, out, 1, 0, &request));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_alltoall(NULL, PHASERS_TYPE_F64, in, out, 1));
    EXPECT_CODE(PHASERS_ENULL,
                phasers_member_ialltoall(NULL, PHASERS_TYPE_F64, in, out, 1, &request));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_scan_inclusive(NULL, PHASERS_TYPE_F64,
                                                             PHASERS_OP_SUM, in, out, 1));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_iscan_inclusive(NULL, PHASERS_TYPE_F64,
                                                              PHASERS_OP_SUM, in, out, 1,
                                                              &request));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_scan_exclusive(NULL, PHASERS_TYPE_F64,
                                                             PHASERS_OP_SUM, in, out, 1));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_iscan_exclusive(NULL, PHASERS_TYPE_F64,
                                                              PHASERS_OP_SUM, in, out, 1,
                                                              &request));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_split(NULL, 0, 0, &sub));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_rank(NULL, &n));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_parties(NULL, &n));
    EXPECT_CODE(PHASERS_ENULL, phasers_member_destroy(NULL));
    int flag;
    EXPECT_CODE(PHASERS_ENULL, phasers_request_test(NULL, &flag));
    EXPECT_CODE(PHASERS_ENULL, phasers_request_wait(NULL));
    EXPECT_CODE(PHASERS_ENULL, phasers_request_timedwait(NULL, 0));
    EXPECT_CODE(PHASERS_ENULL, phasers_request_free(NULL));
    EXPECT_OK(phasers_member_ibarrier(m, &request));
    EXPECT_CODE(PHASERS_ENULL, phasers_request_test(request, NULL));
    EXPECT_OK(phasers_request_wait(request));

    /* Every kind of call with a destroyed member. */
    EXPECT_OK(phasers_member_split(m, 3, 0, &dead));
    EXPECT_CODE(PHASERS_EBUSY, phasers_team_destroy(team)); /* split members count */
    EXPECT_OK(phasers_member_destroy(dead));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_member_destroy(dead));
    EXPECT_MESSAGE("already destroyed");
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_member_rank(dead, &n));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_member_parties(dead, &n));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_member_split(dead, 0, 0, &sub));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_member_barrier(dead));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_member_ibarrier(dead, &request));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_member_broadcast(dead, PHASERS_TYPE_F64, out, 1, 0));
    EXPECT_CODE(PHASERS_EDESTROYED,
                phasers_member_ibroadcast(dead, PHASERS_TYPE_F64, out, 1, 0, &request));
    EXPECT_CODE(PHASERS_EDESTROYED,
                phasers_member_reduce(dead, PHASERS_TYPE_F64, PHASERS_OP_SUM, in, out, 1, 0));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_member_ireduce(dead, PHASERS_TYPE_F64, PHASERS_OP_SUM,
                                                           in, out, 1, 0, &request));
    EXPECT_CODE(PHASERS_EDESTROYED,
                phasers_member_allreduce(dead, PHASERS_TYPE_F64, PHASERS_OP_SUM, in, out, 1));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_member_iallreduce(dead, PHASERS_TYPE_F64,
                                                              PHASERS_OP_SUM, in, out, 1,
                                                              &request));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_member_gather(dead, PHASERS_TYPE_F64, in, out, 1, 0));
    EXPECT_CODE(PHASERS_EDESTROYED,
                phasers_member_igather(dead, PHASERS_TYPE_F64, in, out, 1, 0, &request));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_member_allgather(dead, PHASERS_TYPE_F64, in, out, 1));
    EXPECT_CODE(PHASERS_EDESTROYED,
                phasers_member_iallgather(dead, PHASERS_TYPE_F64, in, out, 1, &request));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_member_scatter(dead, PHASERS_TYPE_F64, in, out, 1, 0));
    EXPECT_CODE(PHASERS_EDESTROYED,
                phasers_member_iscatter(dead, PHASERS_TYPE_F64, in, out, 1, 0, &request));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_member_alltoall(dead, PHASERS_TYPE_F64, in, out, 1));
    EXPECT_CODE(PHASERS_EDESTROYED,
                phasers_member_ialltoall(dead, PHASERS_TYPE_F64, in, out, 1, &request));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_member_scan_inclusive(dead, PHASERS_TYPE_F64,
                                                                  PHASERS_OP_SUM, in, out, 1));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_member_iscan_inclusive(dead, PHASERS_TYPE_F64,
                                                                   PHASERS_OP_SUM, in, out, 1,
                                                                   &request));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_member_scan_exclusive(dead, PHASERS_TYPE_F64,
                                                                  PHASERS_OP_SUM, in, out, 1));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_member_iscan_exclusive(dead, PHASERS_TYPE_F64,
                                                                   PHASERS_OP_SUM, in, out, 1,
                                                                   &request));

    /* Handles of another kind. */
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_member_barrier((phasers_member *)(void *)team));
    EXPECT_MESSAGE("phasers_team handle");
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_team_parties((phasers_team *)(void *)m, &n));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_request_free((phasers_request *)(void *)m));

    EXPECT_CODE(PHASERS_EBUSY, phasers_team_destroy(team));
    EXPECT_OK(phasers_member_destroy(m));
    EXPECT_OK(phasers_team_destroy(team));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_team_destroy(team));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_team_parties(team, &n));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_team_member(team, 0, &m));
}

int main(void) {
    errors();
    for (int parties = 2; parties <= MAX_PARTIES; parties++) {
        with_team(parties, 1, every_collective);
    }
    with_team(3, 1, mismatched);
    with_team(2, 1, invalid_for_all);
    with_team(3, 0, unchecked);
    with_team(4, 1, split);
    busy();
    timeouts();
    broken();
    broken_while_polling();
    printf("team ok\n");
    return 0;
}
