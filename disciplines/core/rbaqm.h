/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * rbaqm.h - rate-based AQM per class in the low-jitter WFQ (rbaqm §2-3,
 * Wydrowski & Zukerman; DISCIPLINES.md "RB-AQM in low-jitter WFQ").
 *
 * `classes` FIFOs, band = class = pkt.cls (check_pkt rejects cls >= classes),
 * served by the low-jitter WFQ (wfq.h: weights_bytes, maxs_bytes).
 *
 * On every class-i arrival (len bytes, at now):
 *  1. Arrival rate, GREEN's exponential estimator, bit/s, over the packets
 *     it counts:
 *	D = now - last_i;  e = exp(-D / tau)
 *	x_i = (1 - e) * 8 len / D + e * x_i		(D > 0)
 *	x_i = x_i + 8 len / tau				(D = 0, the limit D -> 0)
 *     and read in between as x_i * exp(-(now - last_i) / tau).  The first
 *     counted packet of a class after reset counts as D = 0, so x_i starts
 *     at 8 len / tau (the estimator's impulse response).
 *     Steps 2-3 use x_i with this packet counted.
 *     rate_estimate=offered (default): every arrival is kept, as GREEN
 *     measures it.  An unresponsive source above u_i c_i then drives P_i
 *     to 1 (its x does not fall as P rises).
 *     rate_estimate=admitted: the value is kept only if the packet is
 *     admitted (queued or marked); a dropped packet leaves x_i and last_i
 *     as they were.  This is the x of the paper's backlog process
 *     b(t+1) = [b(t) + x(t) - c(t)]+ (§1.3), and the reading under which an
 *     unresponsive source is "throttled down to its fair share" (Scenario
 *     2): P settles near 1 - u c / offered (test_disc_aqm.c: admitted rate
 *     within 5% of u S, P within 0.03).
 *     With TCP-like sources it reads the admitted rate low (the samples
 *     at dropped arrivals follow long gaps), so the toy model ran at
 *     utilisation ~0.97 with shares further from W; hence not the default.
 *  2. Allocated capacity (§2.1), S = rate_bps:
 *	S_i = S * (bytes of class i among the last H served packets) / (their bytes)
 *	      (capacity_estimator=window, H = window_pkts; while fewer than H
 *	      packets have been served since reset the window holds all of
 *	      them; none served: S_i = 0), or the same ratio of byte EWMAs
 *	      updated per served packet with weight capacity_weight
 *	      (capacity_estimator=ewma: b_j += w (len [class j] - b_j),
 *	      b += w (len - b)), the "exponential averaging" of §2.1
 *	M_i = W_i / sum W * S;		c_i = max(M_i, S_i)		(eq. 3, 4)
 *     fair_share=1 (§2.2, eq. 5): every class j is bottlenecked when
 *     x_j >= max(M_j, S_j); if class i is,
 *	c_i = F_i = W_i / sum_{bottlenecked} W * max(0, S - sum_{not bottlenecked} x_j)
 *     All rates enter as read at now, x_j * exp(-(now - last_j) / tau)
 *     (a class that went silent stops holding capacity; the paper does
 *     not say).
 *  3. Probability (eq. 6, ΔP normalised by S with a gain, DISCIPLINES.md):
 *	err = x_i - u_i * c_i
 *	ΔP  = max(gain * |err| / S, k)
 *	P_i = clamp01(P_i + ΔP)  if err >= 0  (U(0) = +1, eq. 6.2)
 *	P_i = clamp01(P_i - ΔP)  otherwise
 *  4. Drop (aqm) with probability P_i; ecn=1 marks instead.  The generator
 *     is drawn only when 0 < P_i < 1 (qcore_rng_u32() < P_i).
 *  5. A packet the AQM admits is dropped (overflow) when its class already
 *     holds limit_pkts packets (a per-class limit; the paper gives none).
 * On service (dequeued): the WFQ charge, then the capacity window/EWMA.
 *
 * Defaults and sources: classes 4, u 0.93 and W 8001:4001:2001:1001 bits
 * (= 1001:501:251:126 bytes, wfq.h) from Table 1; rate_bps 1000000 is the
 * 1 Mb/s link of Scenarios 1-2; fair_share 1 as Scenario 1A; gain 1 is
 * DISCIPLINES.md's ΔP = max(|err| / S, k) as written.  Not in the paper
 * (qlab choices, checked on the AIMD toy model of tests/test_disc_aqm.c):
 * rate_estimate offered, k 0.0005, tau_ns 40 ms (one RTT of the paper's
 * 40 ms scenarios; 100 ms gave more backlog in the toy), window_pkts 100, capacity_weight 0.01
 * (~1/H), maxs_bytes 3000 (wfq.h), limit_pkts 100.
 *
 * What the paper leaves open and how it is read here: the units of ΔP
 * (above); the rate estimator (GREEN's, over every arrival or only the
 * admitted ones: rate_estimate, above); x_j of other classes in eq. 5
 * (decayed to now); S_i before any service (0, so c_i = M_i); F_i may be
 * below M_i (eq. 5 is applied as printed); the sign at err = 0 (+1, eq.
 * 6.2); buffer limits (per class, limit_pkts).
 *
 * Lists (QCORE_PARAM_U32_LIST, "a:b:c", one value = every class):
 * weights_bytes and u_ppm, the target utilisation u_i in parts per million
 * (930000 = 0.93) because the parameter parser has no decimal list.
 *
 * Fixed point:
 *	x_i, S_i, M_i, c_i, S	bit/s, u64
 *	P_i, e, u_i, k, ΔP	Q0.32 in a u64, 2^32 = 1
 *	gain			Q32.32 in a u64 (gain <= 1000)
 *	|err| / S		Q32.32, capped at 2^16
 *	capacity EWMA b_j, b	Q48.16 bytes, u64
 *	exp(-z)			rbaqm_exp_neg_q32(): z in Q32.32; e^-n for the
 *				integer part from a 23-entry table (0 from
 *				z >= 23), e^-2^-k for the top 16 fraction
 *				bits, 1 - r for the remaining r < 2^-16;
 *				each product rounded; |error| < 2^-28
 *				(measured 1.2e-9, 5.3 ulp, against libm)
 * 8 len / D saturates for len above 2^30 bytes (never for IP packets).
 *
 * Cost per arrival: O(1) with three 64-bit divisions (D / tau, 8 len / D,
 * |err| / S; one or two more each when its dividend is 2^32 or more) and
 * one exp (a multiply per set bit among the top 16 fraction bits of
 * D / tau, plus one), which is not evaluated again while D repeats the
 * last one; no step of P when P already sits at the bound (0 or 1) the
 * step would push it to.  c_i: S_i (one division), kept per class until
 * the next service.  With fair_share, when class i is bottlenecked,
 * O(classes): per other class j, S_j as for c_i, and one multiply when a
 * lower bound of x_j read at now already reaches c_j (rbaqm.c), else one
 * exp and one division.  All of this gives the same bits as the plain
 * evaluation (tests/test_disc_aqm.c keeps that as the reference).  Per
 * service: O(1) for the window, O(classes) EWMA steps for
 * capacity_estimator=ewma.  Dequeue: O(classes), u32 divisions only when
 * no head fits yet (wfq.h).
 */
#ifndef QCORE_RBAQM_H
#define QCORE_RBAQM_H

#include "qcore.h"
#include "wfq.h"

#define RBAQM_MAX_WINDOW_PKTS 256

enum rbaqm_rate_estimate {
	RBAQM_RATE_ADMITTED = 0,
	RBAQM_RATE_OFFERED = 1,
};

enum rbaqm_capacity_estimator {
	RBAQM_CAPACITY_WINDOW = 0,
	RBAQM_CAPACITY_EWMA = 1,
};

struct rbaqm_params {
	u32 classes;				/* 1..QCORE_MAX_BANDS */
	u64 rate_bps;				/* link capacity S, bit/s */
	u32 weights_bytes[QCORE_MAX_BANDS];	/* WFQ quanta W, bytes (list) */
	u32 maxs_bytes;				/* WFQ credit cap MaxS, bytes */
	u32 u_ppm[QCORE_MAX_BANDS];		/* target utilisation u_i, ppm (list) */
	u32 k_ppm;				/* minimum step of P, ppm */
	u32 gain_ppm;				/* ΔP gain on |err| / S, ppm */
	u64 tau_ns;				/* rate estimator time constant, ns */
	u8 rate_estimate;			/* enum rbaqm_rate_estimate */
	u8 capacity_estimator;			/* enum rbaqm_capacity_estimator */
	u32 window_pkts;			/* H, packets */
	u32 capacity_weight_ppm;		/* EWMA weight per served packet, ppm */
	u8 fair_share;				/* 0|1 */
	u8 ecn;					/* 0|1 */
	u32 limit_pkts;				/* per class, packets */
};

struct rbaqm_vars {
	struct wfq_vars wfq;
	u64 x_bps[QCORE_MAX_BANDS];		/* arrival rate estimate x_i */
	u64 last_arrival_ns[QCORE_MAX_BANDS];
	u8 seen[QCORE_MAX_BANDS];		/* class had an arrival since reset */
	u64 p_q32[QCORE_MAX_BANDS];		/* P_i, Q0.32 (2^32 = 1) */
	u64 c_bps[QCORE_MAX_BANDS];		/* c_i at the last class-i arrival */
	/* Capacity window: the last H served packets, oldest at ring_head once full. */
	u32 ring_len[RBAQM_MAX_WINDOW_PKTS];	/* bytes */
	u8 ring_cls[RBAQM_MAX_WINDOW_PKTS];
	u32 ring_head, ring_count;
	u64 win_bytes[QCORE_MAX_BANDS];		/* per class, bytes in the window */
	u64 win_total_bytes;
	/* Capacity EWMA: byte shares per served packet, Q48.16 bytes. */
	u64 ewma_bytes[QCORE_MAX_BANDS];
	u64 ewma_total_bytes;
	/* Derived from params at reset. */
	u32 quantum_bytes[QCORE_MAX_BANDS];	/* W_i */
	u64 min_bps[QCORE_MAX_BANDS];		/* M_i, bit/s */
	u64 u_q32[QCORE_MAX_BANDS];		/* u_i, Q0.32 */
	u64 k_q32;				/* k, Q0.32 */
	u64 gain_q32;				/* gain, Q32.32 */
	u64 capacity_w_q32;			/* capacity_weight, Q0.32 */
	u64 tau_recip_q32;			/* ceil(2^32 / tau) */
	/* Caches: the values recomputing would give (rbaqm.c). */
	u64 decay_delta_ns, decay_q32;		/* the last exp(-delta / tau) evaluated */
	u64 basic_bps[QCORE_MAX_BANDS];		/* max(M_j, S_j) since the last service */
	u8 basic_valid;				/* bit j: basic_bps[j] is current */
};

struct rbaqm_stats {
	u64 queued[QCORE_MAX_BANDS];		/* admitted unmarked */
	u64 marked[QCORE_MAX_BANDS];		/* admitted with CE */
	u64 dropped[QCORE_MAX_BANDS];		/* any reason */
	u64 drops[QCORE_REASON__COUNT];
};

void rbaqm_params_init(struct rbaqm_params *p);
void rbaqm_vars_init(struct rbaqm_vars *v, const struct rbaqm_params *p);
void rbaqm_stats_init(struct rbaqm_stats *s);

/*
 * e^-z, z in Q32.32, result Q0.32 in a u64 (2^32 = 1).  Never below
 * 2^32 - z - RBAQM_EXP_SLACK (the fair share relies on it, rbaqm.c).
 */
u64 rbaqm_exp_neg_q32(u64 z_q32);
#define RBAQM_EXP_SLACK 64
/* exp(-delta_ns / tau_ns) in Q0.32 (u64), tau_ns >= 1. */
u64 rbaqm_decay_q32(u64 delta_ns, u64 tau_ns);
/*
 * c_i (bit/s) for class i with rate x_i_bps at now_ns (step 2).  Fills
 * basic_bps (the per-class max(M_j, S_j)) as a cache; whoever changes the
 * window or EWMA other than through dequeued() clears basic_valid.
 */
u64 rbaqm_capacity_bps(const struct rbaqm_params *p, struct rbaqm_vars *v,
		       u32 i, u64 x_i_bps, u64 now_ns);

extern const struct qcore_disc_ops rbaqm_ops;

#endif /* QCORE_RBAQM_H */
