/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * srd.h - Rate-Delay services: RD (arrival-time head drop) and S-RD
 * (stateless buffer sizing) (srd §2, DISCIPLINES.md "RD and S-RD").
 *
 * Two FIFO bands: pkt.cls 0 = D (delay, band 0), 1 = R (rate, band 1);
 * check_pkt() rejects cls > 1 (enqueue() treats any cls != 0 as R); prec
 * is accepted and ignored.  Two ops share this code: srd_ops ("srd") and
 * rd_ops ("rd"); they differ only in the D buffer size and RD's head drop.
 *
 * Notation: C = rate_bps, d = d_ns, k = per-flow rate ratio R:D, n_D, n_R
 * flow counts, alpha = n_D / (k n_R), R_D = n_D C / (n_D + k n_R) bit/s.
 *
 * Sizes (bytes, exact integer floors, 64-bit results from a 128-bit
 * intermediate, see below):
 *	RD:    B_D = floor(n_D C d / (n_D + k n_R) / 8)
 *	S-RD:  w = (2/C) (8 S_D_max / alpha + 8 S_R_max)  seconds
 *	       B_D = floor((d - w) R_D / 8), 0 when d <= w
 *	both:  B = buffer_bytes, B_R = min(B_max, B - B_D)
 * Substituting w, (d - w) n_D C is the integer
 *	d n_D C - 16000 (S_D_max k_ppm n_R + 10^6 S_R_max n_D)   [ns * bit/s]
 * and B_D = floor(that / ((n_D 10^6 + k_ppm n_R) * 8000)), so no rounding
 * happens before the final floor.  check_params() rejects B_R <= 0 (for the
 * static counts, or n_D = n_R = 1 when they are estimated).  With estimated
 * counts a later B_D > B is cut to B and B_R becomes 0 (no R admitted).
 *
 * Fixed point and overflow bounds:
 *	k is an exact decimal with at most 6 places stored x10^6 (k_ppm, u32),
 *	  0.000001 <= k <= 1000;
 *	rate_bps <= 10^11, d_ns <= 10^10, n_D, n_R <= 10^5, packet sizes <=
 *	  65535: d n_D C <= 10^26 < 2^128, the S-RD correction < 1.1 * 10^23,
 *	  the divisor (n_D 10^6 + k_ppm n_R) 8000 <= 8.1 * 10^17 < 2^64, and
 *	  B_D <= C d / 8e9 <= 1.25 * 10^11, so every step is exact in the
 *	  portable 128-bit helpers of srd.c (64 x 64 -> 128 multiply, 128 / 64
 *	  long division with a fixed 64-step loop).
 *
 * Scheduler: L_D, L_R are the bytes sent from D and R since the last reset.
 * Serve D when L_D <= alpha L_R, exactly: L_D k_ppm n_R <= n_D 10^6 L_R
 * (both sides computed in 128 bits, never overflowing for u64 counters:
 * k_ppm n_R and n_D 10^6 < 2^64 are kept in vars whenever the counts
 * change, so each side is one 64 x 64 -> 128 multiply, __int128 where the
 * compiler has it, else the portable helper; -DQCORE_NO_INT128 forces it);
 * else R; an empty chosen band yields to the other.  Head drops do not
 * count.  Reset: on the first dequeue at or after period_start + period_ns,
 * L_D = L_R = 0 and period_start = now (the next period starts at the
 * reset, so resets are always at least period_ns apart).  The first dequeue
 * ever starts the first period.
 *
 * RD head drop: at every dequeue, before choosing (after a due reset), a D
 * head whose sojourn now - head_arrival_ns exceeds d_ns is answered with
 * QCORE_DEQ_DROP_HEAD, reason delay; the adapter drops it, calls
 * dequeued() and asks again.  dequeued() recognises the head drop by a flag
 * the dequeue just set, so it never counts a dropped packet into L_D.
 *
 * Overflow: drop-tail per band in bytes, like Linux bfifo: an arrival is
 * dropped (overflow) when backlog_bytes + len > B_D (D) or B_R (R).
 * S_D_max and S_R_max only enter the sizing; larger packets are admitted by
 * the byte limits like any other.
 *
 * Flow counts: n_d, n_r > 0 are static.  0 means estimated with a
 * time-stamp vector (Kim & O'Hallaron): per class SRD_FLOW_SLOTS last-seen
 * times indexed by flow_hash % SRD_FLOW_SLOTS (stored as t + 1, 0 = never).
 * At each reset, n = max(1, number of slots of the class seen since the
 * previous reset; at the first dequeue: ever); B_D and B_R are recomputed
 * then, and only then (so sizes change at most once per period).  Hash
 * collisions make it undercount; it saturates at SRD_FLOW_SLOTS flows.
 *
 * Defaults and why:
 *	rate_bps 100 Mbit/s, srd §4's bottleneck; d_ns 50 ms, srd §5-6;
 *	k 2 (not stated in srd; our choice, a modest R:D per-flow ratio);
 *	buffer_bytes 0 and bmax_bytes 0 mean C * 250 ms / 8 (srd §4:
 *	  B = B_max = C * 250 ms);
 *	sd_max_bytes = sr_max_bytes = 1500 (an Ethernet MTU as IP length);
 *	n_d = n_r = 0 (estimated, as srd §2.1);
 *	period_ns 100 ms (2 d, about 830 maximum-size packets at the default
 *	  rate), for the delay statement below.
 *
 * When the S-RD bound holds (both queues backlogged, the theorem's case;
 * tests/test_disc_cqaqm_srd.c checks it adversarially).  Write
 * e = L_D - alpha L_R (D bytes) and X = S_D_max/alpha + S_R_max, so that
 * w = 2 X 8/C.  While both queues stay backlogged, e stays in
 * (-alpha S_R_max, S_D_max], and a D packet's wait (arrival to dequeue) is
 * at most
 *	(d - w) + X 8/C + [D packet in flight] S_D_max 8/C + n S_R_max 8/C
 * where n is the number of counter resets inside the wait: a reset zeroes
 * e, and at e < 0 it forgets up to alpha S_R_max of D service owed.  So:
 *	n = 0 (the paper's proof): within d when S_D_max <= X (always when
 *	  alpha <= 1, i.e. n_D <= k n_R);
 *	n = 1: within d when alpha <= 1 (or no D packet is in flight);
 *	n >= 2: needs (n - 1) S_R_max <= S_D_max / alpha, false for small D
 *	  packets next to maximum-size R packets.
 * Hence the bound holds when at most one reset can fall inside a D wait,
 * i.e. period_ns > d_ns + one maximum packet time (8 max(S) / C) - the
 * default 100 ms against d = 50 ms does - and alpha <= 1.  With shorter
 * periods each extra reset in a wait can cost another S_R_max 8/C; with a
 * period of about one R packet time the counters are zeroed before almost
 * every D choice, D gets one packet per R packet (rate S_D/(S_D + S_R) C
 * instead of R_D) and small D packets wait far longer than d (tested).
 * The bound says nothing about a queue that was idle: after one queue ran
 * alone the counters hold up to one period of one-sided service and the
 * other queue catches up for as long; the paper leaves that case aside
 * (its footnote 3), and a shorter period bounds it.  RD's head drop
 * enforces d in every case.
 */
#ifndef QCORE_SRD_H
#define QCORE_SRD_H

#include "qcore.h"

#define SRD_BAND_D 0
#define SRD_BAND_R 1
#define SRD_NBANDS 2
#define SRD_FLOW_SLOTS 256	/* time-stamp vector size per class */

struct srd_params {
	u64 rate_bps;		/* link capacity C, bit/s */
	u64 d_ns;		/* delay bound d, ns */
	u64 buffer_bytes;	/* total buffer B, bytes; 0 = rate_bps / 32 (C * 250 ms) */
	u64 bmax_bytes;		/* R buffer cap B_max, bytes; 0 = rate_bps / 32 */
	u64 period_ns;		/* counter reset / flow count period, ns */
	u32 k_ppm;		/* per-flow rate ratio R:D, x10^6 */
	u32 sd_max_bytes;	/* S_D_max, bytes (sizing only) */
	u32 sr_max_bytes;	/* S_R_max, bytes (sizing only) */
	u32 n_d;		/* D flows; 0 = estimated */
	u32 n_r;		/* R flows; 0 = estimated */
};

struct srd_vars {
	u64 l_d_bytes;		/* D bytes sent since the last reset */
	u64 l_r_bytes;		/* R bytes sent since the last reset */
	u64 period_start_ns;	/* time of the last reset */
	u64 cur_period_ns;	/* period_ns once started, 0 before (first dequeue starts one) */
	u64 b_d_bytes;		/* current D limit */
	u64 b_r_bytes;		/* current R limit */
	u64 k_n_r;		/* k_ppm * n_r, L_D's weight in the scheduler test */
	u64 n_d_ppm;		/* n_d * 10^6, L_R's weight in the scheduler test */
	u32 n_d, n_r;		/* counts in use (>= 1) */
	u8 started;		/* a first dequeue has started the first period */
	u8 head_drop_pending;	/* the last dequeue answered DROP_HEAD */
	u8 estimated[SRD_NBANDS];	/* params n_d, n_r == 0: stamp seen_ns */
	u64 seen_ns[SRD_NBANDS][SRD_FLOW_SLOTS];	/* last-seen time + 1, 0 = never */
};

struct srd_stats {
	u64 drops[SRD_NBANDS][QCORE_REASON__COUNT];	/* per band, per reason */
	u64 queued[SRD_NBANDS];
	u64 sent_pkts[SRD_NBANDS];
	u64 sent_bytes[SRD_NBANDS];
};

void srd_params_init(struct srd_params *p);
void srd_vars_init(struct srd_vars *v);
void srd_stats_init(struct srd_stats *s);

/* B_D for counts n_d, n_r >= 1: S-RD sizing when stateless, else RD's. */
u64 srd_size_d_bytes(const struct srd_params *p, bool stateless, u32 n_d, u32 n_r);

extern const struct qcore_disc_ops srd_ops;
extern const struct qcore_disc_ops rd_ops;

#endif /* QCORE_SRD_H */
