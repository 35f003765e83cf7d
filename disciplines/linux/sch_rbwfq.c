// SPDX-License-Identifier: GPL-2.0
/*
 * sch_rbwfq.c - per-class AQM in the low-jitter WFQ as a Linux qdisc:
 * RB-AQM (disciplines/core/rbaqm.h) or the WRED baseline (wred.h), both over
 * the core's low-jitter WFQ (wfq.h), in the generic adapter (qlab_sch.c).
 *
 *	tc qdisc add dev eth0 root rbwfq aqm rbaqm classes 4 rate 1mbit [tau 40ms] [limit 100]
 *	tc qdisc add dev eth0 root rbwfq aqm rbaqm classes 4 rate_bps 1000000	(the same rate)
 *	tc qdisc add dev eth0 root rbwfq aqm wred classes 3 q_pkts 5:10:20 [w_q 0.2%]
 *
 * rate, tau, maxs, limit, window in iproute2's rates, times, sizes and
 * packet counts (or plain bit/s, ns, bytes, packets), fractions also as
 * percentages, the per-class lists (weights, u, q_pkts) as a:b:c in the
 * names' units; tc qdisc show prints "rate 1Mbit ... tau 40ms" (tc/qlab_tc.c).
 *
 * class = band = cls (ToS >> 5); a cls at or above `classes` goes to the
 * last class (the core's rule).  Statistics add P_i per class (both AQMs)
 * and, for RB-AQM, the arrival rate x_i and capacity c_i.
 */
#include <linux/module.h>

#include "qlab_sch.h"
#include "rbaqm.h"
#include "wred.h"

#define A(x) [TCA_RBWFQ_RB_##x - TCA_RBWFQ_RB_CLASSES]
static const char *const rbaqm_attr_names[] = {
	A(CLASSES) = "classes",
	A(RATE_BPS) = "rate_bps",
	A(WEIGHTS_BYTES) = "weights_bytes",
	A(MAXS_BYTES) = "maxs_bytes",
	A(U_PPM) = "u_ppm",
	A(K) = "k",
	A(GAIN) = "gain",
	A(TAU_NS) = "tau_ns",
	A(RATE_ESTIMATE) = "rate_estimate",
	A(CAPACITY_ESTIMATOR) = "capacity_estimator",
	A(WINDOW_PKTS) = "window_pkts",
	A(CAPACITY_WEIGHT) = "capacity_weight",
	A(FAIR_SHARE) = "fair_share",
	A(ECN) = "ecn",
	A(LIMIT_PKTS) = "limit_pkts",
};
#undef A

#define A(x) [TCA_RBWFQ_WRED_##x - TCA_RBWFQ_WRED_CLASSES]
static const char *const wred_attr_names[] = {
	A(CLASSES) = "classes",
	A(Q_PKTS) = "q_pkts",
	A(W_Q) = "w_q",
	A(WEIGHTS_BYTES) = "weights_bytes",
	A(MAXS_BYTES) = "maxs_bytes",
	A(ECN) = "ecn",
};
#undef A

/* Index = TCA_RBWFQ_AQM value. */
static const struct qlab_variant rbwfq_variants[] = {
	{
		.name = "rbaqm", .ops = &rbaqm_ops,
		.attr_base = TCA_RBWFQ_RB_CLASSES, .attr_names = rbaqm_attr_names,
		.nattrs = ARRAY_SIZE(rbaqm_attr_names),
	},
	{
		.name = "wred", .ops = &wred_ops,
		.attr_base = TCA_RBWFQ_WRED_CLASSES, .attr_names = wred_attr_names,
		.nattrs = ARRAY_SIZE(wred_attr_names),
	},
};

static void rbwfq_fill_xstats(const struct qlab_sch *q, struct tc_qlab_xstats *xs)
{
	u32 i;

	if (q->ops == &rbaqm_ops) {
		const struct rbaqm_vars *v = q->vars;

		for (i = 0; i < q->nbands; i++) {
			xs->band[i].p_q32 = v->p_q32[i];
			xs->band[i].rate_bps = v->x_bps[i];
			xs->band[i].capacity_bps = v->c_bps[i];
		}
	} else {
		const struct wred_vars *v = q->vars;

		for (i = 0; i < q->nbands; i++)
			xs->band[i].p_q32 = wred_prob_q32(v->avg[i], v->q_pkts[i]);
	}
}

static struct nla_policy rbwfq_policy[TCA_RBWFQ_MAX + 1];
static struct netlink_range_validation rbwfq_ranges[TCA_RBWFQ_MAX + 1];

static struct qlab_kind rbwfq_kind = {
	.qdisc_ops = { .id = "rbwfq", .owner = THIS_MODULE },
	.variants = rbwfq_variants, .nvariants = ARRAY_SIZE(rbwfq_variants),
	.attr_pad = TCA_RBWFQ_PAD, .attr_seed = TCA_RBWFQ_SEED,
	.attr_variant = TCA_RBWFQ_AQM, .variant_name = "aqm",
	.maxattr = TCA_RBWFQ_MAX, .policy = rbwfq_policy, .ranges = rbwfq_ranges,
	.fill_xstats = rbwfq_fill_xstats,
};

static int __init rbwfq_module_init(void)
{
	return qlab_register(&rbwfq_kind);
}

static void __exit rbwfq_module_exit(void)
{
	qlab_unregister(&rbwfq_kind);
}

module_init(rbwfq_module_init);
module_exit(rbwfq_module_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Per-class RB-AQM or WRED in low-jitter WFQ, qdisc on the qlab discipline core");
