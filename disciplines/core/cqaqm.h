/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * cqaqm.h - Cross-Queue AQM for precedence and preemption (cqaqm §III.A,
 * DISCIPLINES.md "CQ-AQM").
 *
 * Two QoS queues and two precedence levels.  pkt.cls is the QoS class q:
 * q = 1 goes to the high queue (band 0), q = 0 to the low queue (band 1).
 * pkt.prec is the precedence p (1 = high, 0 = low).  check_pkt() rejects
 * cls > 1 and prec > 1; enqueue() itself treats any cls != 1 as q = 0 and
 * any prec != 0 as p = 1, so it stays memory-safe for any input.
 * Occupancies (occ_high, occ_low) are the band backlogs in packets.
 *
 * Admission, rules tried in this order; the first that matches decides:
 *	q = 0:	occ_low  >= b_low			-> drop overflow
 *		p = 0 and low_local			-> drop precedence_local
 *	q = 1:	occ_high >= b_high			-> drop overflow
 *		p = 0 and high_local			-> drop precedence_local
 *		p = 0 and nonlocal_active		-> drop precedence_cross
 *	otherwise queue.
 * hysteresis=0 (the paper's single-threshold scheme, the default):
 *	low_local  = occ_low  >= t_low_local
 *	high_local = occ_high >= t_high_local
 *	nonlocal_active:  set when occ_low >= t_low_nonlocal,
 *			  cleared when occ_low < t_low_local
 * hysteresis=1 (footnote 1: separate on/off thresholds against thrashing):
 *	low_local  set at occ_low  >= t_low_local,    cleared below t_low_local_off
 *	high_local set at occ_high >= t_high_local,   cleared below t_high_local_off
 *	nonlocal_active set at occ_low >= t_low_nonlocal, cleared below t_low_off
 * The flags are updated from the occupancies on every enqueue (before the
 * admission decision, with the occupancies the arrival finds, and again
 * after it with the occupancies it leaves) and on every dequeue (dequeued(),
 * with the occupancies after removal), so they follow the occupancy
 * trajectory even when an adapter never reports some change.
 *
 * Choice (documented, tested): t_low_nonlocal = b_low switches the cross
 * rule off.  The paper states that t_low_local = t_low_nonlocal = b_low and
 * t_high_local = b_high "recover the standard two finite queue priority
 * model", but with a literal ">=" a full low queue (occ_low = b_low) would
 * still set nonlocal_active and drop p = 0 high-queue packets.  The local
 * rules need no such exception: at t = b the overflow rule matches first.
 *
 * Schedulers (scheduler=):
 *	strict	non-preemptive strict priority, high queue first (the paper);
 *	wrr	weighted round robin, `weights` = packets per turn "high:low"
 *		(one value: the same for both).  A turn ends when the band has
 *		sent its weight or is empty; the other band then gets a turn.
 *	drr	deficit round robin with Linux sch_drr semantics: a band that
 *		becomes backlogged joins the tail of the active list with
 *		deficit = quantum; the head band is served while its head
 *		packet's length <= deficit (deficit -= length); otherwise
 *		deficit += quantum and it moves to the tail.  A band leaves the
 *		list when it empties.  `quantum_bytes` "high:low" (one value:
 *		the same for both).  The search is computed in closed form (no
 *		loop over rounds), so it is O(1) for any quantum.
 * The paper names WRR and DRR as possible "priority treatment" but
 * evaluates only strict priority; weights default to 1:1 and quanta to one
 * 1500-byte MTU for both queues (our choice: neutral, Linux-like).
 *
 * Defaults (packets): the paper's mixed-traffic study uses a 750-packet
 * buffer with t_low_local = 500, t_low_nonlocal = 650, t_high_local = 7;
 * the split of the 750 packets is not stated.  Since t_low_nonlocal <= b_low
 * forces b_low >= 650, we take b_low = 700, b_high = 50 (a small
 * high-priority voice queue that still exceeds t_high_local = 7).
 * Hysteresis off-thresholds (used only with hysteresis=1) default to about
 * 90% of their on-thresholds for the local rules (t_high_local_off = 5,
 * t_low_local_off = 450) and t_low_off = 450 for the cross rule.
 *
 * No fixed point: every quantity is an integer count of packets or bytes.
 */
#ifndef QCORE_CQAQM_H
#define QCORE_CQAQM_H

#include "qcore.h"

#define CQAQM_BAND_HIGH 0	/* q = 1, served first under strict */
#define CQAQM_BAND_LOW 1	/* q = 0 */
#define CQAQM_NBANDS 2

enum cqaqm_scheduler {
	CQAQM_SCHED_STRICT = 0,
	CQAQM_SCHED_WRR = 1,
	CQAQM_SCHED_DRR = 2,
};

struct cqaqm_params {
	u32 b_high_pkts;		/* high queue size, packets */
	u32 b_low_pkts;			/* low queue size, packets */
	u32 t_high_local_pkts;		/* p = 0 denied at occ_high >= this */
	u32 t_low_local_pkts;		/* p = 0 denied at occ_low >= this */
	u32 t_low_nonlocal_pkts;	/* cross rule on at occ_low >= this */
	u32 t_low_off_pkts;		/* hysteresis: cross rule off below this */
	u32 t_high_local_off_pkts;	/* hysteresis: high local rule off below this */
	u32 t_low_local_off_pkts;	/* hysteresis: low local rule off below this */
	u32 weights_pkts[QCORE_MAX_BANDS];	/* WRR packets per turn, [0] high, [1] low (0: as [0]) */
	u32 quantum_bytes[QCORE_MAX_BANDS];	/* DRR quantum, [0] high, [1] low (0: as [0]) */
	u8 scheduler;			/* enum cqaqm_scheduler */
	u8 hysteresis;			/* 0 or 1 */
};

struct cqaqm_vars {
	/* From params at reset: nonlocal_active set at occ_low >= on, cleared below off. */
	u64 nonlocal_on_pkts;	/* t_low_nonlocal, or 2^32 (never) when = b_low */
	u32 nonlocal_off_pkts;	/* t_low_off with hysteresis, else t_low_local */
	u8 plain;		/* strict, hysteresis=0 (the defaults; valid params): short paths */
	u8 nonlocal_active;	/* cross rule in force */
	u8 high_local_active;	/* hysteresis=1 only */
	u8 low_local_active;	/* hysteresis=1 only */
	/* WRR */
	u8 wrr_band;		/* band whose turn it is */
	u32 wrr_left_pkts;	/* packets left in the current turn */
	/* DRR (Linux sch_drr): active list, head first */
	u8 drr_active[CQAQM_NBANDS];
	u8 drr_nactive;
	u64 drr_deficit_bytes[CQAQM_NBANDS];
};

struct cqaqm_stats {
	u64 drops[CQAQM_NBANDS][QCORE_REASON__COUNT];	/* per band, per reason */
	u64 admitted[2];				/* per precedence p */
	u64 sent_pkts[CQAQM_NBANDS];
	u64 sent_bytes[CQAQM_NBANDS];
	u64 nonlocal_on;				/* times nonlocal_active was set */
};

void cqaqm_params_init(struct cqaqm_params *p);
void cqaqm_vars_init(struct cqaqm_vars *v);
void cqaqm_stats_init(struct cqaqm_stats *s);

extern const struct qcore_disc_ops cqaqm_ops;

#endif /* QCORE_CQAQM_H */
