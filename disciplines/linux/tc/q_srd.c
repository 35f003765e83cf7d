// SPDX-License-Identifier: GPL-2.0
/* q_srd.c - tc plugin of the srd qdisc (sch_srd.c): S-RD or RD. */
#include "qlab_tc.h"
#include "srd.h"

/* Index = TCA_SRD_VARIANT value. */
static const struct qlab_tc_variant srd_variants[] = {
	{ "srd", &srd_ops, TCA_SRD_RATE_BPS },
	{ "rd", &rd_ops, TCA_SRD_RATE_BPS },
};

static const struct qlab_tc_kind srd_kind = {
	.id = "srd", .variants = srd_variants, .nvariants = 2,
	.maxattr = TCA_SRD_MAX, .attr_seed = TCA_SRD_SEED,
	.attr_variant = TCA_SRD_VARIANT, .variant_keyword = "variant",
	.example = "tc qdisc add dev eth0 root srd variant srd rate 100mbit d 50ms k 2",
};

QLAB_TC_UTIL(srd, srd_kind);
