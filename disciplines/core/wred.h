/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * wred.h - the WRED baseline of rbaqm §3.2 over the low-jitter WFQ
 * (DISCIPLINES.md, "RB-AQM in low-jitter WFQ ... and the WRED baseline").
 *
 * `classes` FIFOs, band = class = pkt.cls (check_pkt rejects cls >= classes),
 * served by the low-jitter WFQ (wfq.h) with quanta weights_bytes and cap
 * maxs_bytes.  On every class-i arrival, with b = class-i packets queued
 * before it:
 *
 *	B_w[i] += w_q * (b - B_w[i])		(per class, per arrival of that class)
 *	P = alpha * B_w[i] = B_w[i] / q[i]	(alpha = 1/q, rbaqm §3.2), P <= 1
 *	drop (aqm) with probability P; ecn=1: CE-mark instead
 *	then, if admitted: drop (overflow) when b >= q[i]   ("hard drop at q")
 *
 * The AQM decides before the hard limit, as in red.h.  The paper gives
 * q = 10 (Scenario 1B) and 5/10/20 (Scenario 3); w_q is not stated, 0.002
 * as in RED (DISCIPLINES.md).  The paper does not say how B_w behaves while
 * a class is idle: here it moves only on that class's arrivals (an arrival
 * to an empty class takes one EWMA step with b = 0), no idle decay.
 *
 * Lists (QCORE_PARAM_U32_LIST "a:b:c"): q_pkts and weights_bytes hold one
 * value per class, or a single value that applies to every class; any other
 * count is an error.  The default weights_bytes 1001:501:251:126 are the
 * paper's 8001:4001:2001:1001 bits (Table 1) in bytes (wfq.h), so the
 * default classes is 4.  maxs_bytes (MaxS) is not given in the paper:
 * 3000 bytes (two 1500-byte packets), enough for any 1500-byte MTU packet
 * to fit whatever the quantum.
 *
 * Fixed point: B_w Q44.20 packets (u64), w_q and P Q0.32 in a u64 with
 * 2^32 = 1 (w_q = floor(ppm * 2^32 / 10^6)); P = floor(2^32 B_w / q)
 * exactly (one 64-bit division, wred_prob_q32).  The generator is drawn only when 0 < P < 1.
 * Per-class q and W are expanded from the lists at reset.
 *
 * Cost: enqueue O(1), one 64-bit division; dequeue O(classes), u32
 * divisions only when no backlogged head fits yet (wfq.h).
 */
#ifndef QCORE_WRED_H
#define QCORE_WRED_H

#include "qcore.h"
#include "wfq.h"

struct wred_params {
	u32 classes;				/* 1..QCORE_MAX_BANDS */
	u32 q_pkts[QCORE_MAX_BANDS];		/* per-class max queue q, packets (list) */
	u32 w_q_ppm;				/* EWMA weight, ppm */
	u32 weights_bytes[QCORE_MAX_BANDS];	/* WFQ quanta W, bytes (list) */
	u32 maxs_bytes;				/* WFQ credit cap MaxS, bytes */
	u8 ecn;					/* 0|1: mark instead of the AQM drop */
};

struct wred_vars {
	u64 avg[QCORE_MAX_BANDS];		/* B_w, Q44.20 packets */
	u64 w_q32;				/* w_q, Q0.32 (2^32 = 1), derived */
	u32 q_pkts[QCORE_MAX_BANDS];		/* per-class q, derived */
	u32 quantum_bytes[QCORE_MAX_BANDS];	/* per-class W, derived */
	struct wfq_vars wfq;
};

struct wred_stats {
	u64 queued[QCORE_MAX_BANDS];		/* admitted unmarked */
	u64 marked[QCORE_MAX_BANDS];		/* admitted with CE */
	u64 dropped[QCORE_MAX_BANDS];		/* any reason */
	u64 drops[QCORE_REASON__COUNT];
};

void wred_params_init(struct wred_params *p);
void wred_vars_init(struct wred_vars *v, const struct wred_params *p);
void wred_stats_init(struct wred_stats *s);

/* P = B_w / q in Q0.32 (u64, 2^32 = 1). */
u64 wred_prob_q32(u64 avg, u32 q_pkts);

extern const struct qcore_disc_ops wred_ops;

#endif /* QCORE_WRED_H */
