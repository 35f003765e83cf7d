// SPDX-License-Identifier: GPL-2.0
/*
 * sch_cqaqm.c - Cross-Queue AQM for precedence and preemption as a Linux
 * qdisc: the core's cqaqm (disciplines/core/cqaqm.h) in the generic
 * adapter (qlab_sch.c).
 *
 *	tc qdisc add dev eth0 root cqaqm b_high 50 b_low 700 t_high_local 7 \
 *		t_low_local 500 t_low_nonlocal 650 [quantum 1500:1500]
 *
 * The buffers and thresholds are packet counts (50 or 50p, shown as 50p),
 * the quantum a list of bytes; tc/qlab_tc.c parses and prints them.
 *
 * cls (ToS >> 5) 1 -> high queue (band 0), anything else -> low queue
 * (band 1); prec ((ToS >> 3) & 3) 0 -> low precedence, else high.
 */
#include <linux/module.h>

#include "qlab_sch.h"
#include "cqaqm.h"

#define A(x) [TCA_CQAQM_##x - TCA_CQAQM_B_HIGH]
static const char *const cqaqm_attr_names[] = {
	A(B_HIGH) = "b_high",
	A(B_LOW) = "b_low",
	A(T_HIGH_LOCAL) = "t_high_local",
	A(T_LOW_LOCAL) = "t_low_local",
	A(T_LOW_NONLOCAL) = "t_low_nonlocal",
	A(SCHEDULER) = "scheduler",
	A(WEIGHTS) = "weights",
	A(QUANTUM_BYTES) = "quantum_bytes",
	A(HYSTERESIS) = "hysteresis",
	A(T_LOW_OFF) = "t_low_off",
	A(T_HIGH_LOCAL_OFF) = "t_high_local_off",
	A(T_LOW_LOCAL_OFF) = "t_low_local_off",
};
#undef A

static const struct qlab_variant cqaqm_variants[] = {
	{
		.name = "cqaqm", .ops = &cqaqm_ops,
		.attr_base = TCA_CQAQM_B_HIGH, .attr_names = cqaqm_attr_names,
		.nattrs = ARRAY_SIZE(cqaqm_attr_names),
	},
};

static void cqaqm_fill_xstats(const struct qlab_sch *q, struct tc_qlab_xstats *xs)
{
	const struct cqaqm_stats *s = q->stats;
	const struct cqaqm_vars *v = q->vars;

	xs->nonlocal_on = s->nonlocal_on;
	xs->nonlocal_active = v->nonlocal_active;
}

static struct nla_policy cqaqm_policy[TCA_CQAQM_MAX + 1];
static struct netlink_range_validation cqaqm_ranges[TCA_CQAQM_MAX + 1];

static struct qlab_kind cqaqm_kind = {
	.qdisc_ops = { .id = "cqaqm", .owner = THIS_MODULE },
	.variants = cqaqm_variants, .nvariants = ARRAY_SIZE(cqaqm_variants),
	.attr_pad = TCA_CQAQM_PAD, .attr_seed = TCA_CQAQM_SEED,
	.maxattr = TCA_CQAQM_MAX, .policy = cqaqm_policy, .ranges = cqaqm_ranges,
	.fill_xstats = cqaqm_fill_xstats,
};

static int __init cqaqm_module_init(void)
{
	return qlab_register(&cqaqm_kind);
}

static void __exit cqaqm_module_exit(void)
{
	qlab_unregister(&cqaqm_kind);
}

module_init(cqaqm_module_init);
module_exit(cqaqm_module_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("CQ-AQM (Cross-Queue AQM) qdisc on the qlab discipline core");
