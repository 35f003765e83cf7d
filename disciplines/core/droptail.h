/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * droptail.h - FIFO with a packet limit, the baseline every other
 * discipline is compared against.  One band (0); cls and prec are ignored.
 * A packet is dropped (overflow) when the backlog already holds limit_pkts.
 */
#ifndef QCORE_DROPTAIL_H
#define QCORE_DROPTAIL_H

#include "qcore.h"

struct droptail_params {
	u32 limit_pkts;		/* buffer size, packets */
};

struct droptail_vars {
	u32 unused;		/* stateless; keeps the struct non-empty */
};

struct droptail_stats {
	u64 queued;
	u64 drops[QCORE_REASON__COUNT];
};

void droptail_params_init(struct droptail_params *p);
void droptail_vars_init(struct droptail_vars *v);
void droptail_stats_init(struct droptail_stats *s);

extern const struct qcore_disc_ops droptail_ops;

#endif /* QCORE_DROPTAIL_H */
