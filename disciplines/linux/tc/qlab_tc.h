/* SPDX-License-Identifier: GPL-2.0 */
/*
 * qlab_tc.h - what the tc plugins of qlab's qdiscs share (qlab_tc.c):
 * option parsing and printing driven by the discipline core's parameter
 * tables, so tc accepts exactly the core's names, forms and ranges (the
 * core's parser, qcore_param_parse), and for rates, times, sizes, packet
 * counts and fractions iproute2's units too (get_rate64, get_time64,
 * get_size, parse_percent), and prints what the kernel dumps in
 * iproute2's style (print_rate, sprint_time64, sprint_size) or the core's
 * (qcore_params_format).  The generic plugin (q_qlab.c)
 * and the dedicated ones (q_ncq.c, ...) differ only in the attributes the
 * values travel in (qlab_sched.h).
 */
#ifndef QLAB_TC_H
#define QLAB_TC_H

#include <stdio.h>
#include "utils.h"
#include "tc_util.h"
#include "tc_common.h"	/* TCA_BUF_MAX: the size of the request tc builds */
#include "qcore.h"
#include "qlab_sched.h"

/* ---- any qlab plugin -------------------------------------------------- */

/*
 * Index of the parameter `word` names in ops: its name, or its name
 * without the unit suffix (_bytes, _pkts, _ns, _bps, _ppm); -1 if none.
 */
int qlab_tc_find_param(const struct qcore_disc_ops *ops, const char *word);
/* The unit family of a parameter (its table entry's kind and unit). */
enum qlab_tc_unit {
	QLAB_TC_PLAIN,		/* the core's forms only */
	QLAB_TC_RATE,		/* bit/s: get_rate64, get_percent_rate64 */
	QLAB_TC_TIME,		/* ns: get_time64 */
	QLAB_TC_SIZE,		/* bytes: get_size */
	QLAB_TC_PKTS,		/* packets: N or Np */
	QLAB_TC_FRACTION,	/* PPM fraction: the core's decimal, or parse_percent's N% */
};
enum qlab_tc_unit qlab_tc_unit_of(const struct qcore_param_desc *d);
/*
 * One value of parameter d, given as `word text` (dev: the device, for a
 * rate in % of its speed): in iproute2's units or the core's own forms.
 * 0, or -1 with a message starting with `prefix`.
 */
int qlab_tc_parse_value(const char *prefix, const struct qcore_param_desc *d,
			const char *word, const char *text, const char *dev,
			struct qcore_param_value *v);
/* Which parameters of ops take which units (the usage text). */
void qlab_tc_units_usage(const struct qcore_disc_ops *ops, FILE *f);
/* "seed N" (N a u64); 0, or -1 with a message naming `id`. */
int qlab_tc_parse_seed(const char *id, const char *text, __u64 *seed);
/* A typed value as its attribute (qlab_sched.h). */
int qlab_tc_add_value(struct nlmsghdr *n, int attr, const struct qcore_param_desc *d,
		      const struct qcore_param_value *v);
/* An attribute as a typed value; -1 when its size is not the kind's. */
int qlab_tc_attr_value(const struct qcore_param_desc *d, const struct rtattr *a,
		       struct qcore_param_value *v);
/*
 * "NAME VALUE ": "rate 20Mbit", "d 50ms", "size 130b", "limit 100p" for the
 * parameters with a unit (exact: the text parses back to the value), the
 * core's text otherwise ("thresh 0.05"); JSON: the full name, numbers for
 * integers (in the core's units), the core's text otherwise.
 */
void qlab_tc_print_value(const struct qcore_disc_ops *ops, void *params,
			 const struct qcore_param_desc *d,
			 const struct qcore_param_value *v);
/* The per-band lines of struct tc_qlab_xstats, and `id`'s own counters. */
int qlab_tc_print_xstats(const char *id, const char *const *variants,
			 unsigned int nvariants, FILE *f, struct rtattr *xstats);

/* ---- the dedicated plugins (q_ncq.c, ...) ----------------------------- */

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
		  struct nlmsghdr *n, const char *dev);
int qlab_tc_print(const struct qlab_tc_kind *k, FILE *f, struct rtattr *opt);
int qlab_tc_kind_xstats(const struct qlab_tc_kind *k, FILE *f, struct rtattr *xstats);

#define QLAB_TC_UTIL(name, kind)						\
static int name##_parse_opt(struct qdisc_util *qu, int argc, char **argv,	\
			    struct nlmsghdr *n, const char *dev)		\
{										\
	return qlab_tc_parse(&kind, argc, argv, n, dev);				\
}										\
static int name##_print_opt(struct qdisc_util *qu, FILE *f, struct rtattr *opt) \
{										\
	return qlab_tc_print(&kind, f, opt);					\
}										\
static int name##_print_xstats(struct qdisc_util *qu, FILE *f,		\
			       struct rtattr *xstats)				\
{										\
	return qlab_tc_kind_xstats(&kind, f, xstats);				\
}										\
__attribute__((visibility("default"))) struct qdisc_util name##_qdisc_util = { \
	.id = #name,								\
	.parse_qopt = name##_parse_opt,						\
	.print_qopt = name##_print_opt,						\
	.print_xstats = name##_print_xstats,					\
}

#endif /* QLAB_TC_H */
