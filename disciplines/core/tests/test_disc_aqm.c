// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * test_disc_aqm.c - unit tests of the low-jitter WFQ (wfq.h), RED (red.h),
 * WRED (wred.h) and RB-AQM (rbaqm.h).  Same harness as test_core.c: the
 * last line is "N passed, N failed" (tests, not checks) and the exit
 * status is non-zero when any test failed.  libm is allowed here (and only
 * here) as the reference for the fixed-point arithmetic.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include "qcore.h"
#include "wfq.h"
#include "red.h"
#include "wred.h"
#include "rbaqm.h"

#include "harness.h"
#include "sim.h"

#define Q32 4294967296.0

/* Test-local generator for workloads (never the core's). */
static u64 lcg_state = 12345;
static u32 lcg(void)
{
	lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (u32)(lcg_state >> 33);
}

/* ---- the adapter (sim.h), with this file's packet shape ----------- */

static struct sim sim_a;

static struct qcore_decision sim_enq(struct sim *s, u64 now, u32 len, u8 cls)
{
	struct qcore_pkt pkt = { .now_ns = now, .len = len, .cls = cls };

	return sim_enq_pkt(s, &pkt);
}

/* Sends one packet: its band, or -1 when empty; *len its size. */
static int sim_send(struct sim *s, u64 now, u32 *len)
{
	u32 band, l;
	u64 arrival;

	if (sim_deq_full(s, now, &band, &l, &arrival) < 0)
		return -1;
	if (len)
		*len = l;
	return (int)band;
}

/* One enqueue with a fabricated view: band `band` holds q packets. */
static struct qcore_decision enq_with_backlog(struct sim *s, u64 now, u32 len,
					      u8 cls, u32 q)
{
	struct qcore_band_view v[QCORE_MAX_BANDS];
	struct qcore_pkt pkt = { .now_ns = now, .len = len, .cls = cls };

	memset(v, 0, sizeof(v));
	v[cls].backlog_pkts = q;
	v[cls].backlog_bytes = (u64)q * len;
	v[cls].head_len = q ? len : 0;
	return s->ops->enqueue(s->params, s->vars, s->stats, &pkt, v, &s->rng);
}

/* ======================================================================
 * Low-jitter WFQ
 * ==================================================================== */

/*
 * Fig. 2 literally, round by round, as the reference for wfq_select():
 * scan, refill every class below the cap, scan again.  When nothing can
 * ever fit it mirrors wfq.h's rule (refill to the cap, serve the first
 * backlogged class).
 */
static int ref_fig2(u32 *credit, const u32 *w, u32 n, u32 maxs,
		    const struct qcore_band_view *b)
{
	u32 i, round, any = 0;

	for (i = 0; i < n; i++)
		any |= b[i].backlog_pkts != 0;
	if (!any)
		return -1;
	for (round = 0; round < 1000000; round++) {
		int refilled = 0;

		for (i = 0; i < n; i++)
			if (b[i].backlog_pkts && b[i].head_len < credit[i])
				return (int)i;
		for (i = 0; i < n; i++) {
			if (credit[i] < maxs) {
				credit[i] += w[i];
				refilled = 1;
			}
		}
		if (!refilled)
			break;
	}
	for (i = 0; i < n; i++)
		if (b[i].backlog_pkts)
			return (int)i;
	return -1;
}

static void test_wfq_matches_fig2_round_by_round(void)
{
	struct qcore_band_view b[QCORE_MAX_BANDS];
	struct wfq_vars v;
	u32 ref[QCORE_MAX_BANDS], w[QCORE_MAX_BANDS];
	u32 trial, step, i, mismatches = 0, oversize = 0, refill_steps = 0;

	lcg_state = 99;
	for (trial = 0; trial < 200; trial++) {
		u32 n = 1 + lcg() % QCORE_MAX_BANDS;
		u32 maxs = 1 + lcg() % 4000;

		wfq_vars_init(&v);
		memset(ref, 0, sizeof(ref));
		for (i = 0; i < QCORE_MAX_BANDS; i++)
			w[i] = 1 + lcg() % 1600;
		for (step = 0; step < 300; step++) {
			struct qcore_deq d;
			int r;
			u32 before = 0;

			memset(b, 0, sizeof(b));
			for (i = 0; i < n; i++) {
				if (lcg() % 3) {
					b[i].backlog_pkts = 1;
					b[i].head_len = 40 + lcg() % 1461;
				}
				before += v.credit_bytes[i];
			}
			r = ref_fig2(ref, w, n, maxs, b);
			d = wfq_select(&v, w, n, maxs, b);
			if (r < 0) {
				mismatches += d.action != QCORE_DEQ_EMPTY;
				continue;
			}
			if (d.action != QCORE_DEQ_SERVE || d.band != (u32)r)
				mismatches++;
			for (i = 0; i < n; i++)
				mismatches += v.credit_bytes[i] != ref[i];
			oversize += b[r].head_len >= ref[r];
			for (i = 0; i < n; i++)
				refill_steps += v.credit_bytes[i] != 0 && before == 0;
			wfq_charge(&v, (u32)r, b[r].head_len);
			ref[r] = ref[r] > b[r].head_len ? ref[r] - b[r].head_len : 0;
		}
	}
	CHECK(mismatches == 0, "%u mismatches with Fig. 2", mismatches);
	CHECK(oversize > 0, "the oversize-head rule was exercised");
	CHECK(refill_steps > 0, "refills were exercised");
}

static void test_wfq_empty_initial_and_idempotent(void)
{
	struct qcore_band_view b[QCORE_MAX_BANDS];
	u32 w[QCORE_MAX_BANDS] = { 1001, 501 };
	struct wfq_vars v;
	struct qcore_deq d;

	wfq_vars_init(&v);
	memset(b, 0, sizeof(b));
	d = wfq_select(&v, w, 2, 3000, b);
	CHECK(d.action == QCORE_DEQ_EMPTY, "empty");
	CHECK(v.credit_bytes[0] == 0 && v.credit_bytes[1] == 0, "no refill when empty");
	/* Credits start at 0: a 1000-byte head of class 1 needs two refills
	 * (2 * 501 > 1000), class 0 (empty) gets the same two. */
	b[1].backlog_pkts = 1;
	b[1].head_len = 1000;
	d = wfq_select(&v, w, 2, 3000, b);
	CHECK(d.action == QCORE_DEQ_SERVE && d.band == 1, "band %u", d.band);
	CHECK(v.credit_bytes[0] == 2002 && v.credit_bytes[1] == 1002, "%u %u",
	      v.credit_bytes[0], v.credit_bytes[1]);
	/* Asking again without a send (a peek) changes nothing. */
	d = wfq_select(&v, w, 2, 3000, b);
	CHECK(d.band == 1 && v.credit_bytes[0] == 2002 && v.credit_bytes[1] == 1002,
	      "peek is idempotent");
	wfq_charge(&v, 1, 1000);
	CHECK(v.credit_bytes[1] == 2, "charged: %u", v.credit_bytes[1]);
	wfq_charge(&v, 1, 1000);
	CHECK(v.credit_bytes[1] == 0, "charge floors at 0");
	wfq_charge(&v, QCORE_MAX_BANDS, 1);	/* out of range: ignored */
}

static void test_wfq_maxs_caps_idle_credit(void)
{
	struct qcore_band_view b[QCORE_MAX_BANDS];
	u32 w[QCORE_MAX_BANDS] = { 1001, 126 };
	struct wfq_vars v;
	u32 k;

	wfq_vars_init(&v);
	memset(b, 0, sizeof(b));
	/* Class 1 alone, 1000-byte packets: 8 refills per packet; class 0 idle
	 * stops refilling at MaxS, ending in [MaxS, MaxS + W). */
	b[1].backlog_pkts = 1;
	b[1].head_len = 1000;
	for (k = 0; k < 20; k++) {
		struct qcore_deq d = wfq_select(&v, w, 2, 3000, b);

		CHECK(d.band == 1, "class 1 served");
		wfq_charge(&v, 1, 1000);
	}
	CHECK(v.credit_bytes[0] >= 3000 && v.credit_bytes[0] < 3000 + 1001,
	      "idle credit %u capped", v.credit_bytes[0]);
	/* Oversize head: W 1, MaxS 10 and a 1500-byte head never fit; it is
	 * served anyway once the credits are capped, and the charge floors. */
	wfq_vars_init(&v);
	w[0] = 1;
	b[0].backlog_pkts = 1;
	b[0].head_len = 1500;
	b[1].backlog_pkts = 0;
	{
		struct qcore_deq d = wfq_select(&v, w, 1, 10, b);

		CHECK(d.action == QCORE_DEQ_SERVE && d.band == 0, "oversize served");
		CHECK(v.credit_bytes[0] == 10, "refilled to the cap: %u", v.credit_bytes[0]);
		wfq_charge(&v, 0, 1500);
		CHECK(v.credit_bytes[0] == 0, "floored");
	}
}

/* Always-backlogged classes of 1000-byte packets through the ops. */
static void wfq_greedy_service(const char *disc, const char *const *kv,
			       u32 nclasses, u32 rounds, u64 *bytes,
			       u32 *max_gap0)
{
	u32 k, c, len, since0 = 0;
	int band;

	CHECK(sim_init(&sim_a, disc, kv, 1) == 0, "init %s", disc);
	memset(bytes, 0, sizeof(u64) * QCORE_MAX_BANDS);
	*max_gap0 = 0;
	for (k = 0; k < rounds; k++) {
		for (c = 0; c < nclasses; c++)
			while (sim_a.q[c].n < 3)
				sim_a.q[c].len[(sim_a.q[c].head + sim_a.q[c].n++) % SIM_CAP] = 1000,
				sim_a.q[c].bytes += 1000;
		band = sim_send(&sim_a, k, &len);
		CHECK(band >= 0, "served");
		if (band < 0)
			return;
		bytes[band] += len;
		if (band == 0) {
			if (since0 > *max_gap0)
				*max_gap0 = since0;
			since0 = 0;
		} else {
			since0++;
		}
	}
}

static void test_wfq_service_proportional_low_jitter(void)
{
	static const char *const kv[] = { "weights_bytes=1001:501:251:126", NULL };
	static const char *const kv_eq[] = { "weights_bytes=1001", "classes=3", NULL };
	u64 bytes[QCORE_MAX_BANDS], total;
	u32 gap, c;

	wfq_greedy_service("wred", kv, 4, 15000, bytes, &gap);
	total = bytes[0] + bytes[1] + bytes[2] + bytes[3];
	for (c = 0; c < 4; c++) {
		double share = (double)bytes[c] / (double)total;
		double want = (double)(8 >> c) / 15.0;

		CHECK(fabs(share - want) < 0.01 * want, "class %u share %.4f want %.4f",
		      c, share, want);
	}
	/* Low jitter: the cycle is 001001200100123, so class 0 (8 of every 15
	 * packets) never waits for more than 3 other packets; serving whole
	 * quanta in turn (DRR-like: 0x8 1x4 2x2 3) would make it wait 7. */
	CHECK(gap <= 3, "class 0 max gap %u packets", gap);
	/* Equal quanta: round robin, 1/3 each exactly over whole rounds. */
	wfq_greedy_service("rbaqm", kv_eq, 3, 3000, bytes, &gap);
	CHECK(bytes[0] == 1000000 && bytes[1] == 1000000 && bytes[2] == 1000000,
	      "%llu %llu %llu", (unsigned long long)bytes[0],
	      (unsigned long long)bytes[1], (unsigned long long)bytes[2]);
	CHECK(gap == 2, "round robin gap %u", gap);
}

static void test_wfq_lists(void)
{
	u32 one[QCORE_MAX_BANDS] = { 7 };
	u32 three[QCORE_MAX_BANDS] = { 1, 2, 3 };
	u32 none[QCORE_MAX_BANDS] = { 0 };
	char err[128];

	CHECK(wfq_list_count(one) == 1 && wfq_list_at(one, 5) == 7, "single applies to all");
	CHECK(wfq_list_count(three) == 3 && wfq_list_at(three, 2) == 3, "full list");
	CHECK(wfq_check_list("q_pkts", one, 4, err, sizeof(err)) == 0, "one ok");
	CHECK(wfq_check_list("q_pkts", three, 3, err, sizeof(err)) == 0, "n ok");
	CHECK(wfq_check_list("q_pkts", three, 4, err, sizeof(err)) == -1, "3 of 4");
	CHECK(strcmp(err, "q_pkts: expected 1 or 4 values (classes), got 3") == 0, "%s", err);
	CHECK(wfq_check_list("q_pkts", none, 2, err, sizeof(err)) == -1, "empty list");
}

/* ======================================================================
 * RED
 * ==================================================================== */

static void test_red_defaults_and_checks(void)
{
	struct red_params a, b;
	char err[256];

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	CHECK(qcore_params_defaults(&red_ops, &a, err, sizeof(err)) == 0, "%s", err);
	red_params_init(&b);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0, "table defaults = red_params_init");
	CHECK(qcore_find("red") == &red_ops, "registered");
	CHECK(red_ops.check_params(&a, err, sizeof(err)) == 0, "defaults valid");
	a.min_pkts = 15;
	CHECK(red_ops.check_params(&a, err, sizeof(err)) == -1, "min = max");
	CHECK(strcmp(err, "min_pkts: must be below max_pkts (15), got 15") == 0, "%s", err);
	CHECK(qcore_params_set(&red_ops, &a, "w_q", "0", err, sizeof(err)) == -1, "w_q 0");
	CHECK(qcore_params_set(&red_ops, &a, "max_p", "1.5", err, sizeof(err)) == -1, "max_p");
	CHECK(red_ops.nbands(&b) == 1, "one band");
}

static void test_red_fixed_point_helpers(void)
{
	u64 w = red_ppm_to_q32(2000), avg = 0;
	double ref = 0, worst = 0;
	u32 k;

	CHECK(w == 8589934, "w_q 0.002 = %llu", (unsigned long long)w);
	CHECK(red_ppm_to_q32(1000000) == RED_ONE_Q32, "1");
	CHECK(red_mul_q32(~0ULL, RED_ONE_Q32) == ~0ULL, "x * 1");
	CHECK(red_mul_q32(~0ULL, 1ULL << 31) == (~0ULL >> 1), "x / 2 exact");
	/* EWMA of a step to 10 packets against the real-valued recursion. */
	for (k = 0; k < 5000; k++) {
		avg = red_ewma(avg, 10ULL << RED_AVG_SHIFT, w);
		ref += 0.002 * (10 - ref);
		if (fabs(avg / 1048576.0 - ref) > worst)
			worst = fabs(avg / 1048576.0 - ref);
	}
	CHECK(worst < 0.001, "EWMA error %.6f packets", worst);
	for (k = 0; k < 5000; k++)
		avg = red_ewma(avg, 0, w);
	CHECK(avg < (1ULL << RED_AVG_SHIFT) / 1000, "decays toward 0: %llu",
	      (unsigned long long)avg);
	/* (1 - w)^m by squaring against pow(). */
	for (k = 0; k < 40; k++) {
		u64 m = (u64)k * k * 37;
		double want = pow(1 - (double)w / Q32, (double)m);
		double got = red_pow_q32(RED_ONE_Q32 - w, m) / Q32;

		CHECK(fabs(got - want) < 1e-7, "m=%llu got %.10f want %.10f",
		      (unsigned long long)m, got, want);
	}
	CHECK(red_pow_q32(0, 0) == RED_ONE_Q32 && red_pow_q32(0, 3) == 0, "0^m");
	/* Uniformisation p_a = p_b / (1 - count p_b). */
	CHECK(red_uniform_q32(0, 5) == 0, "p_b 0");
	CHECK(red_uniform_q32(1ULL << 30, 0) == 1ULL << 30, "count 0: p_a = p_b");
	CHECK(red_uniform_q32(1ULL << 30, 1) == qcore_frac_q32(1, 3), "0.25/0.75");
	CHECK(red_uniform_q32(1ULL << 30, 2) == 1ULL << 31, "0.25/0.5");
	CHECK(red_uniform_q32(1ULL << 30, 3) == RED_ONE_Q32, "(count+1) p_b = 1");
	CHECK(red_uniform_q32(1, 0xffffffffLL) == RED_ONE_Q32, "huge count");
}

/* A u64 below 2^bits (bits 1..64), from the test generator. */
static u64 lcg_bits(u32 bits)
{
	u64 x = ((u64)lcg() << 32) | lcg();

	return bits >= 64 ? x : x & ((1ULL << bits) - 1);
}

/* red_frac_q32's divisions give qcore_frac_q32's long division, bit for bit. */
static void test_red_frac_q32_matches_long_division(void)
{
	static const u64 dens[] = { 1, 2, 3, 1000000, 0xffffffffULL, 1ULL << 32,
		(1ULL << 32) + 1, 1000000000000ULL, (1ULL << 48) - 1, 1ULL << 48,
		~0ULL };
	u32 k, bad = 0;

	for (k = 0; k < ARRAY_SIZE(dens); k++) {
		u64 d = dens[k];

		bad += red_frac_q32(0, d) != qcore_frac_q32(0, d);
		bad += red_frac_q32(d - 1, d) != qcore_frac_q32(d - 1, d);
		bad += red_frac_q32(d / 2, d) != qcore_frac_q32(d / 2, d);
		bad += red_frac_q32(d / 3, d) != qcore_frac_q32(d / 3, d);
	}
	lcg_state = 11;
	for (k = 0; k < 300000; k++) {
		u64 den = lcg_bits(1 + k % 64), num;

		if (!den)
			den = 1;
		num = lcg_bits(1 + lcg() % 64) % den;
		if (red_frac_q32(num, den) != qcore_frac_q32(num, den)) {
			if (!bad)
				printf("  %llu / %llu\n", (unsigned long long)num,
				       (unsigned long long)den);
			bad++;
		}
	}
	CHECK(bad == 0, "%u mismatches", bad);
}

/*
 * F&J RED for a fabricated constant backlog q with w_q = 1 (avg = q): the
 * decisions, draw by draw, from a copy of the generator.  p_b is the real
 * formula floored to Q0.32; p_a = p_b / (1 - count p_b) is then computed
 * exactly in integers (p_b 2^32 fits a u64).  Returns mismatches; *drops
 * and *draws count what the reference did.
 */
static u32 red_against_reference(const char *const *kv, double min, double max,
				 double max_p, int gentle, u32 q, u32 n,
				 u32 *drops, u32 *draws)
{
	struct qcore_rng ref_rng;
	u32 k, bad = 0;
	u64 count = 0;

	CHECK(sim_init(&sim_a, "red", kv, 42) == 0, "init");
	ref_rng = sim_a.rng;
	*drops = *draws = 0;
	for (k = 0; k < n; k++) {
		struct qcore_decision d = enq_with_backlog(&sim_a, k, 1000, 0, q);
		double avg = q, p_b;
		u64 p_bq, p_a;
		int drop = 0;

		if (avg < min) {
			count = 0;
		} else if (avg >= (gentle ? 2 * max : max)) {
			count = 0;
			drop = 1;
		} else {
			p_b = avg < max ? max_p * (avg - min) / (max - min) :
			      max_p + (1 - max_p) * (avg - max) / max;
			p_bq = (u64)floor(p_b * Q32);
			if (p_bq == 0)
				p_a = 0;
			else if ((count + 1) * p_bq >= (1ULL << 32))
				p_a = 1ULL << 32;
			else
				p_a = (p_bq << 32) / ((1ULL << 32) - count * p_bq);
			if (p_a >= (1ULL << 32)) {
				drop = 1;
			} else if (p_a > 0) {
				(*draws)++;
				drop = qcore_rng_u32(&ref_rng) < p_a;
			}
			count = drop ? 0 : count + 1;
		}
		*drops += drop;
		bad += (d.verdict == QCORE_DROP) != drop;
		bad += drop && d.reason != QCORE_REASON_AQM;
	}
	bad += ref_rng.state != sim_a.rng.state;	/* same number of draws */
	return bad;
}

static void test_red_linear_region_and_uniformisation(void)
{
	static const char *const kv[] = { "w_q=1", "min_pkts=5", "max_pkts=15",
		"max_p=0.1", "limit_pkts=1000", NULL };
	u32 drops, draws, bad;

	/* q = 10: p_b = 0.05. */
	bad = red_against_reference(kv, 5, 15, 0.1, 1, 10, 20000, &drops, &draws);
	CHECK(bad == 0, "%u mismatches", bad);
	CHECK(draws > 0, "draws made");
	/* Uniformisation: the mean gap is (1/p_b + 1) / 2 = 10.5, not the
	 * geometric 1/p_b = 20. */
	CHECK(fabs(20000.0 / drops - 10.5) < 0.5, "mean gap %.2f", 20000.0 / drops);
	/* q = 5 = min_pkts: p_b = 0, count grows, no draw, no drop. */
	bad = red_against_reference(kv, 5, 15, 0.1, 1, 5, 1000, &drops, &draws);
	CHECK(bad == 0 && drops == 0 && draws == 0, "p_b 0: %u %u %u", bad, drops, draws);
	/* Below min: count -1, no draws. */
	bad = red_against_reference(kv, 5, 15, 0.1, 1, 4, 1000, &drops, &draws);
	CHECK(bad == 0 && drops == 0 && draws == 0, "below min");
}

static void test_red_uniform_gap_bounded(void)
{
	static const char *const kv[] = { "w_q=1", "min_pkts=0", "max_pkts=10",
		"max_p=0.2", "limit_pkts=1000", NULL };
	u32 k, gap = 0, max_gap = 0, drops = 0, hist[12] = { 0 };

	/* q = 5: p_b = 0.1, so a drop comes at most 10 packets after the last
	 * (count p_b reaches 1), and gaps 1..10 are equally likely. */
	CHECK(sim_init(&sim_a, "red", kv, 3) == 0, "init");
	for (k = 0; k < 50000; k++) {
		struct qcore_decision d = enq_with_backlog(&sim_a, k, 1000, 0, 5);

		gap++;
		if (d.verdict == QCORE_DROP) {
			if (gap > max_gap)
				max_gap = gap;
			hist[gap < 11 ? gap : 11]++;
			gap = 0;
			drops++;
		}
	}
	CHECK(max_gap == 10, "max gap %u", max_gap);
	for (k = 1; k <= 10; k++)
		CHECK(fabs(hist[k] / (double)drops - 0.1) < 0.02, "gap %u share %.3f",
		      k, hist[k] / (double)drops);
}

static void test_red_gentle_and_forced_regions(void)
{
	static const char *const gentle[] = { "w_q=1", "min_pkts=5", "max_pkts=15",
		"max_p=0.1", "limit_pkts=1000", NULL };
	static const char *const hard[] = { "w_q=1", "min_pkts=5", "max_pkts=15",
		"max_p=0.1", "limit_pkts=1000", "gentle=0", NULL };
	struct red_stats *st = (struct red_stats *)sim_a.stats;
	u32 drops, draws, bad;

	/* q = 20 in the gentle region: p_b = 0.1 + 0.9 * 5/15 = 0.4. */
	bad = red_against_reference(gentle, 5, 15, 0.1, 1, 20, 5000, &drops, &draws);
	CHECK(bad == 0 && draws > 0, "gentle: %u mismatches", bad);
	CHECK(drops > 5000 / 3 && drops < 5000 * 3 / 4, "gentle drops %u", drops);
	/* q = 30 = 2 max: forced, every packet, no draws. */
	bad = red_against_reference(gentle, 5, 15, 0.1, 1, 30, 100, &drops, &draws);
	CHECK(bad == 0 && drops == 100 && draws == 0, "forced at 2 max");
	CHECK(st->forced == 100 && st->drops[QCORE_REASON_AQM] == 100, "forced stats");
	/* gentle=0: forced from max_pkts. */
	bad = red_against_reference(hard, 5, 15, 0.1, 0, 15, 100, &drops, &draws);
	CHECK(bad == 0 && drops == 100 && draws == 0, "forced at max without gentle");
	bad = red_against_reference(hard, 5, 15, 0.1, 0, 14, 3000, &drops, &draws);
	CHECK(bad == 0 && draws > 0, "linear just below max");
}

static void test_red_probability_one_edge(void)
{
	static const char *const kv[] = { "w_q=1", "min_pkts=0", "max_pkts=2",
		"max_p=1", "limit_pkts=1000", NULL };
	u32 drops, draws, bad;

	/* q = 1: p_b = 0.5: p_a = 0.5 (a draw), then 1 at count 1 (no draw):
	 * gaps of 1 or 2, so about 2000 / 1.5 drops and one draw per drop. */
	bad = red_against_reference(kv, 0, 2, 1.0, 1, 1, 2000, &drops, &draws);
	CHECK(bad == 0, "%u mismatches", bad);
	CHECK(drops >= 1000 && fabs(drops - 2000 / 1.5) < 70, "drops %u", drops);
	CHECK(draws <= drops + 1 && draws + 1 >= drops * 0.5, "draws %u", draws);
}

static void test_red_ecn_and_overflow(void)
{
	static const char *const ecn[] = { "w_q=1", "min_pkts=0", "max_pkts=2",
		"max_p=1", "limit_pkts=3", "ecn=1", NULL };
	struct red_stats *st = (struct red_stats *)sim_a.stats;
	struct qcore_decision d;
	u32 k, marks = 0;

	CHECK(sim_init(&sim_a, "red", ecn, 1) == 0, "init");
	/* q = 1, p_b = 0.5: early decisions mark instead of dropping. */
	for (k = 0; k < 100; k++) {
		d = enq_with_backlog(&sim_a, k, 1000, 0, 1);
		CHECK(d.verdict != QCORE_DROP, "no drop with ecn");
		marks += d.verdict == QCORE_MARK;
	}
	CHECK(marks >= 50 && st->marked == marks, "marks %u", marks);
	/* q = 4 = 2 max: forced drops stay drops with ecn. */
	d = enq_with_backlog(&sim_a, 200, 1000, 0, 4);
	CHECK(d.verdict == QCORE_DROP && d.reason == QCORE_REASON_AQM, "forced drop");
	/* A packet the AQM admits (q = 0 < min? min 0: p_b 0) but the limit
	 * refuses: overflow.  Use min 5 so q = 3 is below min. */
	{
		static const char *const kv[] = { "w_q=1", "min_pkts=5", "max_pkts=6",
			"limit_pkts=3", NULL };

		CHECK(sim_init(&sim_a, "red", kv, 1) == 0, "init");
		d = enq_with_backlog(&sim_a, 0, 1000, 0, 3);
		CHECK(d.verdict == QCORE_DROP && d.reason == QCORE_REASON_OVERFLOW, "overflow");
		d = enq_with_backlog(&sim_a, 1, 1000, 0, 2);
		CHECK(d.verdict == QCORE_QUEUE, "below the limit");
		CHECK(st->drops[QCORE_REASON_OVERFLOW] == 1 && st->queued == 1, "stats");
	}
}

static void test_red_idle_decay(void)
{
	static const char *const kv[] = { "w_q=0.5", "pkt_time_ns=1000",
		"min_pkts=100", "max_pkts=200", "limit_pkts=1000", NULL };
	static const char *const off[] = { "w_q=0.5", "min_pkts=100",
		"max_pkts=200", "limit_pkts=1000", NULL };
	struct red_vars *v = (struct red_vars *)sim_a.vars;
	u32 k, len;
	u64 before;

	CHECK(sim_init(&sim_a, "red", kv, 1) == 0, "init");
	for (k = 0; k < 4; k++)
		sim_enq(&sim_a, k, 1000, 0);	/* q 0,1,2,3 (first: idle, m=0) */
	before = v->avg;
	/* avg: 0 (idle arrival at t 0, m = 0), then 0.5, 1.25, 2.125 packets. */
	CHECK(before == 2228224, "avg %llu", (unsigned long long)before);
	for (k = 0; k < 4; k++)
		sim_send(&sim_a, 10, &len);	/* empty at t = 10 */
	CHECK(v->idle == 1 && v->idle_since_ns == 10, "idle since 10");
	/* Arrival at t = 3510: m = 3 packet times, avg *= 0.5^3, no EWMA step,
	 * and the partial 500 ns is kept. */
	sim_enq(&sim_a, 3510, 1000, 0);
	CHECK(v->avg == before / 8, "decayed %llu want %llu",
	      (unsigned long long)v->avg, (unsigned long long)before / 8);
	CHECK(v->idle == 0, "admitted: no longer idle");
	/* pkt_time_ns = 0: one ordinary step with q = 0. */
	CHECK(sim_init(&sim_a, "red", off, 1) == 0, "init");
	for (k = 0; k < 4; k++)
		sim_enq(&sim_a, k, 1000, 0);
	before = v->avg;
	for (k = 0; k < 4; k++)
		sim_send(&sim_a, 10, &len);
	sim_enq(&sim_a, 1000000, 1000, 0);
	CHECK(v->avg == before / 2, "one step: %llu", (unsigned long long)v->avg);
}

static void test_red_reset_and_no_draw_below_min(void)
{
	struct red_vars *v = (struct red_vars *)sim_a.vars;
	struct red_stats *st = (struct red_stats *)sim_a.stats;
	u64 state;
	u32 k;

	CHECK(sim_init(&sim_a, "red", NULL, 9) == 0, "init defaults");
	state = sim_a.rng.state;
	for (k = 0; k < 200; k++)
		enq_with_backlog(&sim_a, k, 1000, 0, 3);	/* avg -> 3 < 5 */
	CHECK(sim_a.rng.state == state, "no draw below min");
	CHECK(v->count == 0 && v->avg > 0, "count 0 below min");
	red_ops.reset(sim_a.params, sim_a.vars);
	CHECK(v->avg == 0 && v->count == 0 && v->idle == 1, "vars cleared");
	CHECK(st->queued == 200, "stats kept");
}

/* ======================================================================
 * WRED
 * ==================================================================== */

static void test_wred_defaults_and_checks(void)
{
	struct wred_params a, b;
	struct qcore_pkt pkt = { .cls = 4 };
	char err[256];

	memset(&a, 0, sizeof(a));
	CHECK(qcore_params_defaults(&wred_ops, &a, err, sizeof(err)) == 0, "%s", err);
	wred_params_init(&b);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0, "table defaults = wred_params_init");
	CHECK(wred_ops.check_params(&a, err, sizeof(err)) == 0, "defaults valid: %s", err);
	CHECK(wred_ops.nbands(&a) == 4, "4 classes");
	CHECK(wred_ops.check_pkt(&a, &pkt, err, sizeof(err)) == -1, "cls 4");
	CHECK(strcmp(err, "cls: must be below classes (4), got 4") == 0, "%s", err);
	pkt.cls = 3;
	CHECK(wred_ops.check_pkt(&a, &pkt, err, sizeof(err)) == 0, "cls 3");
	a.classes = 2;
	CHECK(wred_ops.check_params(&a, err, sizeof(err)) == -1, "4 weights for 2 classes");
	CHECK(strcmp(err, "weights_bytes: expected 1 or 2 values (classes), got 4") == 0,
	      "%s", err);
	CHECK(qcore_params_set(&wred_ops, &a, "q_pkts", "5:10:0", err, sizeof(err)) == -1,
	      "0 in a list");
}

static void test_wred_probability_is_backlog_over_q(void)
{
	static const char *const kv[] = { "classes=2", "q_pkts=10:20", "w_q=1",
		"weights_bytes=1001", NULL };
	struct wred_vars *v = (struct wred_vars *)sim_a.vars;
	struct qcore_rng ref;
	u32 k, q, bad = 0, draws = 0;

	CHECK(wred_prob_q32(5ULL << RED_AVG_SHIFT, 10) == 1ULL << 31, "5/10");
	CHECK(wred_prob_q32(10ULL << RED_AVG_SHIFT, 10) == RED_ONE_Q32, "10/10");
	CHECK(wred_prob_q32(0, 10) == 0, "0/10");
	/* The one division is qcore_frac_q32(B_w, q 2^20), bit for bit. */
	lcg_state = 13;
	for (k = 0; k < 200000; k++) {
		u32 qp = k & 1 ? 1 + lcg() % 1000000 : (lcg() | 1);
		u64 qa = (u64)qp << RED_AVG_SHIFT;
		u64 avg = k % 7 ? lcg_bits(1 + lcg() % 52) % (qa + 2) : qa - 1 - k % 3;
		u64 want = avg >= qa ? RED_ONE_Q32 : qcore_frac_q32(avg, qa);

		bad += wred_prob_q32(avg, qp) != want;
	}
	CHECK(bad == 0, "%u mismatches against the long division", bad);
	bad = 0;
	CHECK(sim_init(&sim_a, "wred", kv, 5) == 0, "init");
	ref = sim_a.rng;
	/* w_q = 1: B_w = b, P = b / q exactly, per class. */
	for (k = 0; k < 4000; k++) {
		u8 cls = (u8)(k & 1);
		u32 qmax = cls ? 20 : 10;
		struct qcore_decision d;
		double p;
		int drop;

		q = k % (qmax + 3);
		d = enq_with_backlog(&sim_a, k, 1000, cls, q);
		p = (double)q / qmax;
		if (p >= 1) {
			drop = 1;
		} else if (p > 0) {
			draws++;
			drop = qcore_rng_u32(&ref) < floor(p * Q32);
		} else {
			drop = 0;
		}
		bad += d.band != cls;
		bad += (d.verdict == QCORE_DROP) != (drop || q >= qmax);
		if (d.verdict == QCORE_DROP)
			bad += d.reason != (drop ? QCORE_REASON_AQM : QCORE_REASON_OVERFLOW);
	}
	CHECK(bad == 0 && draws > 0, "%u mismatches", bad);
	CHECK(ref.state == sim_a.rng.state, "draws only for 0 < P < 1");
	/* The default w_q 0.002 follows the real EWMA, per class. */
	CHECK(sim_init(&sim_a, "wred", NULL, 5) == 0, "init defaults");
	{
		double b0 = 0;

		for (k = 0; k < 3000; k++) {
			enq_with_backlog(&sim_a, k, 1000, 0, 8);
			b0 += 0.002 * (8 - b0);
		}
		CHECK(fabs(v->avg[0] / 1048576.0 - b0) < 0.001, "B_w %.5f want %.5f",
		      v->avg[0] / 1048576.0, b0);
		CHECK(v->avg[1] == 0, "other classes untouched");
	}
}

static void test_wred_hard_drop_and_ecn(void)
{
	static const char *const kv[] = { "classes=1", "q_pkts=4", "w_q=0.000001",
		"weights_bytes=1001", "ecn=1", NULL };
	static const char *const one[] = { "classes=1", "q_pkts=2", "w_q=1",
		"weights_bytes=1001", "ecn=1", NULL };
	struct wred_stats *st = (struct wred_stats *)sim_a.stats;
	struct qcore_decision d;
	u32 k;

	/* Tiny w_q: B_w ~ 0, no AQM; the 5th packet meets the hard limit. */
	CHECK(sim_init(&sim_a, "wred", kv, 1) == 0, "init");
	for (k = 0; k < 4; k++)
		CHECK(sim_enq(&sim_a, k, 1000, 0).verdict == QCORE_QUEUE, "queued %u", k);
	d = sim_enq(&sim_a, 4, 1000, 0);
	CHECK(d.verdict == QCORE_DROP && d.reason == QCORE_REASON_OVERFLOW, "hard drop at q");
	CHECK(st->dropped[0] == 1 && st->queued[0] == 4, "stats");
	/* ecn: P = 1 (B_w = q) marks... but the hard limit still drops. */
	CHECK(sim_init(&sim_a, "wred", one, 1) == 0, "init");
	d = enq_with_backlog(&sim_a, 0, 1000, 0, 1);	/* P = 0.5 */
	CHECK(d.verdict != QCORE_DROP, "ecn never drops early");
	d = enq_with_backlog(&sim_a, 1, 1000, 0, 2);	/* P = 1, b = q */
	CHECK(d.verdict == QCORE_DROP && d.reason == QCORE_REASON_OVERFLOW, "limit drops");
	for (k = 0; k < 50; k++)
		enq_with_backlog(&sim_a, 2 + k, 1000, 0, 1);
	CHECK(st->marked[0] > 10, "marks %llu", (unsigned long long)st->marked[0]);
}

/* ======================================================================
 * RB-AQM
 * ==================================================================== */

static void test_rbaqm_exp_against_libm(void)
{
	double worst = 0, worst_z = 0;
	u64 z;
	u32 k;

	/* A grid over [0, 24) and pseudo-random points, all in Q32.32. */
	lcg_state = 7;
	for (k = 0; k < 200000; k++) {
		double got, want;

		z = k < 100000 ? (u64)k * (24ULL << 32) / 100000 :
		    ((u64)(lcg() % 24) << 32) | ((u64)lcg() << 1 | (lcg() & 1));
		got = rbaqm_exp_neg_q32(z) / Q32;
		want = exp(-(double)z / Q32);
		if (fabs(got - want) > worst) {
			worst = fabs(got - want);
			worst_z = (double)z / Q32;
		}
	}
	printf("  exp(-z): max |error| %.3g (%.2f ulp of 2^-32) at z = %.6f\n",
	       worst, worst * Q32, worst_z);
	CHECK(worst < 1.0 / (1 << 28), "max error %.3g at %.6f", worst, worst_z);
	CHECK(rbaqm_exp_neg_q32(0) == RED_ONE_Q32, "e^0 = 1");
	CHECK(rbaqm_exp_neg_q32(23ULL << 32) == 0, "e^-23 -> 0");
	CHECK(rbaqm_exp_neg_q32(~0ULL) == 0, "huge z");
	CHECK(rbaqm_decay_q32(0, 100) == RED_ONE_Q32, "delta 0");
	CHECK(rbaqm_decay_q32(2300, 100) == 0, "delta = 23 tau");
	for (k = 1; k < 2000; k += 7) {
		double want = exp(-(double)k * 37 / 1000);
		double got = rbaqm_decay_q32((u64)k * 37, 1000) / Q32;

		CHECK(fabs(got - want) < 1e-8, "decay %u", k);
	}
}

/*
 * The RB-AQM arithmetic as first written, before the per-packet cost work:
 * e^-z with a 16-step loop over the fraction bits, delta / tau by division
 * and long division, shares by long division, every other class's rate
 * decayed with an exp.  The optimised code must give the same bits.
 */
static const u64 ref_exp_int[23] = {
	4294967296ULL, 1580030169, 581260615, 213833830, 78665070, 28939262,
	10646160, 3916503, 1440801, 530041, 194991, 71733, 26389, 9708, 3571,
	1314, 483, 178, 65, 24, 9, 3, 1,
};
static const u32 ref_exp_pow2[16] = {
	2605029347U, 3344923893U, 3790295335U, 4034748382U, 4162825044U,
	4228380000U, 4261543595U, 4278222805U, 4286586875U, 4290775039U,
	4292870656U, 4293918848U, 4294443040U, 4294705160U, 4294836226U,
	4294901760U,
};

static u64 ref_mul_round(u64 a, u64 b)
{
	if (a >= RED_ONE_Q32)
		return b;
	if (b >= RED_ONE_Q32)
		return a;
	return (a * b + (1ULL << 31)) >> 32;
}

static u64 ref_exp_neg_q32(u64 z)
{
	u64 n = z >> 32, r;
	u32 f = (u32)z, k;

	if (n >= 23)
		return 0;
	r = ref_exp_int[n];
	for (k = 0; k < 16; k++)
		if (f & (0x80000000U >> k))
			r = ref_mul_round(r, ref_exp_pow2[k]);
	return ref_mul_round(r, RED_ONE_Q32 - (f & 0xffffU));
}

static u64 ref_decay_q32(u64 delta, u64 tau)
{
	u64 n;

	if (delta == 0)
		return RED_ONE_Q32;
	if (delta >= 23 * tau)
		return 0;
	n = delta / tau;
	return ref_exp_neg_q32((n << 32) | qcore_frac_q32(delta - n * tau, tau));
}

static u64 ref_share(u64 s, u64 part, u64 total)
{
	if (!part || !total)
		return 0;
	if (part >= total)
		return s;
	return red_mul_q32(s, qcore_frac_q32(part, total));
}

static u64 ref_basic(const struct rbaqm_params *p, const struct rbaqm_vars *v, u32 j)
{
	u64 s_j = p->capacity_estimator == RBAQM_CAPACITY_EWMA ?
		  ref_share(p->rate_bps, v->ewma_bytes[j], v->ewma_total_bytes) :
		  ref_share(p->rate_bps, v->win_bytes[j], v->win_total_bytes);

	return s_j > v->min_bps[j] ? s_j : v->min_bps[j];
}

static u64 ref_capacity(const struct rbaqm_params *p, const struct rbaqm_vars *v,
			u32 i, u64 x_i, u64 now)
{
	u64 c_i = ref_basic(p, v, i), sum_w = 0, sum_x = 0, x_j;
	u32 j;

	if (!p->fair_share || x_i < c_i)
		return c_i;
	for (j = 0; j < p->classes; j++) {
		if (j == i)
			x_j = x_i;
		else if (!v->x_bps[j] || now <= v->last_arrival_ns[j])
			x_j = v->x_bps[j];
		else
			x_j = red_mul_q32(v->x_bps[j],
					  ref_decay_q32(now - v->last_arrival_ns[j], p->tau_ns));
		if (x_j >= ref_basic(p, v, j))
			sum_w += v->quantum_bytes[j];
		else
			sum_x = sum_x + x_j < sum_x ? ~0ULL : sum_x + x_j;
	}
	return ref_share(p->rate_bps > sum_x ? p->rate_bps - sum_x : 0,
			 v->quantum_bytes[i], sum_w);
}

static void test_rbaqm_exp_and_decay_match_reference(void)
{
	static const u64 taus[] = { 1, 7, 1000, 1000000, 40000000, 0xffffffffULL,
		1ULL << 32, 5000000000ULL, 1000000000000ULL };
	u32 k, bad_exp = 0, bad_decay = 0, bad_bound = 0;

	lcg_state = 17;
	for (k = 0; k < 400000; k++) {
		/* Small z (short gaps) most often, as in the packet path. */
		u64 z = k & 1 ? lcg_bits(1 + k % 37) : ((u64)(lcg() % 24) << 32) | lcg();
		u64 e = rbaqm_exp_neg_q32(z);

		bad_exp += e != ref_exp_neg_q32(z);
		/* The lower bound the fair share's shortcut relies on. */
		if (z < RED_ONE_Q32 - RBAQM_EXP_SLACK)
			bad_bound += e < RED_ONE_Q32 - RBAQM_EXP_SLACK - z;
	}
	for (k = 0; k < 300000; k++) {
		u64 tau = taus[k % ARRAY_SIZE(taus)];
		u64 delta = k % 5 ? lcg_bits(1 + lcg() % 46) : (u64)(k % 29) * tau + k % 3;

		bad_decay += rbaqm_decay_q32(delta, tau) != ref_decay_q32(delta, tau);
	}
	CHECK(bad_exp == 0, "exp: %u mismatches", bad_exp);
	CHECK(bad_bound == 0, "exp below 2^32 - z - slack: %u", bad_bound);
	CHECK(bad_decay == 0, "decay: %u mismatches", bad_decay);
}

/*
 * rbaqm_capacity_bps against the reference on random states, many near
 * the bottleneck boundary (x_j read at now within a few bit/s of c_j),
 * where the shortcut must fall back to the exact rate.
 */
static void test_rbaqm_capacity_matches_reference(void)
{
	static const char *const kv[][8] = {
		{ "classes=4", "fair_share=1", NULL },
		{ "classes=8", "weights_bytes=1:2:3:4:5:6:7:3000", "rate_bps=10000000000",
		  "tau_ns=5000000000", NULL },
		{ "classes=3", "weights_bytes=300:200:100", "capacity_estimator=ewma",
		  "tau_ns=1000", "rate_bps=1000", NULL },
		{ "classes=2", "weights_bytes=1001:501", "tau_ns=1", NULL },
	};
	struct rbaqm_params *p = (struct rbaqm_params *)sim_a.params;
	struct rbaqm_vars *v = (struct rbaqm_vars *)sim_a.vars;
	u32 c, k, j, bad = 0, near = 0;

	lcg_state = 19;
	for (c = 0; c < ARRAY_SIZE(kv); c++) {
		CHECK(sim_init(&sim_a, "rbaqm", kv[c], 1) == 0, "init %u", c);
		for (k = 0; k < 20000; k++) {
			u64 now = 1ULL << 40, want, got, x_i;
			u32 i = lcg() % p->classes;

			for (j = 0; j < p->classes; j++) {
				v->win_bytes[j] = lcg() % 4 ? lcg() % 100000 : 0;
				v->ewma_bytes[j] = lcg_bits(40);
			}
			v->win_total_bytes = v->ewma_total_bytes = 0;
			for (j = 0; j < p->classes; j++) {
				v->win_total_bytes += v->win_bytes[j];
				v->ewma_total_bytes += v->ewma_bytes[j];
			}
			v->basic_valid = 0;	/* the window was written behind its back */
			for (j = 0; j < p->classes; j++) {
				u64 delta = k % 3 ? lcg_bits(1 + lcg() % 40) : lcg() % 3;
				u64 cj = ref_basic(p, v, j), e;

				v->last_arrival_ns[j] = now - delta;
				e = ref_decay_q32(delta, p->tau_ns);
				if (lcg() % 2 && e) {
					/* x_j e within a few bit/s of c_j */
					v->x_bps[j] = (u64)((double)cj * Q32 / (double)e) +
						      lcg() % 7 - 3;
					near++;
				} else {
					v->x_bps[j] = lcg_bits(1 + lcg() % 44);
				}
			}
			x_i = k % 4 ? v->x_bps[i] : lcg_bits(36);
			want = ref_capacity(p, v, i, x_i, now);
			got = rbaqm_capacity_bps(p, v, i, x_i, now);
			bad += got != want;
			/* again, from the cached class capacities */
			bad += rbaqm_capacity_bps(p, v, i, x_i, now) != want;
		}
	}
	CHECK(near > 10000, "near-boundary cases %u", near);
	CHECK(bad == 0, "%u mismatches", bad);
}

static void test_rbaqm_defaults_and_checks(void)
{
	struct rbaqm_params a, b;
	struct rbaqm_vars *v = (struct rbaqm_vars *)sim_a.vars;
	char err[256];

	memset(&a, 0, sizeof(a));
	CHECK(qcore_params_defaults(&rbaqm_ops, &a, err, sizeof(err)) == 0, "%s", err);
	rbaqm_params_init(&b);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0, "table defaults = rbaqm_params_init");
	CHECK(rbaqm_ops.check_params(&a, err, sizeof(err)) == 0, "defaults valid: %s", err);
	a.u_ppm[1] = 800000;
	CHECK(rbaqm_ops.check_params(&a, err, sizeof(err)) == -1, "2 of 4 u");
	CHECK(strcmp(err, "u_ppm: expected 1 or 4 values (classes), got 2") == 0, "%s", err);
	CHECK(qcore_params_set(&rbaqm_ops, &a, "window_pkts", "257", err, sizeof(err)) == -1,
	      "window max");
	CHECK(sizeof(struct rbaqm_vars) <= sizeof(sim_a.vars), "vars fit");
	/* Derived at reset: M_i = W_i / sum W * S, u, k, gain. */
	CHECK(sim_init(&sim_a, "rbaqm", NULL, 1) == 0, "init");
	CHECK(v->min_bps[0] == 1001000000ULL / 1879 || v->min_bps[0] + 1 == 1001000000ULL / 1879 ||
	      v->min_bps[0] == 1001000000ULL / 1879 + 1, "M_0 %llu",
	      (unsigned long long)v->min_bps[0]);
	CHECK(llabs((long long)v->min_bps[3] - (long long)(126000000ULL / 1879)) <= 1, "M_3");
	CHECK(v->u_q32[3] == qcore_frac_q32(930000, 1000000), "u");
	CHECK(v->gain_q32 == 1ULL << 32, "gain 1");
	{
		static const char *const big[] = { "gain=2.5", NULL };

		CHECK(sim_init(&sim_a, "rbaqm", big, 1) == 0, "init");
		CHECK(v->gain_q32 == (5ULL << 31), "gain 2.5 in Q32.32");
	}
}

static void test_rbaqm_rate_estimator(void)
{
	static const char *const kv[] = { "classes=1", "weights_bytes=1001",
		"tau_ns=100000000", "limit_pkts=100000", "k=0", "gain=0", NULL };
	struct rbaqm_vars *v = (struct rbaqm_vars *)sim_a.vars;
	double x = 0, e;
	u32 k;

	CHECK(sim_init(&sim_a, "rbaqm", kv, 1) == 0, "init");
	/* First arrival: D = 0, x = 8 len / tau = 80 kb/s for 1000 bytes. */
	enq_with_backlog(&sim_a, 5000, 1000, 0, 0);
	CHECK(v->x_bps[0] == 80000, "x %llu", (unsigned long long)v->x_bps[0]);
	x = 80000;
	/* 1000 bytes every 4 ms = 2 Mb/s, against the real-valued estimator. */
	for (k = 1; k <= 400; k++) {
		enq_with_backlog(&sim_a, 5000 + (u64)k * 4000000, 1000, 0, 0);
		e = exp(-4e6 / 1e8);
		x = (1 - e) * 8000 * 1e9 / 4e6 + e * x;
	}
	/* Truncation toward 0 per step: a bias below 1/(1 - e) = 25 b/s. */
	CHECK(fabs(v->x_bps[0] - x) < 50, "x %llu want %.1f",
	      (unsigned long long)v->x_bps[0], x);
	CHECK(fabs(v->x_bps[0] - 2e6) < 0.001 * 2e6, "converged to 2 Mb/s: %llu",
	      (unsigned long long)v->x_bps[0]);
	/* Same-time arrival: the D -> 0 limit adds 8 len / tau. */
	{
		u64 before = v->x_bps[0];

		enq_with_backlog(&sim_a, 5000 + 400ULL * 4000000, 1000, 0, 0);
		CHECK(v->x_bps[0] == before + 80000, "D = 0 limit");
	}
	/* Long silence: e = 0, x = 8 len / D. */
	enq_with_backlog(&sim_a, 1000000000000ULL, 1000, 0, 0);
	CHECK(v->x_bps[0] < 10, "after silence %llu", (unsigned long long)v->x_bps[0]);
}

static void test_rbaqm_capacity_window_and_ewma(void)
{
	static const char *const kv[] = { "classes=2", "weights_bytes=300:100",
		"rate_bps=1000000", "window_pkts=4", "fair_share=0", NULL };
	static const char *const ewma[] = { "classes=2", "weights_bytes=300:100",
		"rate_bps=1000000", "capacity_estimator=ewma", "capacity_weight=0.1",
		"fair_share=0", NULL };
	struct rbaqm_params *p = (struct rbaqm_params *)sim_a.params;
	struct rbaqm_vars *v = (struct rbaqm_vars *)sim_a.vars;
	struct qcore_band_view after[QCORE_MAX_BANDS];
	u32 k;

	memset(after, 0, sizeof(after));
	CHECK(sim_init(&sim_a, "rbaqm", kv, 1) == 0, "init");
	/* Nothing served: S_i = 0, c_i = M_i = 750/250 kb/s. */
	CHECK(rbaqm_capacity_bps(p, v, 0, v->x_bps[0], 0) == 750000, "M_0");
	CHECK(rbaqm_capacity_bps(p, v, 1, v->x_bps[1], 0) == 250000, "M_1");
	/* Partial window: one class-1 packet served -> S_1 = S. */
	rbaqm_ops.dequeued(p, v, sim_a.stats, 1, 500, 0, after);
	CHECK(v->ring_count == 1, "partial window");
	CHECK(rbaqm_capacity_bps(p, v, 1, v->x_bps[1], 0) == 1000000, "S_1 = S");
	CHECK(rbaqm_capacity_bps(p, v, 0, v->x_bps[0], 0) == 750000, "c_0 = M_0 > S_0 = 0");
	/* Window of 4 full: 1 (500) + 0 (1500) x 3 -> S_1 = 500/5000 S. */
	for (k = 0; k < 3; k++)
		rbaqm_ops.dequeued(p, v, sim_a.stats, 0, 1500, 0, after);
	CHECK(v->ring_count == 4 && v->win_total_bytes == 5000, "full");
	CHECK(llabs((long long)rbaqm_capacity_bps(p, v, 0, v->x_bps[0], 0) - 900000) <= 1, "S_0 = 0.9 S: %llu",
	      (unsigned long long)rbaqm_capacity_bps(p, v, 0, v->x_bps[0], 0));
	CHECK(rbaqm_capacity_bps(p, v, 1, v->x_bps[1], 0) == 250000, "c_1 = M_1 > S_1 = 0.1 S");
	/* The oldest (class 1) leaves when a fifth packet is served. */
	rbaqm_ops.dequeued(p, v, sim_a.stats, 0, 1000, 0, after);
	CHECK(v->ring_count == 4 && v->win_bytes[1] == 0 && v->win_total_bytes == 5500,
	      "slid: %llu", (unsigned long long)v->win_total_bytes);
	CHECK(rbaqm_capacity_bps(p, v, 0, v->x_bps[0], 0) == 1000000, "S_0 = S");
	/* EWMA: shares converge to the served byte shares (3:1 here). */
	CHECK(sim_init(&sim_a, "rbaqm", ewma, 1) == 0, "init ewma");
	CHECK(rbaqm_capacity_bps(p, v, 1, v->x_bps[1], 0) == 250000, "ewma empty: M_1");
	for (k = 0; k < 400; k++)
		rbaqm_ops.dequeued(p, v, sim_a.stats, k % 4 == 0 ? 1 : 0, 1000, 0, after);
	CHECK(v->ring_count == 0, "window untouched in ewma mode");
	CHECK(fabs(rbaqm_capacity_bps(p, v, 0, v->x_bps[0], 0) - 750000.0) < 60000, "ewma S_0 %llu",
	      (unsigned long long)rbaqm_capacity_bps(p, v, 0, v->x_bps[0], 0));
	for (k = 0; k < 400; k++)
		rbaqm_ops.dequeued(p, v, sim_a.stats, 0, 1000, 0, after);
	CHECK(rbaqm_capacity_bps(p, v, 0, v->x_bps[0], 0) > 999000, "ewma all class 0");
	CHECK(rbaqm_capacity_bps(p, v, 1, v->x_bps[1], 0) == 250000, "ewma class 1 back to M_1");
}

static void test_rbaqm_fair_share(void)
{
	static const char *const kv[] = { "classes=3", "weights_bytes=200:100:100",
		"rate_bps=1000000", "tau_ns=1000000", NULL };
	struct rbaqm_params *p = (struct rbaqm_params *)sim_a.params;
	struct rbaqm_vars *v = (struct rbaqm_vars *)sim_a.vars;
	u64 c;

	CHECK(sim_init(&sim_a, "rbaqm", kv, 1) == 0, "init");
	/* M = 500k, 250k, 250k; nothing served so c_j = M_j. */
	v->x_bps[0] = 900000;	/* bottlenecked */
	v->x_bps[1] = 100000;	/* not */
	v->x_bps[2] = 400000;	/* bottlenecked */
	v->seen[0] = v->seen[1] = v->seen[2] = 1;
	/* F_0 = 200/300 (1 M - 100k) = 600k; F_2 = 300k. */
	c = rbaqm_capacity_bps(p, v, 0, v->x_bps[0], 0);
	CHECK(llabs((long long)c - 600000) <= 1, "F_0 %llu", (unsigned long long)c);
	c = rbaqm_capacity_bps(p, v, 2, v->x_bps[2], 0);
	CHECK(llabs((long long)c - 300000) <= 1, "F_2 %llu", (unsigned long long)c);
	CHECK(rbaqm_capacity_bps(p, v, 1, v->x_bps[1], 0) == 250000, "non-bottlenecked: M_1");
	/* Rates are read at now: 1 tau later class 1 holds x/e (classes 0
	 * and 2 counted a packet just now and keep theirs). */
	v->last_arrival_ns[0] = v->last_arrival_ns[2] = 1000000;
	c = rbaqm_capacity_bps(p, v, 0, v->x_bps[0], 1000000);
	CHECK(fabs((double)c - 2.0 / 3 * (1e6 - 1e5 * exp(-1.0))) < 2, "decayed %llu",
	      (unsigned long long)c);
	v->last_arrival_ns[0] = v->last_arrival_ns[2] = 0;
	/* Non-bottlenecked rates beyond S leave nothing. */
	v->x_bps[1] = 240000;
	v->x_bps[0] = 2000000;
	v->x_bps[2] = 2000000;
	p->rate_bps = 200000;	/* M shrink too, but the class view is state */
	CHECK(rbaqm_capacity_bps(p, v, 0, v->x_bps[0], 0) == 0, "S - sum x <= 0");
	/* fair_share = 0: c_i = max(M_i, S_i) whatever the rates. */
	p->rate_bps = 1000000;
	p->fair_share = 0;
	CHECK(rbaqm_capacity_bps(p, v, 0, v->x_bps[0], 0) == 500000, "fair_share off");
}

static void test_rbaqm_probability_update(void)
{
	static const char *const kv[] = { "classes=1", "weights_bytes=1001",
		"rate_bps=1000000", "u_ppm=500000", "k=0.01", "gain=1",
		"tau_ns=1000000000", "limit_pkts=100000", "rate_estimate=admitted", NULL };
	static const char *const offered[] = { "classes=1", "weights_bytes=1001",
		"rate_bps=1000000", "u_ppm=500000", "k=0.01", "gain=1",
		"tau_ns=1000000000", "limit_pkts=100000", "rate_estimate=offered", NULL };
	struct rbaqm_vars *v = (struct rbaqm_vars *)sim_a.vars;
	struct rbaqm_stats *st = (struct rbaqm_stats *)sim_a.stats;
	struct qcore_decision d;
	u64 state, p_before;

	CHECK(sim_init(&sim_a, "rbaqm", kv, 1) == 0, "init");
	/* c = M = S = 1 Mb/s, target u c = 500 kb/s.  First arrival: x with it
	 * counted is 8 len / tau = 8 kb/s: P stays 0 (clamped), no draw; it is
	 * admitted, so x keeps 8 kb/s.  Same-time arrivals (D = 0) add 8 kb/s. */
	state = sim_a.rng.state;
	CHECK(enq_with_backlog(&sim_a, 0, 1000, 0, 0).verdict == QCORE_QUEUE, "P 0");
	CHECK(v->p_q32[0] == 0 && sim_a.rng.state == state, "clamped at 0, no draw");
	CHECK(v->c_bps[0] == 1000000, "c = S");
	CHECK(v->x_bps[0] == 8000, "admitted counted: %llu", (unsigned long long)v->x_bps[0]);
	/* x above target by 0.2 S: up 0.2. */
	v->x_bps[0] = 700000 - 8000;
	p_before = v->p_q32[0];
	d = enq_with_backlog(&sim_a, 0, 1000, 0, 0);
	CHECK(fabs((double)(v->p_q32[0] - p_before) / Q32 - 0.2) < 1e-6,
	      "step %.6f", (double)(v->p_q32[0] - p_before) / Q32);
	CHECK(sim_a.rng.state != state, "0 < P < 1 draws");
	/* A dropped packet is not counted in x (admitted mode). */
	for (; d.verdict != QCORE_DROP; d = enq_with_backlog(&sim_a, 0, 1000, 0, 0))
		v->x_bps[0] = 692000;
	CHECK(v->x_bps[0] == 692000, "drop not counted: %llu", (unsigned long long)v->x_bps[0]);
	/* x = target exactly: U(0) = +1, the minimum step k. */
	v->x_bps[0] = 500000 - 8000;
	p_before = v->p_q32[0];
	enq_with_backlog(&sim_a, 0, 1000, 0, 0);
	CHECK(v->p_q32[0] - p_before == qcore_frac_q32(10000, 1000000), "k step up at err 0");
	/* Below target by 0.3 S: down by 0.3. */
	v->x_bps[0] = 200000 - 8000;
	v->p_q32[0] = p_before = 1ULL << 31;
	enq_with_backlog(&sim_a, 0, 1000, 0, 0);
	CHECK(fabs((double)(p_before - v->p_q32[0]) / Q32 - 0.3) < 1e-6, "down 0.3");
	/* Far above: clamps at 1, drops without drawing. */
	v->x_bps[0] = 50000000;
	enq_with_backlog(&sim_a, 0, 1000, 0, 0);
	CHECK(v->p_q32[0] == RED_ONE_Q32, "clamped at 1");
	state = sim_a.rng.state;
	d = enq_with_backlog(&sim_a, 0, 1000, 0, 0);
	CHECK(d.verdict == QCORE_DROP && d.reason == QCORE_REASON_AQM, "P 1 drops");
	CHECK(sim_a.rng.state == state, "P = 1 does not draw");
	CHECK(st->drops[QCORE_REASON_AQM] >= 2, "stats");
	/* rate_estimate=offered: dropped arrivals are counted too. */
	CHECK(sim_init(&sim_a, "rbaqm", offered, 1) == 0, "init offered");
	enq_with_backlog(&sim_a, 0, 1000, 0, 0);
	CHECK(v->x_bps[0] == 8000, "counted");
	v->x_bps[0] = 700000 - 8000;
	v->p_q32[0] = 0;
	enq_with_backlog(&sim_a, 0, 1000, 0, 0);
	CHECK(fabs((double)v->p_q32[0] / Q32 - 0.2) < 1e-6, "offered step %.6f",
	      (double)v->p_q32[0] / Q32);
	v->p_q32[0] = RED_ONE_Q32;
	v->x_bps[0] = 50000000;
	enq_with_backlog(&sim_a, 0, 1000, 0, 0);
	CHECK(v->x_bps[0] == 50000000 + 8000, "dropped packets count too");
}

/*
 * Open loop: an unresponsive source at twice the link rate.  Counting the
 * admitted packets, P settles near 1 - u S / offered and the admitted rate
 * near u S (Scenario 2's throttling); counting every arrival, P -> 1.
 */
static void test_rbaqm_open_loop_unresponsive(void)
{
	static const char *const kv[] = { "classes=1", "weights_bytes=1001",
		"limit_pkts=100000", "rate_estimate=admitted", NULL };
	static const char *const offered[] = { "classes=1", "weights_bytes=1001",
		"limit_pkts=100000", "rate_estimate=offered", NULL };
	struct rbaqm_vars *v = (struct rbaqm_vars *)sim_a.vars;
	double admitted = 0, p_sum = 0;
	u32 k, n = 0;

	CHECK(sim_init(&sim_a, "rbaqm", kv, 2) == 0, "init");
	/* 1000 bytes every 4 ms = 2 Mb/s into the default 1 Mb/s link. */
	for (k = 0; k < 20000; k++) {
		struct qcore_decision d = enq_with_backlog(&sim_a, (u64)k * 4000000, 1000, 0, 0);

		if (k >= 10000) {
			admitted += d.verdict != QCORE_DROP;
			p_sum += v->p_q32[0] / Q32;
			n++;
		}
	}
	admitted = admitted * 8000 / (n * 0.004);
	printf("  open loop: admitted %.0f b/s (u S = 930000), mean P %.3f\n",
	       admitted, p_sum / n);
	CHECK(fabs(admitted - 930000) < 0.07 * 930000, "admitted %.0f", admitted);
	CHECK(fabs(p_sum / n - (1 - 0.93 / 2)) < 0.05, "P %.3f", p_sum / n);
	CHECK(sim_init(&sim_a, "rbaqm", offered, 2) == 0, "init offered");
	for (k = 0; k < 2000; k++)
		enq_with_backlog(&sim_a, (u64)k * 4000000, 1000, 0, 0);
	CHECK(v->p_q32[0] == RED_ONE_Q32, "offered: P -> 1");
}

static void test_rbaqm_ecn_and_overflow(void)
{
	static const char *const kv[] = { "classes=2", "weights_bytes=1001",
		"rate_bps=1000", "limit_pkts=3", "ecn=1", NULL };
	static const char *const low[] = { "classes=2", "weights_bytes=1001",
		"rate_bps=1000000000", "limit_pkts=3", NULL };
	struct rbaqm_stats *st = (struct rbaqm_stats *)sim_a.stats;
	struct qcore_decision d;
	u32 k, marks = 0;

	/* A 1 kb/s link: P climbs to 1 within a few arrivals; ecn marks. */
	CHECK(sim_init(&sim_a, "rbaqm", kv, 1) == 0, "init");
	for (k = 0; k < 20; k++) {
		d = enq_with_backlog(&sim_a, (u64)k * 1000, 1000, 1, 0);
		CHECK(d.verdict != QCORE_DROP && d.band == 1, "no early drop with ecn");
		marks += d.verdict == QCORE_MARK;
	}
	CHECK(marks > 10 && st->marked[1] == marks, "marks %u", marks);
	d = enq_with_backlog(&sim_a, 30000, 1000, 1, 3);
	CHECK(d.verdict == QCORE_DROP && d.reason == QCORE_REASON_OVERFLOW, "limit drops");
	/* A fast link: P = 0, only the per-class limit drops. */
	CHECK(sim_init(&sim_a, "rbaqm", low, 1) == 0, "init");
	for (k = 0; k < 3; k++)
		CHECK(sim_enq(&sim_a, k, 1000, 0).verdict == QCORE_QUEUE, "queued");
	CHECK(sim_enq(&sim_a, 4, 1000, 1).verdict == QCORE_QUEUE, "other class has room");
	d = sim_enq(&sim_a, 5, 1000, 0);
	CHECK(d.verdict == QCORE_DROP && d.reason == QCORE_REASON_OVERFLOW && d.band == 0,
	      "per-class limit");
	CHECK(st->dropped[0] == 1 && st->drops[QCORE_REASON_OVERFLOW] == 1, "stats");
}

/*
 * Closed-loop toy model: class c carries flows[c] TCP-like flows with
 * 1000-byte packets, each paced at cwnd / RTT (RTT 40 ms, +-50% jitter per
 * packet).  Congestion avoidance is ACK-clocked: every packet of the flow
 * the link serves adds 1/cwnd; a dropped or marked packet halves cwnd, at
 * most once per RTT, down to 1/64 of a packet, so that below one packet
 * cwnd stands for TCP's timeout backoff, undone by doubling per packet
 * served.
 * The link serves at s_bps through the discipline.  Second-half results:
 * per-class served and offered (arrival) bits, the mean backlog (packets)
 * and the utilisation.
 */
#define TOY_MAX_FLOWS 64

struct toy_result {
	double served[QCORE_MAX_BANDS], offered[QCORE_MAX_BANDS];
	double mean_backlog, utilisation;
};

/* Flow ids of the packets in each band, in the adapter's FIFO order. */
static u8 toy_fifo[QCORE_MAX_BANDS][SIM_CAP];

static void aimd_toy(const char *disc, const char *const *kv, u32 nclasses,
		     const u32 *flows, double s_bps, double seconds,
		     struct toy_result *res)
{
	const double rtt = 0.04, pkt_bits = 8000;
	double cwnd[TOY_MAX_FLOWS], next_send[TOY_MAX_FLOWS], last_cut[TOY_MAX_FLOWS];
	u8 cls[TOY_MAX_FLOWS];
	double link_free = 0, t = 0, half = seconds / 2, backlog_area = 0;
	double busy = 0;
	u32 c, f, nflows = 0, backlog = 0;

	memset(res, 0, sizeof(*res));
	CHECK(sim_init(&sim_a, disc, kv, 11) == 0, "init %s", disc);
	lcg_state = 2024;
	for (c = 0; c < nclasses; c++)
		for (f = 0; f < flows[c] && nflows < TOY_MAX_FLOWS; f++, nflows++) {
			cls[nflows] = (u8)c;
			cwnd[nflows] = 2;
			next_send[nflows] = (lcg() % 1000) * 1e-5;
			last_cut[nflows] = -1;
		}
	while (t < seconds) {
		/* Next event: the earliest send, or the link finishing a packet. */
		u32 who = TOY_MAX_FLOWS;
		double when = link_free > t && backlog ? link_free : 1e30;

		for (f = 0; f < nflows; f++)
			if (next_send[f] < when) {
				when = next_send[f];
				who = f;
			}
		if (t >= half)
			backlog_area += backlog * (when - t);
		t = when;
		if (who < TOY_MAX_FLOWS) {
			u32 at = sim_a.q[cls[who]].head + sim_a.q[cls[who]].n;
			struct qcore_decision d = sim_enq(&sim_a, (u64)(t * 1e9), 1000,
							  cls[who]);

			if (d.verdict != QCORE_DROP)
				toy_fifo[cls[who]][at % SIM_CAP] = (u8)who;
			if (t >= half)
				res->offered[cls[who]] += pkt_bits;
			if (d.verdict != QCORE_QUEUE && t - last_cut[who] >= rtt) {
				cwnd[who] = cwnd[who] > 1.0 / 32 ? cwnd[who] / 2 : 1.0 / 64;
				last_cut[who] = t;
			}
			next_send[who] = t + rtt / cwnd[who] * (0.5 + (lcg() % 1000) / 1000.0);
		}
		backlog = 0;
		for (c = 0; c < nclasses; c++)
			backlog += sim_a.q[c].n;
		if (link_free <= t && backlog) {
			u32 len, head[QCORE_MAX_BANDS];
			int band;

			for (c = 0; c < nclasses; c++)	/* each band's head flow */
				head[c] = toy_fifo[c][sim_a.q[c].head];
			band = sim_send(&sim_a, (u64)(t * 1e9), &len);
			if (band >= 0) {
				f = head[band];
				cwnd[f] = cwnd[f] < 1 ? cwnd[f] * 2 : cwnd[f] + 1 / cwnd[f];
				link_free = t + len * 8 / s_bps;
				if (t >= half) {
					res->served[band] += len * 8;
					busy += len * 8 / s_bps;
				}
				backlog--;
			}
		}
	}
	res->mean_backlog = backlog_area / (seconds - half);
	res->utilisation = busy / (seconds - half);
}

static void test_rbaqm_closed_loop_converges_and_shares_by_weight(void)
{
	static const char *const kv[] = { "rate_bps=10000000", "limit_pkts=1000", NULL };
	static const u32 flows[] = { 4, 4, 4, 4 };
	struct toy_result rb, wr;
	double total = 0, want;
	u32 c;

	/* Defaults but a 10 Mb/s link (at 1 Mb/s the toy's flows sit at a
	 * fraction of a packet per RTT): W 8:4:2:1, u 0.93, fair share. */
	aimd_toy("rbaqm", kv, 4, flows, 1e7, 200, &rb);
	for (c = 0; c < 4; c++)
		total += rb.served[c];
	printf("  rbaqm toy: shares %.3f %.3f %.3f %.3f, arrivals/S %.3f %.3f %.3f %.3f, util %.3f, backlog %.2f pkts\n",
	       rb.served[0] / total, rb.served[1] / total, rb.served[2] / total,
	       rb.served[3] / total, rb.offered[0] / 1e9, rb.offered[1] / 1e9,
	       rb.offered[2] / 1e9, rb.offered[3] / 1e9, rb.utilisation, rb.mean_backlog);
	for (c = 0; c < 4; c++) {
		/* Every class bottlenecked: c_i = F_i = W_i / sum W * S.  Service
		 * in proportion to W ... */
		want = (double)(8 >> c) / 15.0;
		CHECK(fabs(rb.served[c] / total - want) < 0.2 * want,
		      "class %u share %.3f want %.3f", c, rb.served[c] / total, want);
		/* ... and each class's arrival rate near u_i c_i = 0.93 F_i. */
		want = 0.93 * 1e7 * (8 >> c) / 15.0;
		CHECK(fabs(rb.offered[c] / 100 - want) < 0.25 * want,
		      "class %u arrivals %.0f b/s want %.0f", c, rb.offered[c] / 100, want);
	}
	CHECK(rb.utilisation > 0.7 && rb.utilisation < 0.95, "utilisation %.3f",
	      rb.utilisation);
	/* Rate-based control needs no standing backlog; WRED (q = 10) does to
	 * signal at all (rbaqm Fig. 5 vs 7), and its shares drift from W. */
	aimd_toy("wred", NULL, 4, flows, 1e7, 200, &wr);
	total = 0;
	for (c = 0; c < 4; c++)
		total += wr.served[c];
	printf("  wred toy:  shares %.3f %.3f %.3f %.3f, util %.3f, backlog %.2f pkts\n",
	       wr.served[0] / total, wr.served[1] / total, wr.served[2] / total,
	       wr.served[3] / total, wr.utilisation, wr.mean_backlog);
	CHECK(rb.mean_backlog < 3 && rb.mean_backlog < wr.mean_backlog / 2,
	      "backlog rbaqm %.2f wred %.2f", rb.mean_backlog, wr.mean_backlog);
}

int main(void)
{
	RUN(test_wfq_matches_fig2_round_by_round);
	RUN(test_wfq_empty_initial_and_idempotent);
	RUN(test_wfq_maxs_caps_idle_credit);
	RUN(test_wfq_service_proportional_low_jitter);
	RUN(test_wfq_lists);
	RUN(test_red_defaults_and_checks);
	RUN(test_red_fixed_point_helpers);
	RUN(test_red_frac_q32_matches_long_division);
	RUN(test_red_linear_region_and_uniformisation);
	RUN(test_red_uniform_gap_bounded);
	RUN(test_red_gentle_and_forced_regions);
	RUN(test_red_probability_one_edge);
	RUN(test_red_ecn_and_overflow);
	RUN(test_red_idle_decay);
	RUN(test_red_reset_and_no_draw_below_min);
	RUN(test_wred_defaults_and_checks);
	RUN(test_wred_probability_is_backlog_over_q);
	RUN(test_wred_hard_drop_and_ecn);
	RUN(test_rbaqm_exp_against_libm);
	RUN(test_rbaqm_exp_and_decay_match_reference);
	RUN(test_rbaqm_capacity_matches_reference);
	RUN(test_rbaqm_defaults_and_checks);
	RUN(test_rbaqm_rate_estimator);
	RUN(test_rbaqm_capacity_window_and_ewma);
	RUN(test_rbaqm_fair_share);
	RUN(test_rbaqm_probability_update);
	RUN(test_rbaqm_open_loop_unresponsive);
	RUN(test_rbaqm_ecn_and_overflow);
	RUN(test_rbaqm_closed_loop_converges_and_shares_by_weight);
	return harness_summary();
}
