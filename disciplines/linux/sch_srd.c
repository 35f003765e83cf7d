// SPDX-License-Identifier: GPL-2.0
/*
 * sch_srd.c - Rate-Delay services as a Linux qdisc: the core's srd (S-RD,
 * stateless sizing) and rd (RD, arrival-time head drop)
 * (disciplines/core/srd.h) in the generic adapter (qlab_sch.c).
 *
 *	tc qdisc add dev eth0 root srd [variant srd|rd] rate 100mbit d 50ms [buffer 1mb]
 *	tc qdisc add dev eth0 root srd rate_bps 100000000 d_ns 50000000	(the same)
 *
 * rate and d in iproute2's rates and times (or plain bit/s and ns), the
 * buffers in its sizes (or bytes); tc qdisc show prints "rate 100Mbit d
 * 50ms ..." (tc/qlab_tc.c), tc -j the attributes' names and units below.
 * cls (ToS >> 5) 0 -> D (band 0), anything else -> R (band 1).  rate
 * must be the rate the qdisc is drained at (a shaper above it, or the link).
 */
#include <linux/module.h>

#include "qlab_sch.h"
#include "srd.h"

#define A(x) [TCA_SRD_##x - TCA_SRD_RATE_BPS]
static const char *const srd_attr_names[] = {
	A(RATE_BPS) = "rate_bps",
	A(D_NS) = "d_ns",
	A(K) = "k",
	A(BUFFER_BYTES) = "buffer_bytes",
	A(BMAX_BYTES) = "bmax_bytes",
	A(SD_MAX_BYTES) = "sd_max_bytes",
	A(SR_MAX_BYTES) = "sr_max_bytes",
	A(N_D) = "n_d",
	A(N_R) = "n_r",
	A(PERIOD_NS) = "period_ns",
};
#undef A

/* Index = TCA_SRD_VARIANT value. */
static const struct qlab_variant srd_variants[] = {
	{
		.name = "srd", .ops = &srd_ops,
		.attr_base = TCA_SRD_RATE_BPS, .attr_names = srd_attr_names,
		.nattrs = ARRAY_SIZE(srd_attr_names),
	},
	{
		.name = "rd", .ops = &rd_ops,
		.attr_base = TCA_SRD_RATE_BPS, .attr_names = srd_attr_names,
		.nattrs = ARRAY_SIZE(srd_attr_names),
	},
};

static void srd_fill_xstats(const struct qlab_sch *q, struct tc_qlab_xstats *xs)
{
	const struct srd_vars *v = q->vars;

	xs->n_d = v->n_d;
	xs->n_r = v->n_r;
	xs->band[0].limit_bytes = v->b_d_bytes;
	xs->band[1].limit_bytes = v->b_r_bytes;
}

static struct nla_policy srd_policy[TCA_SRD_MAX + 1];
static struct netlink_range_validation srd_ranges[TCA_SRD_MAX + 1];

static struct qlab_kind srd_kind = {
	.qdisc_ops = { .id = "srd", .owner = THIS_MODULE },
	.variants = srd_variants, .nvariants = ARRAY_SIZE(srd_variants),
	.attr_pad = TCA_SRD_PAD, .attr_seed = TCA_SRD_SEED,
	.attr_variant = TCA_SRD_VARIANT, .variant_name = "variant",
	.maxattr = TCA_SRD_MAX, .policy = srd_policy, .ranges = srd_ranges,
	.fill_xstats = srd_fill_xstats,
};

static int __init srd_module_init(void)
{
	return qlab_register(&srd_kind);
}

static void __exit srd_module_exit(void)
{
	qlab_unregister(&srd_kind);
}

module_init(srd_module_init);
module_exit(srd_module_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("S-RD and RD (Rate-Delay services) qdisc on the qlab discipline core");
