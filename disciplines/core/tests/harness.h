/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * harness.h - the core's tiny unit-test harness, shared by every test
 * program: each test function runs its CHECKs; RUN reports it; the last
 * line of output is "N passed, N failed" (tests, not checks), and
 * harness_summary()'s value is the exit status (non-zero when any failed).
 */
#ifndef QCORE_TEST_HARNESS_H
#define QCORE_TEST_HARNESS_H

#include <stdio.h>

static int tests_passed, tests_failed, cur_failed;

#define CHECK(cond, ...)							\
	do {									\
		if (!(cond)) {							\
			cur_failed = 1;						\
			printf("  FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);	\
			printf(__VA_ARGS__);					\
			printf("\n");						\
		}								\
	} while (0)

#define RUN(fn)								\
	do {									\
		cur_failed = 0;							\
		fn();								\
		if (cur_failed) {						\
			tests_failed++;						\
			printf("FAIL %s\n", #fn);				\
		} else {							\
			tests_passed++;						\
			printf("ok   %s\n", #fn);				\
		}								\
	} while (0)

static inline int harness_summary(void)
{
	printf("%d passed, %d failed\n", tests_passed, tests_failed);
	return tests_failed ? 1 : 0;
}

#endif /* QCORE_TEST_HARNESS_H */
