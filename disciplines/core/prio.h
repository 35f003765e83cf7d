/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * prio.h - strict priority over 2..8 bands with one shared packet limit,
 * the reference for the NCQ and CQ-AQM identities (DISCIPLINES.md).
 *
 * Band = pkt.cls; band 0 is served first (non-preemptive), FIFO within a
 * band.  An arrival is dropped (overflow) when all bands together already
 * hold limit_pkts.  cls >= bands cannot be classified: check_pkt() rejects
 * it; enqueue() puts such a packet in the last band so that it never
 * indexes past the adapter's queues.
 */
#ifndef QCORE_PRIO_H
#define QCORE_PRIO_H

#include "qcore.h"

struct prio_params {
	u32 bands;		/* number of bands, 2..QCORE_MAX_BANDS */
	u32 limit_pkts;		/* buffer shared by all bands, packets */
};

struct prio_vars {
	u32 unused;		/* stateless; keeps the struct non-empty */
};

struct prio_stats {
	u64 queued[QCORE_MAX_BANDS];
	u64 drops[QCORE_REASON__COUNT];
};

void prio_params_init(struct prio_params *p);
void prio_vars_init(struct prio_vars *v);
void prio_stats_init(struct prio_stats *s);

extern const struct qcore_disc_ops prio_ops;

#endif /* QCORE_PRIO_H */
