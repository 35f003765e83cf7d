// SPDX-License-Identifier: GPL-2.0
/* q_ncq.c - tc plugin of the ncq qdisc (sch_ncq.c). */
#include "qlab_tc.h"
#include "ncq.h"

static const struct qlab_tc_variant ncq_variants[] = {
	{ "ncq", &ncq_ops, TCA_NCQ_SIZE_BYTES },
};

static const struct qlab_tc_kind ncq_kind = {
	.id = "ncq", .variants = ncq_variants, .nvariants = 1,
	.maxattr = TCA_NCQ_MAX, .attr_seed = TCA_NCQ_SEED,
	.example = "tc qdisc add dev eth0 root ncq size 130b thresh 5% limit 100",
};

QLAB_TC_UTIL(ncq, ncq_kind);
