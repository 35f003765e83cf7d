// SPDX-License-Identifier: GPL-2.0
/*
 * sch_ncq.c - Non-Congestive Queuing as a Linux qdisc: the core's ncq
 * (disciplines/core/ncq.h) in the generic adapter (qlab_sch.c).
 *
 *	tc qdisc add dev eth0 root ncq size 130b thresh 5% limit 100
 *	tc qdisc add dev eth0 root ncq size_bytes 130 thresh 0.05 limit_pkts 100	(the same)
 *
 * size in iproute2's sizes (130b, 1kb) or bytes, thresh and ramp as
 * fractions (0.05) or percentages (5%), limit in packets (100 or 100p);
 * tc qdisc show prints "size 130b thresh 0.05 limit 100p ..." (tc/qlab_tc.c).
 *
 * Band 0 favoured (small packets up to the thresh fraction), band 1 normal,
 * strict priority, one shared limit.  Statistics: the adapter's per band,
 * plus the favoured/normal/received counters of the core.
 */
#include <linux/module.h>

#include "qlab_sch.h"
#include "ncq.h"

#define A(x) [TCA_NCQ_##x - TCA_NCQ_SIZE_BYTES]
static const char *const ncq_attr_names[] = {
	A(SIZE_BYTES) = "size_bytes",
	A(THRESH) = "thresh",
	A(LIMIT_PKTS) = "limit_pkts",
	A(VARIANT) = "variant",
	A(MODE) = "mode",
	A(FAVOR_ACKS) = "favor_acks",
	A(RAMP) = "ramp",
};
#undef A

static const struct qlab_variant ncq_variants[] = {
	{
		.name = "ncq", .ops = &ncq_ops,
		.attr_base = TCA_NCQ_SIZE_BYTES, .attr_names = ncq_attr_names,
		.nattrs = ARRAY_SIZE(ncq_attr_names),
	},
};

static void ncq_fill_xstats(const struct qlab_sch *q, struct tc_qlab_xstats *xs)
{
	const struct ncq_stats *s = q->stats;
	const struct ncq_vars *v = q->vars;

	xs->favoured = s->favoured;
	xs->normal = s->normal;
	xs->received = v->received;
}

static struct nla_policy ncq_policy[TCA_NCQ_MAX + 1];
static struct netlink_range_validation ncq_ranges[TCA_NCQ_MAX + 1];

static struct qlab_kind ncq_kind = {
	.qdisc_ops = { .id = "ncq", .owner = THIS_MODULE },
	.variants = ncq_variants, .nvariants = ARRAY_SIZE(ncq_variants),
	.attr_pad = TCA_NCQ_PAD, .attr_seed = TCA_NCQ_SEED,
	.maxattr = TCA_NCQ_MAX, .policy = ncq_policy, .ranges = ncq_ranges,
	.fill_xstats = ncq_fill_xstats,
};

static int __init ncq_module_init(void)
{
	return qlab_register(&ncq_kind);
}

static void __exit ncq_module_exit(void)
{
	qlab_unregister(&ncq_kind);
}

module_init(ncq_module_init);
module_exit(ncq_module_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("NCQ (Non-Congestive Queuing) qdisc on the qlab discipline core");
