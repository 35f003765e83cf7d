/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * ncq.h - Non-Congestive Queuing (ncq-journal §3, ncq-conf §3).
 *
 * Two bands in one shared buffer of limit_pkts, served by non-preemptive
 * strict priority (band 0 = favoured, first), FIFO within a band.
 *
 * enqueue (variant=journal, mode=deterministic, the default):
 *	received += 1
 *	if small(pkt) and favoured * 10^6 < thresh_ppm * received:
 *		band 0, favoured += 1
 *	else
 *		band 1
 *	drop (overflow) if all bands together hold >= limit_pkts
 * small(pkt): len < size_bytes, or favor_acks and the packet is a pure ACK.
 * The counters count at classification, before the overflow check, so a
 * packet classified and then dropped still counts as received (and as
 * favoured if it was put in band 0).  thresh = 1 gives small packets full
 * priority; thresh = 0 gives DropTail (band 1 only).
 *
 * variant=conf-literal: the conference paper's printed pseudo-code, kept
 * only for the ablation.  Its counter is incremented in the else branch, so
 * it counts normal-priority (band 1) packets, large ones included, and the
 * test "counter * 10^6 < thresh_ppm * received" bounds those instead.
 *
 * mode=probabilistic (extension, ncq-journal §6): a small packet gets
 * priority with probability P of the favoured fraction f = counter/received
 * (received already incremented):
 *	P = 1				while f <= thresh * (1 - ramp)
 *	P = (thresh - f) / (thresh * ramp)	between the two (linear ramp)
 *	P = 0				when f >= thresh
 * computed exactly in integers as margin / width with
 *	margin = thresh_ppm * received - counter * 10^6
 *	width  = floor(thresh_ppm * received * ramp_ppm / 10^6)
 * and P in Q0.32 = floor(2^32 * margin / width) when margin < width.
 * The packet is favoured when qcore_rng_u32() < P; the generator is drawn
 * only when 0 < P < 2^32.  ramp = 0 is the deterministic rule, with no draws.
 *
 * Counters are u64; counter * 10^6 and thresh_ppm * received stay exact
 * for up to 1.8 * 10^13 received packets.
 */
#ifndef QCORE_NCQ_H
#define QCORE_NCQ_H

#include "qcore.h"

enum ncq_variant {
	NCQ_VARIANT_JOURNAL = 0,
	NCQ_VARIANT_CONF_LITERAL = 1,
};

enum ncq_mode {
	NCQ_MODE_DETERMINISTIC = 0,
	NCQ_MODE_PROBABILISTIC = 1,
};

#define NCQ_BAND_FAVOURED 0
#define NCQ_BAND_NORMAL 1

struct ncq_params {
	u32 size_bytes;		/* packets strictly shorter are candidates, bytes */
	u32 thresh_ppm;		/* favoured/received bound, ppm */
	u32 limit_pkts;		/* buffer shared by both bands, packets */
	u32 ramp_ppm;		/* probabilistic ramp width, ppm of thresh */
	u8 variant;		/* enum ncq_variant */
	u8 mode;		/* enum ncq_mode */
	u8 favor_acks;		/* pure ACKs count as small */
};

struct ncq_vars {
	u64 received;		/* packets classified */
	u64 counted;		/* journal: favoured; conf-literal: normal-priority */
};

struct ncq_stats {
	u64 favoured;		/* classified into band 0 (dropped ones included) */
	u64 normal;		/* classified into band 1 (dropped ones included) */
	u64 drops[QCORE_REASON__COUNT];
};

void ncq_params_init(struct ncq_params *p);
void ncq_vars_init(struct ncq_vars *v);
void ncq_stats_init(struct ncq_stats *s);

extern const struct qcore_disc_ops ncq_ops;

#endif /* QCORE_NCQ_H */
