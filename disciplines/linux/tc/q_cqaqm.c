// SPDX-License-Identifier: GPL-2.0
/* q_cqaqm.c - tc plugin of the cqaqm qdisc (sch_cqaqm.c). */
#include "qlab_tc.h"
#include "cqaqm.h"

static const struct qlab_tc_variant cqaqm_variants[] = {
	{ "cqaqm", &cqaqm_ops, TCA_CQAQM_B_HIGH },
};

static const struct qlab_tc_kind cqaqm_kind = {
	.id = "cqaqm", .variants = cqaqm_variants, .nvariants = 1,
	.maxattr = TCA_CQAQM_MAX, .attr_seed = TCA_CQAQM_SEED,
	.example = "tc qdisc add dev eth0 root cqaqm b_high 50 b_low 700 t_high_local 7 t_low_local 500 t_low_nonlocal 650 quantum 1500",
};

QLAB_TC_UTIL(cqaqm, cqaqm_kind);
