/* Reductions from C: reduce and allreduce results with 2 to 4 threads for every element type,
   operator and algorithm against a sequential reduction; quick return and has_result; and the
   error paths: NULL, destroyed and foreign handles, invalid arguments and buffers, mismatched
   counts (PHASERS_EMISMATCH on every rank), a rank used by two threads at once (PHASERS_EBUSY,
   made deterministic), and destroy during a call. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"

#define CALLS 3
#define COUNT 37 /* odd, so that no algorithm splits it evenly */

enum { REDUCE = 0, ALLREDUCE = 1 };

/* The value rank r brings at element i of call c: small integers, exact in float, so every
   combination order gives the same result; products stay small. */
static int64_t value(int op, int r, int c, int i) {
    if (op == PHASERS_OP_PRODUCT) {
        int64_t v = (r + c + i) % 3 + 1;
        return (r + i) % 2 ? -v : v;
    }
    return (r * 7 + c * 3 + i * 5) % 41 - 20;
}

static atomic_int failures;

/* DEFINE_TYPE(T, suffix, BITWISE): the test of one element type. */
#define DEFINE_TYPE(T, suffix, BITWISE)                                                           \
    static T fold_##suffix(int op, T a, T b) {                                                    \
        switch (op) {                                                                             \
        case PHASERS_OP_SUM: return (T)(a + b);                                                   \
        case PHASERS_OP_PRODUCT: return (T)(a * b);                                               \
        case PHASERS_OP_MIN: return a < b ? a : b;                                                \
        case PHASERS_OP_MAX: return a > b ? a : b;                                                \
        default: return BITWISE(op, a, b);                                                        \
        }                                                                                         \
    }                                                                                             \
    static T expected_##suffix(int op, int parties, int c, int i) {                               \
        T result = (T)value(op, 0, c, i);                                                         \
        for (int r = 1; r < parties; r++) {                                                       \
            result = fold_##suffix(op, result, (T)value(op, r, c, i));                            \
        }                                                                                         \
        return result;                                                                            \
    }                                                                                             \
    struct rank_##suffix {                                                                        \
        phasers_reduction *red;                                                                   \
        int rank, parties, root, op, form;                                                        \
    };                                                                                            \
    static void *run_##suffix(void *arg) {                                                        \
        struct rank_##suffix *task = arg;                                                         \
        T input[COUNT], output[COUNT];                                                            \
        for (int c = 0; c < CALLS; c++) {                                                         \
            for (int i = 0; i < COUNT; i++) {                                                     \
                input[i] = (T)value(task->op, task->rank, c, i);                                  \
                output[i] = (T)99;                                                                \
            }                                                                                     \
            int is_root = task->rank == task->root;                                               \
            if (task->form == ALLREDUCE) {                                                        \
                EXPECT_OK(phasers_reduction_allreduce(task->red, (size_t)task->rank, input,       \
                                                      output, COUNT));                            \
            } else {                                                                              \
                int has_result = -1;                                                              \
                /* Other ranks pass NULL on even calls, a buffer that must stay untouched on odd \
                   ones. */                                                                       \
                void *out = is_root || c % 2 ? (void *)output : NULL;                             \
                EXPECT_OK(phasers_reduction_reduce(task->red, (size_t)task->rank, input, out,     \
                                                   COUNT, &has_result));                          \
                CHECK(has_result == is_root);                                                     \
            }                                                                                     \
            for (int i = 0; i < COUNT; i++) {                                                     \
                T want = task->form == ALLREDUCE || is_root                                       \
                             ? expected_##suffix(task->op, task->parties, c, i)                   \
                             : (T)99;                                                             \
                if (output[i] != want) {                                                          \
                    fprintf(stderr,                                                               \
                            #suffix " op %d form %d parties %d rank %d call %d element %d: got "  \
                                    "%.17g, expected %.17g\n",                                    \
                            task->op, task->form, task->parties, task->rank, c, i,                \
                            (double)output[i], (double)want);                                     \
                    atomic_fetch_add(&failures, 1);                                               \
                    break;                                                                        \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
        return NULL;                                                                              \
    }                                                                                             \
    static void case_##suffix(int type, int op, int algorithm, int parties, int form) {           \
        phasers_reduction *red;                                                                   \
        int root = (op + algorithm) % parties;                                                    \
        EXPECT_OK(phasers_reduction_create((size_t)parties, type, op, algorithm, (size_t)root,    \
                                           &red));                                                \
        size_t got_parties = 0;                                                                   \
        EXPECT_OK(phasers_reduction_parties(red, &got_parties));                                  \
        CHECK(got_parties == (size_t)parties);                                                    \
        struct rank_##suffix tasks[4];                                                            \
        pthread_t ids[4];                                                                         \
        for (int r = 0; r < parties; r++) {                                                       \
            struct rank_##suffix task = {red, r, parties, root, op, form};                        \
            tasks[r] = task;                                                                      \
            CHECK(pthread_create(&ids[r], NULL, run_##suffix, &tasks[r]) == 0);                   \
        }                                                                                         \
        for (int r = 0; r < parties; r++) {                                                       \
            CHECK(pthread_join(ids[r], NULL) == 0);                                               \
        }                                                                                         \
        EXPECT_OK(phasers_reduction_destroy(red));                                                \
    }

#define INTEGER_BITWISE(op, a, b) (op == PHASERS_OP_AND ? (a & b) : op == PHASERS_OP_OR ? (a | b) : (a ^ b))
#define FLOAT_BITWISE(op, a, b) ((void)(op), (void)(b), a)

DEFINE_TYPE(int32_t, i32, INTEGER_BITWISE)
DEFINE_TYPE(int64_t, i64, INTEGER_BITWISE)
DEFINE_TYPE(float, f32, FLOAT_BITWISE)
DEFINE_TYPE(double, f64, FLOAT_BITWISE)

static void every_type_op_algorithm_and_size(void) {
    for (int algorithm = PHASERS_REDUCE_AUTO; algorithm <= PHASERS_REDUCE_DYNAMIC_GROUP;
         algorithm++) {
        for (int parties = 2; parties <= 4; parties++) {
            for (int form = REDUCE; form <= ALLREDUCE; form++) {
                for (int op = PHASERS_OP_SUM; op <= PHASERS_OP_XOR; op++) {
                    case_i32(PHASERS_TYPE_I32, op, algorithm, parties, form);
                    case_i64(PHASERS_TYPE_I64, op, algorithm, parties, form);
                    if (op <= PHASERS_OP_MAX) {
                        case_f32(PHASERS_TYPE_F32, op, algorithm, parties, form);
                        case_f64(PHASERS_TYPE_F64, op, algorithm, parties, form);
                    }
                }
            }
        }
    }
}

/* ---- quick return: non-root ranks whose data was consumed return before the root calls ---- */

static atomic_int returned;

struct quick {
    phasers_reduction *red;
    int rank;
};

static void *quick_rank(void *arg) {
    struct quick *task = arg;
    double input[8];
    for (int i = 0; i < 8; i++) {
        input[i] = task->rank + i;
    }
    int has_result = -1;
    EXPECT_OK(phasers_reduction_reduce(task->red, (size_t)task->rank, input, NULL, 8, &has_result));
    CHECK(has_result == 0);
    atomic_fetch_add(&returned, 1);
    return NULL;
}

static void quick_return(int algorithm, int parties) {
    phasers_reduction *red;
    EXPECT_OK(phasers_reduction_create((size_t)parties, PHASERS_TYPE_F64, PHASERS_OP_SUM, algorithm,
                                       0, &red));
    atomic_store(&returned, 0);
    struct quick tasks[4];
    pthread_t ids[4];
    for (int r = 1; r < parties; r++) {
        tasks[r].red = red;
        tasks[r].rank = r;
        CHECK(pthread_create(&ids[r], NULL, quick_rank, &tasks[r]) == 0);
    }
    /* The root has not called yet, so a rank that returns now returned before the result
       existed: its data was consumed by another non-root rank. */
    while (atomic_load(&returned) == 0) {
        sched_yield();
    }
    double input[8], output[8];
    for (int i = 0; i < 8; i++) {
        input[i] = i;
    }
    int has_result = -1;
    EXPECT_OK(phasers_reduction_reduce(red, 0, input, output, 8, &has_result));
    CHECK(has_result == 1);
    for (int i = 0; i < 8; i++) {
        double want = 0;
        for (int r = 0; r < parties; r++) {
            want += r + i;
        }
        CHECK(output[i] == want);
    }
    for (int r = 1; r < parties; r++) {
        CHECK(pthread_join(ids[r], NULL) == 0);
    }
    EXPECT_OK(phasers_reduction_destroy(red));
}

/* ---- mismatched counts: every rank gets PHASERS_EMISMATCH, now and on every later call ---- */

struct mismatch {
    phasers_reduction *red;
    int rank, form;
};

static void *mismatched_rank(void *arg) {
    struct mismatch *task = arg;
    int64_t input[8] = {1, 2, 3, 4, 5, 6, 7, 8}, output[8];
    size_t count = task->rank == 1 ? 3 : 5; /* rank 1 differs */
    if (task->form == ALLREDUCE) {
        EXPECT_CODE(PHASERS_EMISMATCH,
                    phasers_reduction_allreduce(task->red, (size_t)task->rank, input, output, count));
    } else {
        /* reduce against allreduce: a different collective. */
        if (task->rank == 2) {
            EXPECT_CODE(PHASERS_EMISMATCH,
                        phasers_reduction_allreduce(task->red, 2, input, output, 5));
        } else {
            EXPECT_CODE(PHASERS_EMISMATCH,
                        phasers_reduction_reduce(task->red, (size_t)task->rank, input, output, 5,
                                                 NULL));
        }
    }
    EXPECT_MESSAGE("mismatched");
    /* The reduction is failed: a matched call gets the same error at once. */
    EXPECT_CODE(PHASERS_EMISMATCH,
                phasers_reduction_allreduce(task->red, (size_t)task->rank, input, output, 5));
    return NULL;
}

static void mismatches(int form) {
    phasers_reduction *red;
    /* LINEAR: every rank is still in the call when the difference is found. */
    EXPECT_OK(phasers_reduction_create(3, PHASERS_TYPE_I64, PHASERS_OP_SUM, PHASERS_REDUCE_LINEAR,
                                       0, &red));
    struct mismatch tasks[3];
    pthread_t ids[3];
    for (int r = 0; r < 3; r++) {
        tasks[r].red = red;
        tasks[r].rank = r;
        tasks[r].form = form;
        CHECK(pthread_create(&ids[r], NULL, mismatched_rank, &tasks[r]) == 0);
    }
    for (int r = 0; r < 3; r++) {
        CHECK(pthread_join(ids[r], NULL) == 0);
    }
    EXPECT_OK(phasers_reduction_destroy(red));
}

/* ---- a rank used by two threads at once ---- */

static phasers_reduction *shared_red;
static atomic_int busy_count, ok_count;

static void *rank_0_allreduce(void *unused) {
    (void)unused;
    double input[4] = {1, 2, 3, 4}, output[4];
    int code = phasers_reduction_allreduce(shared_red, 0, input, output, 4);
    if (code == PHASERS_EBUSY) {
        EXPECT_MESSAGE("rank 0");
        atomic_fetch_add(&busy_count, 1);
    } else {
        EXPECT_OK(code);
        CHECK(output[0] == 11 && output[3] == 14);
        atomic_fetch_add(&ok_count, 1);
    }
    return NULL;
}

static void two_threads_on_one_rank(void) {
    EXPECT_OK(phasers_reduction_create(2, PHASERS_TYPE_F64, PHASERS_OP_SUM, PHASERS_REDUCE_AUTO, 0,
                                       &shared_red));
    pthread_t first, second;
    CHECK(pthread_create(&first, NULL, rank_0_allreduce, NULL) == 0);
    CHECK(pthread_create(&second, NULL, rank_0_allreduce, NULL) == 0);
    /* Rank 1 has not called, so whichever thread took rank 0 first stays inside its call until
       it does: the other one must get PHASERS_EBUSY. */
    while (atomic_load(&busy_count) == 0) {
        sched_yield();
    }
    CHECK(atomic_load(&ok_count) == 0);
    /* A thread is inside a call: destroy refuses and changes nothing. */
    EXPECT_CODE(PHASERS_EBUSY, phasers_reduction_destroy(shared_red));
    EXPECT_MESSAGE("inside a call");
    double input[4] = {10, 10, 10, 10}, output[4];
    EXPECT_OK(phasers_reduction_allreduce(shared_red, 1, input, output, 4));
    CHECK(output[0] == 11 && output[3] == 14);
    CHECK(pthread_join(first, NULL) == 0);
    CHECK(pthread_join(second, NULL) == 0);
    CHECK(atomic_load(&busy_count) == 1 && atomic_load(&ok_count) == 1);
    EXPECT_OK(phasers_reduction_destroy(shared_red));
}

/* ---- argument errors, NULL, destroyed and foreign handles ---- */

static void errors(void) {
    phasers_reduction *red;
    EXPECT_CODE(PHASERS_ENULL, phasers_reduction_create(2, PHASERS_TYPE_F64, PHASERS_OP_SUM,
                                                        PHASERS_REDUCE_AUTO, 0, NULL));
    EXPECT_CODE(PHASERS_EINVAL, phasers_reduction_create(2, PHASERS_TYPE_U32, PHASERS_OP_SUM,
                                                         PHASERS_REDUCE_AUTO, 0, &red));
    EXPECT_MESSAGE("PHASERS_TYPE_F32");
    EXPECT_CODE(PHASERS_EINVAL, phasers_reduction_create(2, PHASERS_TYPE_U64, PHASERS_OP_SUM,
                                                         PHASERS_REDUCE_AUTO, 0, &red));
    EXPECT_CODE(PHASERS_EINVAL,
                phasers_reduction_create(2, 6, PHASERS_OP_SUM, PHASERS_REDUCE_AUTO, 0, &red));
    EXPECT_CODE(PHASERS_EINVAL,
                phasers_reduction_create(2, -1, PHASERS_OP_SUM, PHASERS_REDUCE_AUTO, 0, &red));
    EXPECT_CODE(PHASERS_EINVAL,
                phasers_reduction_create(2, PHASERS_TYPE_I32, 7, PHASERS_REDUCE_AUTO, 0, &red));
    EXPECT_MESSAGE("PHASERS_OP_");
    EXPECT_CODE(PHASERS_EINVAL,
                phasers_reduction_create(2, PHASERS_TYPE_I32, PHASERS_OP_SUM, 5, 0, &red));
    EXPECT_MESSAGE("PHASERS_REDUCE_");
    EXPECT_CODE(PHASERS_EINVAL,
                phasers_reduction_create(2, PHASERS_TYPE_I32, PHASERS_OP_SUM, -1, 0, &red));
    EXPECT_CODE(PHASERS_EINVAL, phasers_reduction_create(2, PHASERS_TYPE_F32, PHASERS_OP_XOR,
                                                         PHASERS_REDUCE_AUTO, 0, &red));
    EXPECT_MESSAGE("integers only");
    EXPECT_CODE(PHASERS_EINVAL, phasers_reduction_create(0, PHASERS_TYPE_I32, PHASERS_OP_SUM,
                                                         PHASERS_REDUCE_AUTO, 0, &red));
    EXPECT_CODE(PHASERS_EINVAL, phasers_reduction_create(2, PHASERS_TYPE_I32, PHASERS_OP_SUM,
                                                         PHASERS_REDUCE_AUTO, 2, &red));
    EXPECT_MESSAGE("root 2");

    /* One rank: every call completes at once. */
    EXPECT_OK(phasers_reduction_create(1, PHASERS_TYPE_I32, PHASERS_OP_MAX,
                                       PHASERS_REDUCE_STATIC_TREE, 0, &red));
    int32_t input[4] = {4, -3, 2, 1}, output[4] = {0};
    int has_result = -1;
    EXPECT_OK(phasers_reduction_reduce(red, 0, input, output, 4, &has_result));
    CHECK(has_result == 1 && output[0] == 4 && output[1] == -3);
    EXPECT_OK(phasers_reduction_reduce(red, 0, input, output, 4, NULL)); /* has_result optional */
    /* Zero elements: the pointers are not read and may be NULL. */
    EXPECT_OK(phasers_reduction_allreduce(red, 0, NULL, NULL, 0));
    EXPECT_OK(phasers_reduction_reduce(red, 0, NULL, NULL, 0, NULL));

    EXPECT_CODE(PHASERS_ENULL, phasers_reduction_allreduce(NULL, 0, input, output, 4));
    EXPECT_CODE(PHASERS_ENULL, phasers_reduction_reduce(NULL, 0, input, output, 4, NULL));
    EXPECT_CODE(PHASERS_ENULL, phasers_reduction_allreduce(red, 0, NULL, output, 4));
    EXPECT_MESSAGE("input is NULL");
    EXPECT_CODE(PHASERS_ENULL, phasers_reduction_allreduce(red, 0, input, NULL, 4));
    EXPECT_MESSAGE("output is NULL");
    EXPECT_CODE(PHASERS_ENULL, phasers_reduction_reduce(red, 0, input, NULL, 4, NULL)); /* root */
    size_t parties;
    EXPECT_CODE(PHASERS_ENULL, phasers_reduction_parties(NULL, &parties));
    EXPECT_CODE(PHASERS_ENULL, phasers_reduction_parties(red, NULL));
    EXPECT_CODE(PHASERS_EINVAL, phasers_reduction_allreduce(red, 1, input, output, 4));
    EXPECT_MESSAGE("rank 1 is out of range");
    /* Buffers: overlap, misalignment, sizes no memory can hold. */
    EXPECT_CODE(PHASERS_EINVAL, phasers_reduction_allreduce(red, 0, input, input + 1, 2));
    EXPECT_MESSAGE("overlap");
    EXPECT_CODE(PHASERS_EINVAL, phasers_reduction_allreduce(red, 0, input, input, 4));
    EXPECT_CODE(PHASERS_EINVAL,
                phasers_reduction_allreduce(red, 0, (const char *)input + 1, output, 2));
    EXPECT_MESSAGE("aligned");
    EXPECT_CODE(PHASERS_EINVAL, phasers_reduction_allreduce(red, 0, input, output, SIZE_MAX / 2));
    /* Nothing was refused in a way that broke the reduction. */
    EXPECT_OK(phasers_reduction_allreduce(red, 0, input, output, 4));
    CHECK(output[2] == 2);

    EXPECT_OK(phasers_reduction_destroy(red));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_reduction_destroy(red));
    EXPECT_MESSAGE("already destroyed");
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_reduction_allreduce(red, 0, input, output, 4));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_reduction_reduce(red, 0, input, output, 4, NULL));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_reduction_parties(red, &parties));
    EXPECT_CODE(PHASERS_ENULL, phasers_reduction_destroy(NULL));

    /* A handle of another kind. */
    phasers_barrier *barrier;
    EXPECT_OK(phasers_barrier_create(1, PHASERS_ALGORITHM_AUTO, &barrier));
    EXPECT_CODE(PHASERS_EDESTROYED,
                phasers_reduction_parties((phasers_reduction *)(void *)barrier, &parties));
    EXPECT_MESSAGE("phasers_barrier handle");
    EXPECT_OK(phasers_barrier_destroy(barrier));
    CHECK(strcmp(phasers_strerror(PHASERS_EMISMATCH),
                 "the participants of one call passed arguments that differ") == 0);
}

int main(void) {
    errors();
    every_type_op_algorithm_and_size();
    quick_return(PHASERS_REDUCE_DYNAMIC_PAIRS, 3);
    quick_return(PHASERS_REDUCE_STATIC_TREE, 4);
    mismatches(ALLREDUCE);
    mismatches(REDUCE);
    two_threads_on_one_rank();
    if (atomic_load(&failures) != 0) {
        fprintf(stderr, "%d results differed from the sequential reduction\n",
                atomic_load(&failures));
        return 1;
    }
    printf("reduction ok\n");
    return 0;
}
