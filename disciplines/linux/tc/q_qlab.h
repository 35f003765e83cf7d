/* SPDX-License-Identifier: GPL-2.0 */
/*
 * q_qlab.h - what the tc plugins of qlab's qdiscs share (q_qlab.c): option
 * parsing and printing driven by the discipline core's parameter tables,
 * so tc accepts exactly the core's names, forms and ranges (qcore_params.c)
 * and prints what the kernel dumps in the same units.
 */
#ifndef Q_QLAB_H
#define Q_QLAB_H

#include <stdio.h>
#include "utils.h"
#include "tc_util.h"
#include "qcore.h"
#include "qlab_sched.h"

struct qlab_tc_variant {
	const char *name;
	const struct qcore_disc_ops *ops;
	int attr_base;		/* attribute of ops->params[0] */
};

struct qlab_tc_kind {
	const char *id;
	const struct qlab_tc_variant *variants;
	int nvariants;
	int maxattr, attr_seed, attr_variant;	/* attr_variant 0: none */
	const char *variant_keyword;		/* "variant", "aqm" */
	const char *example;
};

int qlab_tc_parse(const struct qlab_tc_kind *k, int argc, char **argv,
		  struct nlmsghdr *n);
int qlab_tc_print(const struct qlab_tc_kind *k, FILE *f, struct rtattr *opt);
int qlab_tc_print_xstats(const struct qlab_tc_kind *k, FILE *f,
			 struct rtattr *xstats);

#define QLAB_TC_UTIL(name, kind)						\
static int name##_parse_opt(struct qdisc_util *qu, int argc, char **argv,	\
			    struct nlmsghdr *n, const char *dev)		\
{										\
	return qlab_tc_parse(&kind, argc, argv, n);				\
}										\
static int name##_print_opt(struct qdisc_util *qu, FILE *f, struct rtattr *opt) \
{										\
	return qlab_tc_print(&kind, f, opt);					\
}										\
static int name##_print_xstats(struct qdisc_util *qu, FILE *f,		\
			       struct rtattr *xstats)				\
{										\
	return qlab_tc_print_xstats(&kind, f, xstats);				\
}										\
__attribute__((visibility("default"))) struct qdisc_util name##_qdisc_util = { \
	.id = #name,								\
	.parse_qopt = name##_parse_opt,						\
	.print_qopt = name##_print_opt,						\
	.print_xstats = name##_print_xstats,					\
}

#endif /* Q_QLAB_H */
