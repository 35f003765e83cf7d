/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * red.h - Random Early Detection (Floyd & Jacobson 1993) with the gentle
 * option (Floyd 2000), one band, the reference AQM (DISCIPLINES.md,
 * "Baselines").  After Linux include/net/red.h, but with exact decimal
 * parameters instead of tc's Wlog/Plog/Scell_log.
 *
 * On every arrival, with q = packets queued before it:
 *
 *	avg:	queue non-empty, or pkt_time_ns = 0:  avg += w_q * (q - avg)
 *		queue empty since t0 (idle):          avg *= (1 - w_q)^m,
 *		                                      m = floor((now - t0) / pkt_time_ns)
 *	p_b:	avg <  min_pkts                        no early drop, count = 0
 *		min_pkts <= avg < max_pkts             p_b = max_p (avg - min) / (max - min)
 *		max_pkts <= avg < 2 max_pkts, gentle   p_b = max_p + (1 - max_p) (avg - max) / max
 *		otherwise (forced region)              drop (aqm), count = 0
 *	p_a:	p_a = p_b / (1 - count p_b), or 1 once (count + 1) p_b >= 1,
 *		in the gentle region too (as ns-2); drop with probability p_a;
 *		then count = 0 after an early drop, count += 1 otherwise
 *	limit:	a packet the AQM admits is dropped (overflow) when q >= limit_pkts
 *
 * count is F&J §7's "number of unmarked packets that have arrived since the
 * last marked packet" (0 below min_pkts and after any drop), which makes
 * the gap between early drops uniform on 1..1/p_b for a constant p_b, the
 * paper's stated aim, and matches Linux red.h.  (F&J's pseudo-code, count
 * <- 0 after a mark and incremented before use, would give the first packet
 * after a drop p_b / (1 - p_b) and gaps 1..1/p_b - 1.)  The AQM decides
 * first and the hard limit second, as Linux sch_red does; a packet dropped
 * at the limit still moved avg and count.
 *
 * ecn=1: early (probabilistic, p_a <= 1) drops become CE marks (verdict
 * marked); drops in the forced region stay drops, as the brief's "mark
 * instead of early drop" reads and RFC 3168 §7 recommends under persistent
 * overload.
 *
 * Idle time (F&J §4 "when the queue is empty"): the queue becomes idle when
 * dequeued() leaves it empty (t0 = that now_ns; reset counts as idle since
 * 0 with avg 0).  The next arrival finding it empty decays avg by
 * (1 - w_q)^m with m the number of typical packet times pkt_time_ns that
 * fit into the idle period, and does not also take the usual EWMA step.
 * pkt_time_ns = 0 (default) turns this off: an arrival to an empty queue
 * takes one ordinary EWMA step with q = 0.  The core has no link rate;
 * set pkt_time_ns = mean packet size / link rate (F&J's s).
 *
 * Fixed point:
 *	avg		Q44.20 packets in a u64 (RED_AVG_SHIFT)
 *	w_q, 1 - w_q	Q0.32 in a u64, 2^32 = 1, from the ppm parameter
 *			(floor(w_q * 2^32); 0.002 -> 8589934, error < 2^-32)
 *	p_b, p_a	Q0.32 in a u64, 2^32 = 1, each an exact floor of the
 *			rational formula above (qcore_frac_q32, no 64-bit division)
 * The EWMA step truncates toward the old avg, so avg settles within
 * 2^-20 / w_q packets of a constant q (0.0005 packets for w_q = 0.002).
 *
 * The generator is drawn only when 0 < p_a < 1: drop when
 * qcore_rng_u32() < p_a.
 *
 * Defaults: min_pkts 5, max_pkts 15, max_p 0.02 (1/50), w_q 0.002 are F&J's
 * simulation values; gentle 1 is Floyd's recommendation; limit_pkts 100 and
 * pkt_time_ns 0 are qlab choices.  min_pkts < max_pkts is required.
 *
 * Cost per arrival: O(1); no 64-bit division except m on the first
 * arrival after an idle period, whose (1 - w_q)^m takes at most 64
 * squarings.
 */
#ifndef QCORE_RED_H
#define QCORE_RED_H

#include "qcore.h"

#define RED_AVG_SHIFT 20			/* avg: Q44.20 packets */
#define RED_ONE_Q32 (1ULL << 32)		/* 1.0 in Q0.32 (u64) */
#define RED_PPM 1000000U

struct red_params {
	u32 min_pkts;		/* lower threshold on avg, packets */
	u32 max_pkts;		/* upper threshold on avg, packets */
	u32 max_p_ppm;		/* p_b at max_pkts, ppm */
	u32 w_q_ppm;		/* EWMA weight, ppm */
	u32 limit_pkts;		/* hard limit, packets */
	u64 pkt_time_ns;	/* F&J's s for idle decay; 0 = off */
	u8 gentle;		/* 0|1 */
	u8 ecn;			/* 0|1: mark instead of early drop */
};

struct red_vars {
	u64 avg;		/* Q44.20 packets */
	u64 count;		/* unmarked packets since the last drop, in the region */
	u64 idle_since_ns;	/* when the queue last became empty */
	u8 idle;		/* queue empty since idle_since_ns */
	u64 w_q32;		/* w_q, Q0.32 (2^32 = 1), derived at reset */
};

struct red_stats {
	u64 queued;		/* admitted unmarked */
	u64 marked;		/* admitted with CE */
	u64 forced;		/* forced-region drops (also counted in drops[aqm]) */
	u64 drops[QCORE_REASON__COUNT];
};

void red_params_init(struct red_params *p);
void red_vars_init(struct red_vars *v, const struct red_params *p);
void red_stats_init(struct red_stats *s);

/* floor(x * f / 2^32) for f <= 2^32 (Q0.32, u64), exact for any u64 x. */
static inline u64 red_mul_q32(u64 x, u64 f)
{
	if (f >= RED_ONE_Q32)
		return x;
	return (x >> 32) * f + (((x & 0xffffffffULL) * f) >> 32);
}

/*
 * qcore_frac_q32(num, den), floor(num * 2^32 / den) for num < den, with
 * 64-bit divisions instead of 32 long-division steps where they fit:
 *	den < 2^32:  one division of num << 32 (num < den, so it fits);
 *	den < 2^48:  two 16-bit digits: num 2^16 = hi den + r, then
 *	             r 2^16 = lo den + r' (num, r < den, so both shifts fit)
 *	             give num 2^32 = (hi 2^16 + lo) den + r', hi, lo < 2^16;
 *	otherwise:   qcore_frac_q32() itself.
 * The same value for every num < den (tests/test_disc_aqm.c compares them).
 */
static inline u32 red_frac_q32(u64 num, u64 den)
{
	u64 hi, r;

	if (den <= 0xffffffffULL)
		return (u32)qcore_div64(num << 32, den);
	if (den >= 1ULL << 48)
		return qcore_frac_q32(num, den);
	hi = qcore_div64(num << 16, den);
	r = (num << 16) - hi * den;
	return (u32)((hi << 16) | qcore_div64(r << 16, den));
}

/* Q0.32 (u64) of ppm / 10^6, ppm <= 10^6. */
static inline u64 red_ppm_to_q32(u32 ppm)
{
	return ppm >= RED_PPM ? RED_ONE_Q32 : qcore_frac_q32(ppm, RED_PPM);
}

/* One EWMA step avg += w (sample - avg), truncated toward the old avg. */
static inline u64 red_ewma(u64 avg, u64 sample, u64 w_q32)
{
	if (sample >= avg)
		return avg + red_mul_q32(sample - avg, w_q32);
	return avg - red_mul_q32(avg - sample, w_q32);
}

/* base^m for base <= 2^32 (Q0.32, u64), rounded per multiply, <= 64 steps. */
u64 red_pow_q32(u64 base, u64 m);

/*
 * The uniformised early-drop probability p_a (Q0.32 u64) for p_b and count
 * unmarked packets since the last drop: p_b / (1 - count p_b), 2^32 once
 * (count + 1) p_b >= 1, 0 when p_b = 0.
 */
u64 red_uniform_q32(u64 p_b, u64 count);

extern const struct qcore_disc_ops red_ops;

#endif /* QCORE_RED_H */
