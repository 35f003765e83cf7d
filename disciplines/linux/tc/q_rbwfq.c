// SPDX-License-Identifier: GPL-2.0
/* q_rbwfq.c - tc plugin of the rbwfq qdisc (sch_rbwfq.c): RB-AQM or WRED. */
#include "qlab_tc.h"
#include "rbaqm.h"
#include "wred.h"

/* Index = TCA_RBWFQ_AQM value. */
static const struct qlab_tc_variant rbwfq_variants[] = {
	{ "rbaqm", &rbaqm_ops, TCA_RBWFQ_RB_CLASSES },
	{ "wred", &wred_ops, TCA_RBWFQ_WRED_CLASSES },
};

static const struct qlab_tc_kind rbwfq_kind = {
	.id = "rbwfq", .variants = rbwfq_variants, .nvariants = 2,
	.maxattr = TCA_RBWFQ_MAX, .attr_seed = TCA_RBWFQ_SEED,
	.attr_variant = TCA_RBWFQ_AQM, .variant_keyword = "aqm",
	.example = "tc qdisc add dev eth0 root rbwfq aqm rbaqm classes 3 rate 20mbit tau 40ms limit 100 weights 1001:501:251",
};

QLAB_TC_UTIL(rbwfq, rbwfq_kind);
