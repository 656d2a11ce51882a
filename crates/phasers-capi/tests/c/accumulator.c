/* Accumulators from C: every element type and operator against a sequential reduction of the
   same values, over several phases and threads, plus the type and capability errors. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"

#define TASKS 4
#define PHASES 5
#define SENDS 2

/* The value task t sends as its i-th send of phase p: small enough that no product overflows,
   and exactly representable in float, so every order of combination gives the same result. */
static int64_t value(int op, int t, int p, int i) {
    if (op == PHASERS_OP_PRODUCT) {
        return (t + p + i) % 3 + 1;
    }
    return t * 7 + p * 3 + i;
}

/* Signed types also get negative values. */
static int64_t signed_value(int op, int t, int p, int i) {
    return op == PHASERS_OP_PRODUCT ? value(op, t, p, i) * ((t + i) % 2 ? -1 : 1)
                                    : value(op, t, p, i) - 10;
}

static atomic_int failures;

/* DEFINE_CASE(T, suffix, VALUE): a test of type T with functions phasers_accumulator_*_suffix.
   Each task sends its values for a phase, calls next, and checks the result against the
   sequential reduction of that phase's values. */
#define DEFINE_CASE(T, suffix, VALUE)                                                             \
    static T fold_##suffix(int op, T a, T b) {                                                    \
        switch (op) {                                                                             \
        case PHASERS_OP_SUM: return (T)(a + b);                                                   \
        case PHASERS_OP_PRODUCT: return (T)(a * b);                                               \
        case PHASERS_OP_MIN: return a < b ? a : b;                                                \
        case PHASERS_OP_MAX: return a > b ? a : b;                                                \
        default: return bitwise_##suffix(op, a, b);                                               \
        }                                                                                         \
    }                                                                                             \
    static T expected_##suffix(int op, int p) {                                                   \
        T result = (T)VALUE(op, 0, p, 0);                                                         \
        for (int t = 0; t < TASKS; t++) {                                                         \
            for (int i = 0; i < SENDS; i++) {                                                     \
                if (t != 0 || i != 0) {                                                           \
                    result = fold_##suffix(op, result, (T)VALUE(op, t, p, i));                    \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
        return result;                                                                            \
    }                                                                                             \
    struct task_##suffix {                                                                        \
        phasers_accumulator *acc;                                                                 \
        phasers_registration *reg;                                                                \
        int op, t;                                                                                \
    };                                                                                            \
    static void *run_##suffix(void *arg) {                                                        \
        struct task_##suffix *task = arg;                                                         \
        for (int p = 0; p < PHASES; p++) {                                                        \
            for (int i = 0; i < SENDS; i++) {                                                     \
                EXPECT_OK(phasers_accumulator_send_##suffix(task->acc, task->reg,                 \
                                                            (T)VALUE(task->op, task->t, p, i)));  \
            }                                                                                     \
            EXPECT_OK(phasers_registration_next(task->reg, NULL));                                \
            T got;                                                                                \
            EXPECT_OK(phasers_accumulator_result_##suffix(task->acc, &got));                      \
            if (got != expected_##suffix(task->op, p)) {                                          \
                fprintf(stderr, #suffix " op %d phase %d: got %.17g, expected %.17g\n", task->op, \
                        p, (double)got, (double)expected_##suffix(task->op, p));                  \
                atomic_fetch_add(&failures, 1);                                                   \
            }                                                                                     \
        }                                                                                         \
        EXPECT_OK(phasers_registration_drop(task->reg));                                          \
        return NULL;                                                                              \
    }                                                                                             \
    static void case_##suffix(int type, int op, int reproducible) {                               \
        phasers_phaser *phaser;                                                                   \
        phasers_registration *creator;                                                            \
        phasers_accumulator *acc;                                                                 \
        EXPECT_OK(phasers_phaser_create(PHASERS_MODE_SIG_WAIT, &phaser, &creator));               \
        EXPECT_OK(phasers_accumulator_create(phaser, type, op, reproducible, &acc));              \
        struct task_##suffix tasks[TASKS];                                                        \
        pthread_t ids[TASKS];                                                                     \
        for (int t = 0; t < TASKS; t++) {                                                         \
            tasks[t].acc = acc;                                                                   \
            tasks[t].op = op;                                                                     \
            tasks[t].t = t;                                                                       \
            EXPECT_OK(phasers_registration_register(creator, PHASERS_MODE_SIG_WAIT,               \
                                                    &tasks[t].reg));                              \
        }                                                                                         \
        EXPECT_OK(phasers_registration_drop(creator));                                            \
        for (int t = 0; t < TASKS; t++) {                                                         \
            CHECK(pthread_create(&ids[t], NULL, run_##suffix, &tasks[t]) == 0);                   \
        }                                                                                         \
        for (int t = 0; t < TASKS; t++) {                                                         \
            CHECK(pthread_join(ids[t], NULL) == 0);                                               \
        }                                                                                         \
        EXPECT_OK(phasers_accumulator_destroy(acc));                                              \
        EXPECT_OK(phasers_phaser_destroy(phaser));                                                \
    }

#define INTEGER_BITWISE(T, suffix)                                                                \
    static T bitwise_##suffix(int op, T a, T b) {                                                 \
        return op == PHASERS_OP_AND ? (T)(a & b) : op == PHASERS_OP_OR ? (T)(a | b) : (T)(a ^ b); \
    }
#define FLOAT_BITWISE(T, suffix)                                                                  \
    static T bitwise_##suffix(int op, T a, T b) {                                                 \
        (void)op;                                                                                 \
        (void)b;                                                                                  \
        return a;                                                                                 \
    }

INTEGER_BITWISE(int32_t, i32)
INTEGER_BITWISE(int64_t, i64)
INTEGER_BITWISE(uint32_t, u32)
INTEGER_BITWISE(uint64_t, u64)
FLOAT_BITWISE(float, f32)
FLOAT_BITWISE(double, f64)
DEFINE_CASE(int32_t, i32, signed_value)
DEFINE_CASE(int64_t, i64, signed_value)
DEFINE_CASE(uint32_t, u32, value)
DEFINE_CASE(uint64_t, u64, value)
DEFINE_CASE(float, f32, signed_value)
DEFINE_CASE(double, f64, signed_value)

static void errors(void) {
    phasers_phaser *phaser, *other_phaser;
    phasers_registration *creator, *watcher, *other_creator;
    phasers_accumulator *acc;
    EXPECT_OK(phasers_phaser_create(PHASERS_MODE_SIG_WAIT, &phaser, &creator));
    EXPECT_CODE(PHASERS_EINVAL, phasers_accumulator_create(phaser, 6, PHASERS_OP_SUM, 0, &acc));
    EXPECT_MESSAGE("PHASERS_TYPE_");
    EXPECT_CODE(PHASERS_EINVAL, phasers_accumulator_create(phaser, -1, PHASERS_OP_SUM, 0, &acc));
    EXPECT_CODE(PHASERS_EINVAL, phasers_accumulator_create(phaser, PHASERS_TYPE_I32, 7, 0, &acc));
    EXPECT_MESSAGE("PHASERS_OP_");
    EXPECT_CODE(PHASERS_EINVAL,
                phasers_accumulator_create(phaser, PHASERS_TYPE_F64, PHASERS_OP_XOR, 0, &acc));
    EXPECT_MESSAGE("integers only");
    EXPECT_CODE(PHASERS_ENULL,
                phasers_accumulator_create(phaser, PHASERS_TYPE_I32, PHASERS_OP_SUM, 0, NULL));
    EXPECT_CODE(PHASERS_ENULL,
                phasers_accumulator_create(NULL, PHASERS_TYPE_I32, PHASERS_OP_SUM, 0, &acc));

    EXPECT_OK(phasers_accumulator_create(phaser, PHASERS_TYPE_I32, PHASERS_OP_SUM, 0, &acc));
    int32_t result = -1;
    EXPECT_OK(phasers_accumulator_result_i32(acc, &result));
    CHECK(result == 0); /* the identity before any phase */
    EXPECT_CODE(PHASERS_EINVAL, phasers_accumulator_send_i64(acc, creator, 1));
    EXPECT_MESSAGE("holds int32_t (PHASERS_TYPE_I32) values, not int64_t (PHASERS_TYPE_I64)");
    double wrong;
    EXPECT_CODE(PHASERS_EINVAL, phasers_accumulator_result_f64(acc, &wrong));
    EXPECT_CODE(PHASERS_ENULL, phasers_accumulator_result_i32(acc, NULL));
    EXPECT_CODE(PHASERS_ENULL, phasers_accumulator_send_i32(acc, NULL, 1));
    EXPECT_OK(phasers_registration_register(creator, PHASERS_MODE_WAIT, &watcher));
    EXPECT_CODE(PHASERS_ECAPABILITY, phasers_accumulator_send_i32(acc, watcher, 1));
    EXPECT_OK(phasers_phaser_create(PHASERS_MODE_SIG_WAIT, &other_phaser, &other_creator));
    EXPECT_CODE(PHASERS_EINVAL, phasers_accumulator_send_i32(acc, other_creator, 1));
    EXPECT_MESSAGE("another phaser");

    EXPECT_OK(phasers_accumulator_send_i32(acc, creator, 20));
    EXPECT_OK(phasers_accumulator_send_i32(acc, creator, 22));
    EXPECT_OK(phasers_registration_next(creator, NULL));
    EXPECT_OK(phasers_accumulator_result_i32(acc, &result));
    CHECK(result == 42);

    EXPECT_OK(phasers_accumulator_destroy(acc));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_accumulator_destroy(acc));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_accumulator_result_i32(acc, &result));
    EXPECT_CODE(PHASERS_EDESTROYED, phasers_accumulator_send_i32(acc, creator, 1));
    EXPECT_CODE(PHASERS_EDESTROYED,
                phasers_accumulator_result_i32((phasers_accumulator *)(void *)phaser, &result));
    EXPECT_OK(phasers_registration_drop(watcher));
    EXPECT_OK(phasers_registration_drop(creator));
    EXPECT_OK(phasers_registration_drop(other_creator));
    EXPECT_OK(phasers_phaser_destroy(phaser));
    EXPECT_OK(phasers_phaser_destroy(other_phaser));
}

int main(void) {
    for (int op = PHASERS_OP_SUM; op <= PHASERS_OP_XOR; op++) {
        for (int reproducible = 0; reproducible <= 1; reproducible++) {
            case_i32(PHASERS_TYPE_I32, op, reproducible);
            case_i64(PHASERS_TYPE_I64, op, reproducible);
            case_u32(PHASERS_TYPE_U32, op, reproducible);
            case_u64(PHASERS_TYPE_U64, op, reproducible);
            if (op <= PHASERS_OP_MAX) {
                case_f32(PHASERS_TYPE_F32, op, reproducible);
                case_f64(PHASERS_TYPE_F64, op, reproducible);
            }
        }
    }
    errors();
    if (atomic_load(&failures) != 0) {
        fprintf(stderr, "%d results differed from the sequential reduction\n",
                atomic_load(&failures));
        return 1;
    }
    printf("accumulator ok\n");
    return 0;
}
