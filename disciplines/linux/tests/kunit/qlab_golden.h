/* SPDX-License-Identifier: GPL-2.0 */
/* qlab_golden.h - the golden vectors as C (gen_golden.py writes them). */
#ifndef QLAB_GOLDEN_H
#define QLAB_GOLDEN_H

#include <linux/kernel.h>
#include <linux/types.h>

struct qlab_golden_event {
	u64 t_ns;
	u32 len;
	u32 flow;
	u8 op;		/* 0 enq, 1 deq */
	u8 cls, prec;
};

struct qlab_golden_case {
	const char *name;
	const char *qdisc;		/* Qdisc_ops id: "qlab" or a dedicated qdisc */
	const char *disc;		/* the core's discipline */
	/* dedicated qdiscs: the TCA_OPTIONS attribute, nest included */
	const u8 *opts;
	u32 opts_len;
	u64 seed;
	/* qlab: the case's --param values, "NAME=VALUE", NULL-terminated */
	const char *const *params;
	const struct qlab_golden_event *events;
	u32 nevents;
	const char *decisions;		/* expected rows, header excluded, LF-separated */
	u8 expect_fail;			/* a mutated copy: must not match */
};

extern const struct qlab_golden_case qlab_golden_cases[];
extern const u32 qlab_golden_ncases;

#endif /* QLAB_GOLDEN_H */
