/* Helpers shared by the C test programs: a failed check prints where, the code, its description
   and phasers_last_error(), and exits with status 1. */
#ifndef PHASERS_TEST_CHECK_H
#define PHASERS_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "phasers.h"

/* The call must return `expected`. */
#define EXPECT_CODE(expected, call)                                                               \
    do {                                                                                          \
        int expect_code_got_ = (call);                                                            \
        if (expect_code_got_ != (expected)) {                                                     \
            fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d (%s); last error: %s\n",     \
                    __FILE__, __LINE__, #call, expect_code_got_,                                  \
                    phasers_strerror(expect_code_got_), (int)(expected),                          \
                    phasers_strerror(expected), phasers_last_error());                            \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

#define EXPECT_OK(call) EXPECT_CODE(PHASERS_OK, call)

/* The condition must hold. */
#define CHECK(condition)                                                                          \
    do {                                                                                          \
        if (!(condition)) {                                                                       \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, __LINE__,    \
                    #condition, phasers_last_error());                                            \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

/* phasers_last_error() must contain `text`. */
#define EXPECT_MESSAGE(text)                                                                      \
    do {                                                                                          \
        if (strstr(phasers_last_error(), (text)) == NULL) {                                       \
            fprintf(stderr, "%s:%d: last error \"%s\" does not contain \"%s\"\n", __FILE__,       \
                    __LINE__, phasers_last_error(), (text));                                      \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

#endif
