// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * test_disc_cqaqm_srd.c - unit tests of CQ-AQM (cqaqm.h), RD and S-RD
 * (srd.h): every branch, the paper identities and the properties
 * DISCIPLINES.md asks for (two-finite-queue identity against an
 * independent model, zero high-precedence loss, WRR/DRR shares, hysteresis,
 * the S-RD delay bound under adversarial arrivals at the default period and
 * its failure with a period of one R packet, RD head drops).
 *
 *	test_disc_cqaqm_srd [path/to/qcore-replay]
 *
 * With the replay path, the RD head-drop rows are also checked through the
 * replay tool.  The last line is "N passed, N failed" (tests, not checks);
 * the exit status is non-zero when any test failed.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include "qcore.h"
#include "cqaqm.h"
#include "srd.h"

#include "harness.h"
#include "sim.h"

static const char *replay_path;

/* ---- the adapter (sim.h), with this file's packet shape ----------- */

static struct sim sim_a;

static struct qcore_decision sim_enq(struct sim *s, u64 now, u32 len, u8 cls,
				     u8 prec, u32 flow)
{
	struct qcore_pkt pkt = { .now_ns = now, .len = len, .cls = cls,
				 .prec = prec, .flow_hash = flow };

	return sim_enq_pkt(s, &pkt);
}

static int set_kv(const struct qcore_disc_ops *ops, void *p, const char *name,
		  const char *value)
{
	char err[QCORE_ERRLEN];

	return qcore_params_set(ops, p, name, value, err, sizeof(err));
}

/* check_params on (defaults + one or two overrides); 0/-1, message in err. */
static int check_with(const struct qcore_disc_ops *ops, const char *const *kv,
		      char *err)
{
	_Alignas(16) unsigned char p[512];

	if (qcore_params_defaults(ops, p, err, QCORE_ERRLEN))
		return -2;
	for (; *kv; kv += 2)
		if (set_kv(ops, p, kv[0], kv[1]))
			return -2;
	return ops->check_params(p, err, QCORE_ERRLEN);
}

/* ==== CQ-AQM =========================================================== */

static void test_cqaqm_defaults_and_registry(void)
{
	struct cqaqm_params a, b;
	char err[QCORE_ERRLEN];

	CHECK(qcore_find("cqaqm") == &cqaqm_ops, "registered");
	memset(&a, 0, sizeof(a));
	CHECK(qcore_params_defaults(&cqaqm_ops, &a, err, sizeof(err)) == 0, "%s", err);
	cqaqm_params_init(&b);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0, "table defaults == cqaqm_params_init");
	CHECK(a.b_high_pkts + a.b_low_pkts == 750, "paper's 750-packet buffer");
	CHECK(a.t_low_local_pkts == 500 && a.t_low_nonlocal_pkts == 650 &&
	      a.t_high_local_pkts == 7, "paper's thresholds");
	CHECK(cqaqm_ops.check_params(&a, err, sizeof(err)) == 0, "defaults valid: %s", err);
	CHECK(cqaqm_ops.nbands(&a) == 2, "two bands");
}

static void test_cqaqm_check_params(void)
{
	char err[QCORE_ERRLEN];
	static const char *const c1[] = { "t_high_local", "51", NULL };
	static const char *const c2[] = { "t_low_local", "651", NULL };
	static const char *const c3[] = { "t_low_nonlocal", "701", NULL };
	static const char *const c4[] = { "weights", "1:2:3", NULL };
	static const char *const c5[] = { "hysteresis", "1", "t_low_off", "651", NULL };
	static const char *const c6[] = { "hysteresis", "1", "t_high_local_off", "8", NULL };
	static const char *const c7[] = { "hysteresis", "1", "t_low_local_off", "501", NULL };
	static const char *const c8[] = { "t_low_off", "651", NULL };	/* unused without hysteresis */
	static const char *const c9[] = { "quantum_bytes", "1:2:3", NULL };
	struct cqaqm_params p;

	CHECK(check_with(&cqaqm_ops, c1, err) == -1 &&
	      strcmp(err, "t_high_local: must be <= b_high (50), got 51") == 0, "%s", err);
	CHECK(check_with(&cqaqm_ops, c2, err) == -1 &&
	      strcmp(err, "t_low_local: must be <= t_low_nonlocal (650), got 651") == 0, "%s", err);
	CHECK(check_with(&cqaqm_ops, c3, err) == -1 &&
	      strcmp(err, "t_low_nonlocal: must be <= b_low (700), got 701") == 0, "%s", err);
	CHECK(check_with(&cqaqm_ops, c4, err) == -1 && strstr(err, "weights:") == err, "%s", err);
	CHECK(check_with(&cqaqm_ops, c9, err) == -1 && strstr(err, "quantum_bytes:") == err, "%s", err);
	CHECK(check_with(&cqaqm_ops, c5, err) == -1 && strstr(err, "t_low_off:") == err, "%s", err);
	CHECK(check_with(&cqaqm_ops, c6, err) == -1 && strstr(err, "t_high_local_off:") == err, "%s", err);
	CHECK(check_with(&cqaqm_ops, c7, err) == -1 && strstr(err, "t_low_local_off:") == err, "%s", err);
	CHECK(check_with(&cqaqm_ops, c8, err) == 0, "off thresholds unchecked without hysteresis: %s", err);
	cqaqm_params_init(&p);
	p.weights_pkts[0] = 0;
	CHECK(cqaqm_ops.check_params(&p, err, sizeof(err)) == -1, "weights 0 (struct filled directly)");
	cqaqm_params_init(&p);
	p.scheduler = 3;
	CHECK(cqaqm_ops.check_params(&p, err, sizeof(err)) == -1 &&
	      strstr(err, "scheduler:") == err, "%s", err);
	CHECK(set_kv(&cqaqm_ops, &p, "weights", "0:1") == -1, "list element 0 rejected by the parser");
	CHECK(set_kv(&cqaqm_ops, &p, "weights", "3:1") == 0 && p.weights_pkts[0] == 3 &&
	      p.weights_pkts[1] == 1, "weights list parsed");
}

static void test_cqaqm_check_pkt(void)
{
	struct cqaqm_params p;
	struct qcore_pkt pkt = { .len = 100 };
	char err[QCORE_ERRLEN];
	int cls, prec;

	cqaqm_params_init(&p);
	for (cls = 0; cls < 3; cls++)
		for (prec = 0; prec < 3; prec++) {
			pkt.cls = (u8)cls;
			pkt.prec = (u8)prec;
			CHECK(cqaqm_ops.check_pkt(&p, &pkt, err, sizeof(err)) ==
			      (cls > 1 || prec > 1 ? -1 : 0), "cls %d prec %d", cls, prec);
		}
	pkt.cls = 2;
	pkt.prec = 0;
	cqaqm_ops.check_pkt(&p, &pkt, err, sizeof(err));
	CHECK(strcmp(err, "cls: must be 0 (low queue) or 1 (high queue), got 2") == 0, "%s", err);
	pkt.cls = 0;
	pkt.prec = 7;
	cqaqm_ops.check_pkt(&p, &pkt, err, sizeof(err));
	CHECK(strcmp(err, "prec: must be 0 (low) or 1 (high precedence), got 7") == 0, "%s", err);
}

#define EXPECT(d, verdict_, band_, reason_, what)				\
	CHECK((d).verdict == (verdict_) && (d).band == (band_) &&		\
	      (d).reason == (reason_), "%s: got verdict %u band %u reason %s",	\
	      what, (d).verdict, (d).band, qcore_reason_names[(d).reason])

static void test_cqaqm_low_queue_rules(void)
{
	static const char *const kv[] = { "b_high=4", "b_low=6", "t_high_local=2",
		"t_low_local=3", "t_low_nonlocal=5", NULL };
	struct cqaqm_stats *st = (struct cqaqm_stats *)sim_a.stats;
	struct qcore_decision d;
	int i;

	CHECK(sim_init(&sim_a, "cqaqm", kv, 1) == 0, "init");
	for (i = 0; i < 3; i++) {
		d = sim_enq(&sim_a, i, 100, 0, 0, 0);
		EXPECT(d, QCORE_QUEUE, CQAQM_BAND_LOW, QCORE_REASON_NONE, "p=0 below t_low_local");
	}
	d = sim_enq(&sim_a, 3, 100, 0, 0, 0);
	EXPECT(d, QCORE_DROP, CQAQM_BAND_LOW, QCORE_REASON_PRECEDENCE_LOCAL, "p=0 at t_low_local");
	for (i = 0; i < 3; i++) {
		d = sim_enq(&sim_a, 4 + i, 100, 0, 1, 0);
		EXPECT(d, QCORE_QUEUE, CQAQM_BAND_LOW, QCORE_REASON_NONE, "p=1 up to b_low");
	}
	d = sim_enq(&sim_a, 7, 100, 0, 1, 0);
	EXPECT(d, QCORE_DROP, CQAQM_BAND_LOW, QCORE_REASON_OVERFLOW, "p=1 at b_low");
	d = sim_enq(&sim_a, 8, 100, 0, 0, 0);
	EXPECT(d, QCORE_DROP, CQAQM_BAND_LOW, QCORE_REASON_OVERFLOW, "overflow is tried first");
	CHECK(st->drops[CQAQM_BAND_LOW][QCORE_REASON_PRECEDENCE_LOCAL] == 1 &&
	      st->drops[CQAQM_BAND_LOW][QCORE_REASON_OVERFLOW] == 2 &&
	      st->admitted[0] == 3 && st->admitted[1] == 3, "stats per band/reason/precedence");
}

static void test_cqaqm_high_queue_rules_and_cross(void)
{
	static const char *const kv[] = { "b_high=4", "b_low=6", "t_high_local=2",
		"t_low_local=3", "t_low_nonlocal=5", NULL };
	struct cqaqm_vars *v = (struct cqaqm_vars *)sim_a.vars;
	struct cqaqm_stats *st = (struct cqaqm_stats *)sim_a.stats;
	struct qcore_decision d;
	u32 band;
	int i;

	CHECK(sim_init(&sim_a, "cqaqm", kv, 1) == 0, "init");
	d = sim_enq(&sim_a, 0, 100, 1, 0, 0);
	EXPECT(d, QCORE_QUEUE, CQAQM_BAND_HIGH, QCORE_REASON_NONE, "high p=0");
	d = sim_enq(&sim_a, 1, 100, 1, 0, 0);
	EXPECT(d, QCORE_QUEUE, CQAQM_BAND_HIGH, QCORE_REASON_NONE, "high p=0 below t_high_local");
	d = sim_enq(&sim_a, 2, 100, 1, 0, 0);
	EXPECT(d, QCORE_DROP, CQAQM_BAND_HIGH, QCORE_REASON_PRECEDENCE_LOCAL, "high p=0 at t_high_local");
	d = sim_enq(&sim_a, 3, 100, 1, 1, 0);
	d = sim_enq(&sim_a, 4, 100, 1, 1, 0);
	EXPECT(d, QCORE_QUEUE, CQAQM_BAND_HIGH, QCORE_REASON_NONE, "high p=1 up to b_high");
	d = sim_enq(&sim_a, 5, 100, 1, 1, 0);
	EXPECT(d, QCORE_DROP, CQAQM_BAND_HIGH, QCORE_REASON_OVERFLOW, "high p=1 at b_high");
	/* Empty the high queue, then raise the low queue to t_low_nonlocal. */
	for (i = 0; i < 4; i++)
		CHECK(sim_deq(&sim_a, 10, &band) >= 0 && band == CQAQM_BAND_HIGH, "drain high");
	for (i = 0; i < 4; i++)
		sim_enq(&sim_a, 11, 100, 0, 1, 0);
	CHECK(!v->nonlocal_active, "4 < t_low_nonlocal");
	d = sim_enq(&sim_a, 12, 100, 1, 0, 0);
	EXPECT(d, QCORE_QUEUE, CQAQM_BAND_HIGH, QCORE_REASON_NONE, "cross rule off");
	CHECK(sim_deq(&sim_a, 13, &band) >= 0 && band == CQAQM_BAND_HIGH, "strict: high first");
	sim_enq(&sim_a, 14, 100, 0, 1, 0);
	CHECK(v->nonlocal_active && st->nonlocal_on == 1,
	      "set by the enqueue that takes occ_low to t_low_nonlocal");
	d = sim_enq(&sim_a, 15, 100, 1, 0, 0);
	EXPECT(d, QCORE_DROP, CQAQM_BAND_HIGH, QCORE_REASON_PRECEDENCE_CROSS, "cross drop");
	d = sim_enq(&sim_a, 16, 100, 1, 1, 0);
	EXPECT(d, QCORE_QUEUE, CQAQM_BAND_HIGH, QCORE_REASON_NONE, "p=1 not affected by cross");
	sim_enq(&sim_a, 16, 100, 1, 1, 0);
	/* occ_high = 2 now: local is tried before cross. */
	d = sim_enq(&sim_a, 17, 100, 1, 0, 0);
	EXPECT(d, QCORE_DROP, CQAQM_BAND_HIGH, QCORE_REASON_PRECEDENCE_LOCAL, "local before cross");
	CHECK(sim_deq(&sim_a, 18, &band) >= 0 && band == CQAQM_BAND_HIGH, "high");
	CHECK(sim_deq(&sim_a, 18, &band) >= 0 && band == CQAQM_BAND_HIGH, "high");
	/* occ_low 5 -> 4 -> 3: still >= t_low_local, flag stays. */
	CHECK(sim_deq(&sim_a, 19, &band) >= 0 && band == CQAQM_BAND_LOW, "low");
	CHECK(sim_deq(&sim_a, 19, &band) >= 0 && band == CQAQM_BAND_LOW, "low");
	CHECK(v->nonlocal_active, "occ_low 3 = t_low_local keeps it");
	d = sim_enq(&sim_a, 20, 100, 1, 0, 0);
	EXPECT(d, QCORE_DROP, CQAQM_BAND_HIGH, QCORE_REASON_PRECEDENCE_CROSS, "still cross");
	CHECK(sim_deq(&sim_a, 21, &band) >= 0 && band == CQAQM_BAND_LOW, "low");
	CHECK(!v->nonlocal_active, "cleared by the dequeue taking occ_low below t_low_local");
	d = sim_enq(&sim_a, 22, 100, 1, 0, 0);
	EXPECT(d, QCORE_QUEUE, CQAQM_BAND_HIGH, QCORE_REASON_NONE, "cross off again");
	CHECK(st->drops[CQAQM_BAND_HIGH][QCORE_REASON_PRECEDENCE_CROSS] == 2 &&
	      st->drops[CQAQM_BAND_HIGH][QCORE_REASON_PRECEDENCE_LOCAL] == 2 &&
	      st->drops[CQAQM_BAND_HIGH][QCORE_REASON_OVERFLOW] == 1, "stats");
	cqaqm_ops.reset(sim_a.params, sim_a.vars);
	CHECK(st->drops[CQAQM_BAND_HIGH][QCORE_REASON_PRECEDENCE_CROSS] == 2 && !v->nonlocal_active,
	      "reset clears vars only");
}

/* ---- identity: thresholds at the buffer sizes = two finite queues ---- */

struct model_q {
	u64 id[SIM_CAP];
	u32 head, n;
};

static void test_cqaqm_identity_two_finite_queues(void)
{
	static const char *const kv[] = { "b_high=5", "b_low=9", "t_high_local=5",
		"t_low_local=9", "t_low_nonlocal=9", NULL };
	static struct model_q mq[2];
	struct cqaqm_stats *st = (struct cqaqm_stats *)sim_a.stats;
	const u32 limit[2] = { 5, 9 };
	struct qcore_rng r;
	u64 t, id = 0, mismatches = 0, drops = 0, full_low = 0;
	u32 i, band;

	CHECK(sim_init(&sim_a, "cqaqm", kv, 1) == 0, "init");
	memset(mq, 0, sizeof(mq));
	qcore_rng_seed(&r, 2024);
	for (t = 0; t < 200000; t++) {
		u32 x = qcore_rng_u32(&r);

		if (x % 100 < 55) {	/* arrival: random class and precedence */
			u8 cls = (u8)((x >> 8) % 100 < 40), prec = (u8)((x >> 16) & 1);
			u32 b = cls ? 0 : 1;
			struct qcore_decision d = sim_enq(&sim_a, t, 100, cls, prec, 0);
			u8 want_verdict = mq[b].n >= limit[b] ? QCORE_DROP : QCORE_QUEUE;

			full_low += mq[1].n == limit[1];
			if (want_verdict == QCORE_QUEUE)
				mq[b].id[(mq[b].head + mq[b].n++) % SIM_CAP] = id;
			else
				drops++;
			mismatches += d.verdict != want_verdict || d.band != b ||
				      d.reason != (want_verdict == QCORE_DROP ?
						   QCORE_REASON_OVERFLOW : QCORE_REASON_NONE);
			id++;
		} else {		/* dequeue: strict priority, high first */
			long long got = sim_deq(&sim_a, t, &band);
			long long want = -1;

			for (i = 0; i < 2; i++) {
				if (mq[i].n) {
					want = (long long)mq[i].id[mq[i].head];
					mq[i].head = (mq[i].head + 1) % SIM_CAP;
					mq[i].n--;
					break;
				}
			}
			mismatches += got != want;
		}
	}
	CHECK(mismatches == 0, "%llu decisions differ from two finite queues",
	      (unsigned long long)mismatches);
	CHECK(drops > 1000 && full_low > 1000, "the stream exercises full queues (%llu drops, %llu full-low arrivals)",
	      (unsigned long long)drops, (unsigned long long)full_low);
	CHECK(st->drops[0][QCORE_REASON_PRECEDENCE_LOCAL] + st->drops[1][QCORE_REASON_PRECEDENCE_LOCAL] +
	      st->drops[0][QCORE_REASON_PRECEDENCE_CROSS] == 0, "no precedence drops");
}

/*
 * Overload by p=0 traffic, p=1 traffic at half the link rate: zero p=1
 * loss with CQ-AQM, while the same stream without AQM loses p=1 packets.
 */
static u64 overload_p1_loss(const char *const *kv, u64 *p0_loss)
{
	struct qcore_rng r;
	u64 t, lost1 = 0, lost0 = 0;
	u32 band, f;

	if (sim_init(&sim_a, "cqaqm", kv, 1))
		return ~(u64)0;
	qcore_rng_seed(&r, 99);
	for (t = 0; t < 200000; t++) {
		/* Four sources (q, p); per slot arrival probabilities in %. */
		static const u32 pct[4] = { 25, 25, 70, 80 };	/* (1,1) (0,1) (1,0) (0,0) */

		for (f = 0; f < 4; f++) {
			u8 cls = (u8)(f == 0 || f == 2), prec = (u8)(f < 2);

			if (qcore_rng_u32(&r) % 100 < pct[f] &&
			    sim_enq(&sim_a, t, 1000, cls, prec, f).verdict == QCORE_DROP) {
				if (prec)
					lost1++;
				else
					lost0++;
			}
		}
		sim_deq(&sim_a, t, &band);	/* the link sends one packet per slot */
	}
	*p0_loss = lost0;
	return lost1;
}

static void test_cqaqm_overload_zero_high_precedence_loss(void)
{
	static const char *const aqm[] = { "b_high=20", "b_low=60", "t_high_local=5",
		"t_low_local=30", "t_low_nonlocal=40", NULL };
	static const char *const none[] = { "b_high=20", "b_low=60", "t_high_local=20",
		"t_low_local=60", "t_low_nonlocal=60", NULL };
	static const char *const hyst[] = { "b_high=20", "b_low=60", "t_high_local=5",
		"t_low_local=30", "t_low_nonlocal=40", "hysteresis=1", "t_low_off=20",
		"t_low_local_off=25", "t_high_local_off=3", NULL };
	u64 p0, lost;

	lost = overload_p1_loss(aqm, &p0);
	CHECK(lost == 0, "CQ-AQM: %llu p=1 losses", (unsigned long long)lost);
	CHECK(p0 > 100000, "the link is overloaded (%llu p=0 losses)", (unsigned long long)p0);
	lost = overload_p1_loss(hyst, &p0);
	CHECK(lost == 0, "CQ-AQM with hysteresis: %llu p=1 losses", (unsigned long long)lost);
	lost = overload_p1_loss(none, &p0);
	CHECK(lost > 1000, "without AQM p=1 packets are lost (%llu): the test can fail",
	      (unsigned long long)lost);
}

static void test_cqaqm_wrr_ratio(void)
{
	static const char *const kv[] = { "scheduler=wrr", "weights=3:1", NULL };
	static const char *const one[] = { "scheduler=wrr", "weights=2", NULL };
	u32 band, i, served[2] = { 0, 0 }, pattern_ok = 1;

	CHECK(sim_init(&sim_a, "cqaqm", kv, 1) == 0, "init");
	for (i = 0; i < 40; i++) {
		sim_enq(&sim_a, 0, 100, 1, 1, 0);
		sim_enq(&sim_a, 0, 100, 0, 1, 0);
	}
	for (i = 0; i < 40; i++) {
		CHECK(sim_deq(&sim_a, 1, &band) >= 0, "backlogged");
		served[band]++;
		pattern_ok &= band == (i % 4 == 3 ? CQAQM_BAND_LOW : CQAQM_BAND_HIGH);
	}
	CHECK(pattern_ok && served[0] == 30 && served[1] == 10, "HHHL: %u:%u", served[0], served[1]);
	/* Drain: HHHL while both last, then low alone (work conserving). */
	served[0] = served[1] = 0;
	for (i = 0; i < 40; i++) {
		CHECK(sim_deq(&sim_a, 2, &band) >= 0, "backlogged");
		served[band]++;
		if (i < 12)
			pattern_ok &= band == (i % 4 == 3 ? CQAQM_BAND_LOW : CQAQM_BAND_HIGH);
		else if (i > 12)
			pattern_ok &= band == CQAQM_BAND_LOW;
	}
	CHECK(pattern_ok && served[0] == 10 && served[1] == 30, "drain %u:%u", served[0], served[1]);
	CHECK(sim_deq(&sim_a, 4, &band) == -1, "empty");

	CHECK(sim_init(&sim_a, "cqaqm", one, 1) == 0, "init single weight");
	for (i = 0; i < 8; i++) {
		sim_enq(&sim_a, 0, 100, 1, 1, 0);
		sim_enq(&sim_a, 0, 100, 0, 1, 0);
	}
	pattern_ok = 1;
	for (i = 0; i < 16; i++) {
		sim_deq(&sim_a, 1, &band);
		pattern_ok &= band == ((i / 2) % 2 ? CQAQM_BAND_LOW : CQAQM_BAND_HIGH);
	}
	CHECK(pattern_ok, "weights=2 means 2:2 (HHLL...)");
}

/* sch_drr as written (a loop over an active list), the reference. */
struct drr_ref {
	u32 list[2], n;
	u64 deficit[2];
	u32 quantum[2];
};

static void drr_ref_enq(struct drr_ref *m, u32 band, u32 backlog_before)
{
	if (backlog_before == 0) {
		m->list[m->n++] = band;
		m->deficit[band] = m->quantum[band];
	}
}

static u32 drr_ref_deq(struct drr_ref *m, const struct sim *s)
{
	for (;;) {
		u32 c = m->list[0];
		const struct sim_fifo *f = &s->q[c];
		u32 len = f->len[f->head];

		if (len <= m->deficit[c]) {
			m->deficit[c] -= len;
			if (f->n == 1) {
				m->list[0] = m->list[1];
				m->n--;
			}
			return c;
		}
		m->deficit[c] += m->quantum[c];
		if (m->n == 2) {
			m->list[0] = m->list[1];
			m->list[1] = c;
		}
	}
}

static void test_cqaqm_drr_matches_sch_drr_and_byte_shares(void)
{
	static const char *const kv[] = { "scheduler=drr", "quantum_bytes=300:100",
		"b_high=5000", "b_low=5000", NULL };
	static const char *const fair[] = { "scheduler=drr", "quantum_bytes=500",
		"b_high=5000", "b_low=5000", NULL };
	struct drr_ref m;
	struct qcore_rng r;
	u64 bytes[2] = { 0, 0 };
	u32 i, band, mismatch = 0, len;
	u64 arrival;

	/* Random sizes and arrivals: same choices as the loop reference. */
	CHECK(sim_init(&sim_a, "cqaqm", kv, 1) == 0, "init");
	memset(&m, 0, sizeof(m));
	m.quantum[0] = 300;
	m.quantum[1] = 100;
	qcore_rng_seed(&r, 5);
	for (i = 0; i < 100000; i++) {
		u32 x = qcore_rng_u32(&r);

		if (x % 100 < 50 && sim_a.q[0].n + sim_a.q[1].n < 500) {
			u8 cls = (u8)((x >> 8) & 1);
			u32 b = cls ? 0 : 1, before = sim_a.q[b].n;

			if (sim_enq(&sim_a, i, 40 + (x >> 12) % 1461, cls, 1, 0).verdict == QCORE_QUEUE)
				drr_ref_enq(&m, b, before);
			else
				mismatch++;
		} else if (sim_a.q[0].n + sim_a.q[1].n) {
			u32 want = drr_ref_deq(&m, &sim_a);

			mismatch += sim_deq(&sim_a, i, &band) < 0 || band != want;
		}
	}
	CHECK(mismatch == 0, "%u dequeues differ from the sch_drr loop", mismatch);

	/* Byte shares follow the quanta when both stay backlogged. */
	CHECK(sim_init(&sim_a, "cqaqm", kv, 1) == 0, "init");
	for (i = 0; i < 4000; i++) {
		sim_enq(&sim_a, 0, 250, 1, 1, 0);	/* high: 250-byte packets */
		sim_enq(&sim_a, 0, 1000, 0, 1, 0);	/* low: 1000-byte packets */
	}
	while (bytes[0] + bytes[1] < 600000) {
		sim_deq_full(&sim_a, 1, &band, &len, &arrival);
		bytes[band] += len;
	}
	CHECK(bytes[0] >= 3 * bytes[1] - 3 * 1100 && bytes[0] <= 3 * bytes[1] + 3 * 1100,
	      "quanta 300:100 give bytes 3:1 (%llu:%llu)",
	      (unsigned long long)bytes[0], (unsigned long long)bytes[1]);
	CHECK(sim_init(&sim_a, "cqaqm", fair, 1) == 0, "init");
	for (i = 0; i < 4000; i++) {
		sim_enq(&sim_a, 0, 100, 1, 1, 0);
		sim_enq(&sim_a, 0, 1500, 0, 1, 0);
	}
	bytes[0] = bytes[1] = 0;
	while (bytes[0] + bytes[1] < 600000) {
		sim_deq_full(&sim_a, 1, &band, &len, &arrival);
		bytes[band] += len;
	}
	CHECK(bytes[0] + 2000 >= bytes[1] && bytes[1] + 2000 >= bytes[0],
	      "equal quanta: equal bytes whatever the packet sizes (%llu:%llu)",
	      (unsigned long long)bytes[0], (unsigned long long)bytes[1]);
	/* A class re-activated gets deficit = quantum again (sch_drr). */
	CHECK(sim_init(&sim_a, "cqaqm", fair, 1) == 0, "init");
	sim_enq(&sim_a, 0, 400, 1, 1, 0);
	CHECK(sim_deq(&sim_a, 1, &band) == 0 && band == 0, "fits the first quantum");
	CHECK(((struct cqaqm_vars *)sim_a.vars)->drr_nactive == 0, "empty class leaves the list");
	CHECK(sim_deq(&sim_a, 2, &band) == -1, "empty");
}

static void test_cqaqm_hysteresis_prevents_flapping(void)
{
	static const char *const off[] = { "b_high=10", "b_low=20", "t_high_local=4",
		"t_low_local=9", "t_low_nonlocal=10", NULL };
	static const char *const on[] = { "b_high=10", "b_low=20", "t_high_local=4",
		"t_low_local=9", "t_low_nonlocal=10", "hysteresis=1", "t_low_off=5",
		"t_high_local_off=2", "t_low_local_off=6", NULL };
	struct cqaqm_stats *st = (struct cqaqm_stats *)sim_a.stats;
	struct cqaqm_vars *v = (struct cqaqm_vars *)sim_a.vars;
	u32 i, band, admitted_high_p0 = 0, local_low_drops;
	int run;

	for (run = 0; run < 2; run++) {
		CHECK(sim_init(&sim_a, "cqaqm", run ? on : off, 1) == 0, "init");
		/* Low occupancy oscillates 8 -> 10 -> 8 ... (p=1 arrivals). */
		for (i = 0; i < 8; i++)
			sim_enq(&sim_a, 0, 100, 0, 1, 0);
		for (i = 0; i < 50; i++) {
			sim_enq(&sim_a, 1, 100, 0, 1, 0);
			sim_enq(&sim_a, 1, 100, 0, 1, 0);
			sim_deq(&sim_a, 2, &band);
			sim_deq(&sim_a, 2, &band);
		}
		if (!run)
			CHECK(st->nonlocal_on == 50 && !v->nonlocal_active,
			      "without hysteresis the cross rule flaps every cycle (%llu)",
			      (unsigned long long)st->nonlocal_on);
		else
			CHECK(st->nonlocal_on == 1 && v->nonlocal_active,
			      "with hysteresis it switches on once (%llu)",
			      (unsigned long long)st->nonlocal_on);
		/* Drain to 5: on-mode stays active; at 4 it clears. */
		for (i = 0; i < 3; i++)
			sim_deq(&sim_a, 3, &band);
		CHECK(v->nonlocal_active == run, "occ 5: active only with hysteresis");
		sim_deq(&sim_a, 3, &band);
		CHECK(!v->nonlocal_active, "occ 4: cleared");
	}
	/* Local hysteresis: high occupancy oscillating 3 -> 4 -> 3. */
	for (run = 0; run < 2; run++) {
		u32 drops;

		CHECK(sim_init(&sim_a, "cqaqm", run ? on : off, 1) == 0, "init");
		for (i = 0; i < 3; i++)
			sim_enq(&sim_a, 0, 100, 1, 1, 0);
		admitted_high_p0 = 0;
		for (i = 0; i < 20; i++) {
			sim_enq(&sim_a, 1, 100, 1, 1, 0);	/* occ 4 */
			sim_deq(&sim_a, 1, &band);		/* occ 3 */
			admitted_high_p0 += sim_enq(&sim_a, 1, 100, 1, 0, 0).verdict == QCORE_QUEUE;
			if (sim_a.q[0].n > 3)
				sim_deq(&sim_a, 1, &band);
		}
		drops = 20 - admitted_high_p0;
		CHECK(run ? drops == 20 : drops == 0,
		      "high local rule at occ 3 after touching 4: %u drops (hysteresis %d)", drops, run);
	}
	/* Low local hysteresis: occupancy 9 -> 8: p=0 still refused with it. */
	for (run = 0; run < 2; run++) {
		CHECK(sim_init(&sim_a, "cqaqm", run ? on : off, 1) == 0, "init");
		for (i = 0; i < 9; i++)
			sim_enq(&sim_a, 0, 100, 0, 1, 0);
		sim_deq(&sim_a, 1, &band);
		local_low_drops = sim_enq(&sim_a, 2, 100, 0, 0, 0).reason == QCORE_REASON_PRECEDENCE_LOCAL;
		CHECK(local_low_drops == (u32)run, "low local at occ 8 after 9 (hysteresis %d)", run);
		for (i = 0; i < 3; i++)
			sim_deq(&sim_a, 3, &band);
		CHECK(sim_enq(&sim_a, 4, 100, 0, 0, 0).verdict == QCORE_QUEUE, "occ 5 < off: admitted");
	}
}

/* ==== RD / S-RD ======================================================== */

static void test_srd_defaults_and_registry(void)
{
	struct srd_params a, b;
	char err[QCORE_ERRLEN];
	struct srd_vars *v = (struct srd_vars *)sim_a.vars;

	CHECK(qcore_find("srd") == &srd_ops && qcore_find("rd") == &rd_ops, "registered");
	memset(&a, 0, sizeof(a));
	CHECK(qcore_params_defaults(&srd_ops, &a, err, sizeof(err)) == 0, "%s", err);
	srd_params_init(&b);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0, "table defaults == srd_params_init");
	CHECK(a.period_ns > a.d_ns + 8ULL * 1500 * 1000000000ULL / a.rate_bps,
	      "default period > d + one packet time (delay statement)");
	/* 100 Mbit/s, 50 ms, k = 2, n = 1/1, 1500-byte maxima:
	 * RD  B_D = 10^8 * 0.05 / 3 / 8 = 208333.3
	 * S-RD w = 2/10^8 * (8*1500*2 + 8*1500) = 720 us,
	 *      B_D = (0.05 - 0.00072) * 10^8/3 / 8 = 205333.3 */
	CHECK(sim_init(&sim_a, "rd", NULL, 1) == 0, "rd defaults valid");
	CHECK(v->b_d_bytes == 208333 && v->b_r_bytes == 3125000 - 208333, "rd sizes %llu %llu",
	      (unsigned long long)v->b_d_bytes, (unsigned long long)v->b_r_bytes);
	CHECK(sim_init(&sim_a, "srd", NULL, 1) == 0, "srd defaults valid");
	CHECK(v->b_d_bytes == 205333 && v->b_r_bytes == 3125000 - 205333, "srd sizes %llu %llu",
	      (unsigned long long)v->b_d_bytes, (unsigned long long)v->b_r_bytes);
}

/* The sizing formula evaluated independently with 128-bit rationals. */
static u64 ref_b_d(const struct srd_params *p, int stateless, u64 nd, u64 nr)
{
	/* RD: nd*C*d / (nd + k nr) / 8 / 1e9 with k = k_ppm/1e6. */
	unsigned __int128 num = (unsigned __int128)nd * p->rate_bps * p->d_ns * 1000000u;
	unsigned __int128 den = ((unsigned __int128)nd * 1000000u + (unsigned __int128)p->k_ppm * nr) *
				8u * 1000000000u;

	if (stateless) {
		/* (d - w) with w_ns = 2e9 * 8 (S_D/alpha + S_R) / C,
		 * S_D/alpha = S_D k nr / nd: scale everything by nd*C*1e6. */
		unsigned __int128 dscaled = (unsigned __int128)p->d_ns * nd * p->rate_bps * 1000000u;
		unsigned __int128 wscaled = (unsigned __int128)16000000000ULL *
			((unsigned __int128)p->sd_max_bytes * p->k_ppm * nr +
			 (unsigned __int128)p->sr_max_bytes * nd * 1000000u);

		if (dscaled <= wscaled)
			return 0;
		/* B_D = (d - w) * R_D / 8 / 1e9, R_D = nd C 1e6 / den6 */
		num = dscaled - wscaled;	/* = (d-w) nd C 1e6 */
		return (u64)(num / den);
	}
	return (u64)(num / den);
}

static void test_srd_sizing_exact(void)
{
	struct srd_params p;
	struct qcore_rng r;
	u32 i, bad = 0, zero = 0;

	qcore_rng_seed(&r, 11);
	for (i = 0; i < 200000; i++) {
		u64 nd = 1 + qcore_rng_u32(&r) % 100000, nr = 1 + qcore_rng_u32(&r) % 100000;

		srd_params_init(&p);
		p.rate_bps = 1000 + qcore_rng_u64(&r) % 100000000000ULL;
		p.d_ns = 1 + qcore_rng_u64(&r) % 10000000000ULL;
		p.k_ppm = 1 + qcore_rng_u32(&r) % 1000000000;
		p.sd_max_bytes = 1 + qcore_rng_u32(&r) % 65535;
		p.sr_max_bytes = 1 + qcore_rng_u32(&r) % 65535;
		if (i % 3 == 0) {	/* extremes */
			p.rate_bps = 100000000000ULL;
			p.d_ns = 10000000000ULL;
			nd = i % 2 ? 100000 : 1;
		}
		bad += srd_size_d_bytes(&p, false, (u32)nd, (u32)nr) != ref_b_d(&p, 0, nd, nr);
		bad += srd_size_d_bytes(&p, true, (u32)nd, (u32)nr) != ref_b_d(&p, 1, nd, nr);
		zero += ref_b_d(&p, 1, nd, nr) == 0;
	}
	CHECK(bad == 0, "%u sizes differ from the 128-bit reference", bad);
	CHECK(zero > 0 && zero < 200000, "both branches of the (d - w)+ floor (%u zero)", zero);
}

static void test_srd_check_params(void)
{
	char err[QCORE_ERRLEN];
	static const char *const small_b[] = { "buffer_bytes", "200000", NULL };
	static const char *const rd_small_b[] = { "buffer_bytes", "208333", NULL };
	static const char *const rd_ok_b[] = { "buffer_bytes", "208334", NULL };
	static const char *const bmax[] = { "bmax_bytes", "1000", NULL };
	static const char *const kbad[] = { "k", "1000.000001", NULL };
	static const char *const d_le_w[] = { "d_ns", "720000", NULL };
	struct srd_params p;
	struct srd_vars *v = (struct srd_vars *)sim_a.vars;
	static const char *const kv[] = { "d_ns=720000", NULL };
	static const char *const kv2[] = { "d_ns=720001", NULL };

	CHECK(check_with(&srd_ops, small_b, err) == -1 &&
	      strcmp(err, "buffer_bytes: B_R = min(B_max, B - B_D) must be > 0, but B = 200000 bytes and B_D = 200000 bytes (n_D = 1, n_R = 1)") == 0,
	      "%s", err);
	CHECK(check_with(&rd_ops, rd_small_b, err) == -1, "rd: B = B_D rejected");
	CHECK(check_with(&rd_ops, rd_ok_b, err) == 0, "rd: B_R = 1 accepted: %s", err);
	CHECK(check_with(&srd_ops, bmax, err) == 0, "B_max caps B_R: %s", err);
	CHECK(check_with(&srd_ops, d_le_w, err) == 0, "d <= w is valid (B_D = 0): %s", err);
	srd_params_init(&p);
	CHECK(set_kv(&srd_ops, &p, kbad[0], kbad[1]) == -1, "k above 1000 rejected");
	CHECK(set_kv(&srd_ops, &p, "k", "0") == -1, "k = 0 rejected");
	CHECK(set_kv(&srd_ops, &p, "k", "0.5") == 0 && p.k_ppm == 500000, "k exact decimal");
	p.rate_bps = 10;
	CHECK(srd_ops.check_params(&p, err, sizeof(err)) == -1 && strstr(err, "rate_bps:") == err,
	      "%s", err);
	CHECK(sim_init(&sim_a, "srd", kv, 1) == 0 && v->b_d_bytes == 0, "d = w: B_D = 0");
	CHECK(sim_enq(&sim_a, 0, 40, 0, 0, 0).reason == QCORE_REASON_OVERFLOW, "no D admitted");
	CHECK(sim_init(&sim_a, "srd", kv2, 1) == 0 && v->b_d_bytes == 0, "d = w + 1 ns: B_D floor 0");
	srd_params_init(&p);
	p.bmax_bytes = 1000;
	CHECK(srd_ops.check_params(&p, err, sizeof(err)) == 0, "ok");
}

static void test_srd_check_pkt_and_overflow(void)
{
	static const char *const kv[] = { "buffer_bytes=1000", "bmax_bytes=600", "d_ns=1000000",
		"rate_bps=1000000", "n_d=1", "n_r=1", "k=1", NULL };
	struct srd_vars *v = (struct srd_vars *)sim_a.vars;
	struct srd_stats *st = (struct srd_stats *)sim_a.stats;
	struct qcore_pkt pkt = { .len = 100, .cls = 2, .prec = 9 };
	struct qcore_decision d;
	char err[QCORE_ERRLEN];

	/* RD: B_D = 1 * 10^6 * 10^-3 / 2 / 8 = 62.5 -> 62 bytes; B_R = min(600, 938). */
	CHECK(sim_init(&sim_a, "rd", kv, 1) == 0, "init");
	CHECK(v->b_d_bytes == 62 && v->b_r_bytes == 600, "sizes %llu %llu",
	      (unsigned long long)v->b_d_bytes, (unsigned long long)v->b_r_bytes);
	CHECK(rd_ops.check_pkt(sim_a.params, &pkt, err, sizeof(err)) == -1 &&
	      strcmp(err, "cls: must be 0 (D) or 1 (R), got 2") == 0, "%s", err);
	pkt.cls = 1;
	CHECK(rd_ops.check_pkt(sim_a.params, &pkt, err, sizeof(err)) == 0, "prec ignored");
	d = sim_enq(&sim_a, 0, 60, 0, 0, 0);
	EXPECT(d, QCORE_QUEUE, SRD_BAND_D, QCORE_REASON_NONE, "60 <= 62");
	d = sim_enq(&sim_a, 0, 3, 0, 0, 0);
	EXPECT(d, QCORE_DROP, SRD_BAND_D, QCORE_REASON_OVERFLOW, "63 > 62");
	d = sim_enq(&sim_a, 0, 2, 0, 0, 0);
	EXPECT(d, QCORE_QUEUE, SRD_BAND_D, QCORE_REASON_NONE, "62 <= 62 (byte-exact bfifo)");
	d = sim_enq(&sim_a, 0, 600, 1, 0, 0);
	EXPECT(d, QCORE_QUEUE, SRD_BAND_R, QCORE_REASON_NONE, "R up to B_R");
	d = sim_enq(&sim_a, 0, 1, 1, 0, 0);
	EXPECT(d, QCORE_DROP, SRD_BAND_R, QCORE_REASON_OVERFLOW, "R above B_R");
	CHECK(st->drops[SRD_BAND_D][QCORE_REASON_OVERFLOW] == 1 &&
	      st->drops[SRD_BAND_R][QCORE_REASON_OVERFLOW] == 1 && st->queued[0] == 2 &&
	      st->queued[1] == 1, "stats");
}

static void test_srd_scheduler_ratio_and_yield(void)
{
	/* k = 1.5, n_D = 3, n_R = 2: alpha = 3 / 3 = 1 -> equal bytes. */
	static const char *const kv[] = { "k=1.5", "n_d=3", "n_r=2", "period_ns=100000000000", NULL };
	/* k = 2, n = 1/1: alpha = 1/2. */
	static const char *const half[] = { "n_d=1", "n_r=1", "period_ns=100000000000", NULL };
	struct srd_vars *v = (struct srd_vars *)sim_a.vars;
	u64 bytes[2] = { 0, 0 };
	u32 i, band, len;
	u64 arrival;
	int run;

	for (run = 0; run < 2; run++) {
		CHECK(sim_init(&sim_a, "srd", run ? half : kv, 1) == 0, "init");
		for (i = 0; i < 2000; i++) {
			sim_enq(&sim_a, 0, 100 + i % 7 * 10, 0, 0, 0);
			sim_enq(&sim_a, 0, 1500 - i % 5 * 100, 1, 0, 0);
		}
		bytes[0] = bytes[1] = 0;
		for (i = 0; i < 1500; i++) {
			u64 ld = v->l_d_bytes, lr = v->l_r_bytes;
			int want_d = run ? ld * 2 <= lr : ld * 1500000ULL * 2 <= 3 * 1000000ULL * lr;

			CHECK(sim_deq_full(&sim_a, 1, &band, &len, &arrival) >= 0, "backlogged");
			if ((band == SRD_BAND_D) != want_d) {
				CHECK(0, "dequeue %u: band %u, L_D %llu L_R %llu", i, band,
				      (unsigned long long)ld, (unsigned long long)lr);
				break;
			}
			bytes[band] += len;
		}
		if (run)
			CHECK(bytes[0] * 2 <= bytes[1] + 2 * 160 && bytes[1] <= bytes[0] * 2 + 1500,
			      "alpha 1/2: %llu:%llu", (unsigned long long)bytes[0],
			      (unsigned long long)bytes[1]);
		else
			CHECK(bytes[0] <= bytes[1] + 160 && bytes[1] <= bytes[0] + 1500,
			      "alpha 1: %llu:%llu", (unsigned long long)bytes[0],
			      (unsigned long long)bytes[1]);
	}
	/* Yield: R chosen but empty -> D; D chosen but empty -> R. */
	CHECK(sim_init(&sim_a, "srd", half, 1) == 0, "init");
	sim_enq(&sim_a, 0, 100, 0, 0, 0);
	sim_enq(&sim_a, 0, 100, 0, 0, 0);
	CHECK(sim_deq(&sim_a, 1, &band) == 0 && band == SRD_BAND_D, "D first");
	CHECK(sim_deq(&sim_a, 1, &band) == 1 && band == SRD_BAND_D, "R's turn, R empty: D");
	CHECK(v->l_d_bytes == 200 && v->l_r_bytes == 0, "counters");
	sim_enq(&sim_a, 2, 100, 1, 0, 0);
	sim_enq(&sim_a, 2, 100, 1, 0, 0);
	sim_enq(&sim_a, 2, 100, 1, 0, 0);
	sim_enq(&sim_a, 2, 100, 1, 0, 0);
	sim_enq(&sim_a, 2, 100, 1, 0, 0);
	for (i = 0; i < 5; i++)
		CHECK(sim_deq(&sim_a, 3, &band) >= 0 && band == SRD_BAND_R, "R");
	CHECK(v->l_r_bytes == 500, "L_R");
	CHECK(sim_deq(&sim_a, 4, &band) == -1, "empty");
}

static void test_srd_period_reset(void)
{
	static const char *const kv[] = { "n_d=1", "n_r=1", "period_ns=1000", NULL };
	struct srd_vars *v = (struct srd_vars *)sim_a.vars;
	u32 i, band;

	CHECK(sim_init(&sim_a, "srd", kv, 1) == 0, "init");
	for (i = 0; i < 10; i++) {
		sim_enq(&sim_a, 0, 100, 0, 0, 0);
		sim_enq(&sim_a, 0, 100, 1, 0, 0);
	}
	CHECK(sim_deq(&sim_a, 500, &band) >= 0 && band == SRD_BAND_D, "first dequeue starts a period, D");
	CHECK(v->period_start_ns == 500, "period starts at the first dequeue");
	CHECK(sim_deq(&sim_a, 600, &band) >= 0 && band == SRD_BAND_R, "R (100 > 0.5 * 0)");
	CHECK(sim_deq(&sim_a, 1499, &band) >= 0 && band == SRD_BAND_R, "R (100 > 0.5 * 100)");
	CHECK(v->l_d_bytes == 100 && v->l_r_bytes == 200 && v->period_start_ns == 500,
	      "no reset before the boundary");
	CHECK(sim_deq(&sim_a, 1500, &band) >= 0 && band == SRD_BAND_D,
	      "reset at the boundary: 0 <= 0 serves D");
	CHECK(v->l_d_bytes == 100 && v->l_r_bytes == 0 && v->period_start_ns == 1500,
	      "counters zeroed, period restarts at the reset");
	CHECK(sim_deq(&sim_a, 2600, &band) >= 0 && band == SRD_BAND_D, "late dequeue: reset, D");
	CHECK(v->period_start_ns == 2600, "period restarts at the late dequeue");
	srd_ops.reset(sim_a.params, sim_a.vars);
	CHECK(v->l_d_bytes == 0 && !v->started, "reset clears vars");
}

static void test_srd_flow_estimation(void)
{
	static const char *const kv[] = { "period_ns=1000000", NULL };
	struct srd_vars *v = (struct srd_vars *)sim_a.vars;
	u64 bd1;
	u32 band;

	CHECK(sim_init(&sim_a, "srd", kv, 1) == 0, "init");
	CHECK(v->n_d == 1 && v->n_r == 1, "estimated counts start at 1");
	bd1 = v->b_d_bytes;
	/* 3 D flows (one hash collides into slot 7), 2 R flows. */
	sim_enq(&sim_a, 0, 100, 0, 0, 7);
	sim_enq(&sim_a, 0, 100, 0, 0, 8);
	sim_enq(&sim_a, 0, 100, 0, 0, 9);
	sim_enq(&sim_a, 0, 100, 0, 0, 7 + SRD_FLOW_SLOTS);
	sim_enq(&sim_a, 0, 100, 1, 0, 1);
	sim_enq(&sim_a, 0, 100, 1, 0, 2);
	CHECK(sim_deq(&sim_a, 10, &band) >= 0 && v->n_d == 3 && v->n_r == 2,
	      "first dequeue counts every slot seen (%u, %u)", v->n_d, v->n_r);
	CHECK(v->b_d_bytes == srd_size_d_bytes((const struct srd_params *)sim_a.params, true, 3, 2) &&
	      v->b_d_bytes != bd1, "sizes recomputed");
	/* Next period: only flow 8 and R flow 2 are seen. */
	sim_enq(&sim_a, 500000, 100, 0, 0, 8);
	sim_enq(&sim_a, 500000, 100, 1, 0, 2);
	sim_deq(&sim_a, 600000, &band);
	CHECK(v->n_d == 3 && v->n_r == 2, "no change inside the period");
	sim_deq(&sim_a, 1000010, &band);
	CHECK(v->n_d == 1 && v->n_r == 1, "counts over the last period (%u, %u)", v->n_d, v->n_r);
	CHECK(v->b_d_bytes == bd1, "sizes back");
	/* Nothing seen for a whole period: floor 1. */
	sim_deq(&sim_a, 3000000, &band);
	CHECK(v->n_d == 1 && v->n_r == 1, "floor 1");
}

/* ---- the S-RD delay bound under adversarial arrivals ------------------ */

struct adv_result {
	u64 max_wait_ns;
	u64 violations;
	u64 d_sent;
	u64 backlog_breaks;	/* dequeues that found a queue empty */
};

/*
 * One adversarial run on srd with the given period.  Link: C = 10^8 bit/s,
 * 80 ns per byte, the next dequeue when the previous packet has left.  R is
 * kept backlogged with maximum-size packets (sometimes smaller, to move the
 * L_D/L_R phase), D kept backlogged with small packets; bursts that fill the
 * D buffer are placed at the worst moments: right after a D dequeue
 * (L_D just above alpha L_R, R's turn next), right before a reset, or at
 * random.  Every D packet's wait (arrival to dequeue) is checked against d.
 */
static struct adv_result adversary(u64 seed, const char *period_kv, u64 run_ns)
{
	/* period_kv NULL ends the list: the default period. */
	const char *kv[] = { "sd_max_bytes=100", "sr_max_bytes=1500", "n_d=1", "n_r=1",
			     period_kv, NULL };
	struct srd_params *p = (struct srd_params *)sim_a.params;
	struct srd_vars *v = (struct srd_vars *)sim_a.vars;
	struct adv_result res = { 0, 0, 0, 0 };
	struct qcore_rng r;
	u64 t = 0, d_ns, b_d;
	u32 band, len, mode;
	u64 arrival;
	long long id;

	if (sim_init(&sim_a, "srd", kv, 1)) {
		res.violations = ~(u64)0;
		return res;
	}
	d_ns = p->d_ns;
	b_d = v->b_d_bytes;
	qcore_rng_seed(&r, seed);
	mode = qcore_rng_u32(&r) % 4;
	while (t < run_ns) {
		/* Keep R backlogged; mostly maximum-size packets. */
		while (sim_a.q[SRD_BAND_R].n < 8) {
			u32 l = qcore_rng_u32(&r) % 8 ? 1500 : 40 + qcore_rng_u32(&r) % 1461;

			sim_enq(&sim_a, t, l, 1, 0, 0);
		}
		/* D arrivals: fill the buffer up at the chosen moments. */
		{
			bool fill = false;
			u64 since = t - v->period_start_ns;

			switch (mode) {
			case 0:	/* continuously full */
				fill = true;
				break;
			case 1:	/* right after D service, when R's turn comes next */
				fill = qcore_rng_u32(&r) % 4 == 0 ||
				       (v->l_d_bytes * 2 > v->l_r_bytes && v->l_d_bytes);
				break;
			case 2:	/* just before a reset (counters about to be zeroed) */
				fill = !v->started || p->period_ns - since % p->period_ns < 200000 ||
				       qcore_rng_u32(&r) % 16 == 0;
				break;
			default:	/* random bursts */
				fill = qcore_rng_u32(&r) % 64 == 0;
				break;
			}
			if (fill || !sim_a.q[SRD_BAND_D].n) {
				u32 guard = 0;

				while (sim_a.q[SRD_BAND_D].bytes + 100 <= b_d && guard++ < 4096)
					sim_enq(&sim_a, t, 20 + qcore_rng_u32(&r) % 81, 0, 0, 0);
			}
		}
		res.backlog_breaks += !sim_a.q[0].n || !sim_a.q[1].n;
		id = sim_deq_full(&sim_a, t, &band, &len, &arrival);
		if (id < 0)
			break;
		if (band == SRD_BAND_D) {
			u64 wait = t - arrival;

			res.d_sent++;
			if (wait > res.max_wait_ns)
				res.max_wait_ns = wait;
			res.violations += wait > d_ns;
		}
		t += (u64)len * 80;	/* 8 bits at 10^8 bit/s */
	}
	return res;
}

static void test_srd_delay_bound_holds_at_default_period(void)
{
	struct srd_params *p = (struct srd_params *)sim_a.params;
	u64 seed, worst = 0, violations = 0, sent = 0, breaks = 0, w_ns;

	for (seed = 1; seed <= 24; seed++) {
		/* Defaults (period included) except the packet maxima and n = 1/1. */
		struct adv_result res = adversary(seed, NULL, 400000000ULL);

		violations += res.violations;
		sent += res.d_sent;
		breaks += res.backlog_breaks;
		if (res.max_wait_ns > worst)
			worst = res.max_wait_ns;
	}
	/* w = 2 * 80 ns * (100 * 2 + 1500) = 272 us. */
	w_ns = 2 * 80 * (100 * p->k_ppm / 1000000 + 1500);
	printf("  S-RD, default period %llu ns: %llu D packets, max wait %llu ns (d %llu, d - w %llu)\n",
	       (unsigned long long)p->period_ns, (unsigned long long)sent,
	       (unsigned long long)worst, (unsigned long long)p->d_ns,
	       (unsigned long long)(p->d_ns - w_ns));
	CHECK(violations == 0, "%llu D packets waited longer than d", (unsigned long long)violations);
	CHECK(breaks == 0, "both queues stayed backlogged (%llu breaks)", (unsigned long long)breaks);
	CHECK(worst > p->d_ns - w_ns - 200000, "the adversary comes close to the bound (%llu ns)",
	      (unsigned long long)worst);
	CHECK(sent > 100000, "enough D packets (%llu)", (unsigned long long)sent);
}

static void test_srd_delay_bound_breaks_with_one_packet_period(void)
{
	struct srd_params *p = (struct srd_params *)sim_a.params;
	struct adv_result res;

	/* One 1500-byte R packet lasts 120 us at 10^8 bit/s. */
	res = adversary(7, "period_ns=120000", 400000000ULL);
	printf("  S-RD, period 120 us: max wait %llu ns, %llu of %llu D packets late\n",
	       (unsigned long long)res.max_wait_ns, (unsigned long long)res.violations,
	       (unsigned long long)res.d_sent);
	CHECK(res.violations > 0 && res.max_wait_ns > 2 * p->d_ns,
	      "a period of one R packet breaks the bound (max wait %llu ns)",
	      (unsigned long long)res.max_wait_ns);
	/* Two resets inside one 50 ms wait already cost more than the slack. */
	res = adversary(3, "period_ns=30000000", 400000000ULL);
	CHECK(res.violations > 0, "a 30 ms period (< d) breaks it too (max wait %llu ns)",
	      (unsigned long long)res.max_wait_ns);
	/* A period of exactly d still holds (at most one reset per wait). */
	res = adversary(3, "period_ns=50000000", 400000000ULL);
	CHECK(res.violations == 0, "period = d holds (max wait %llu ns)",
	      (unsigned long long)res.max_wait_ns);
}

/* ---- RD head drops --------------------------------------------------- */

static void test_rd_head_drop_exactly_above_d(void)
{
	/* 100 Gbit/s so that a 1 us bound still buffers 4166 D bytes. */
	static const char *const kv[] = { "d_ns=1000", "rate_bps=100000000000", "n_d=1", "n_r=1", NULL };
	struct srd_vars *v = (struct srd_vars *)sim_a.vars;
	struct srd_stats *st = (struct srd_stats *)sim_a.stats;
	u32 band, len;
	u64 arrival;
	long long id;

	CHECK(sim_init(&sim_a, "rd", kv, 1) == 0, "init");
	sim_enq(&sim_a, 0, 100, 0, 0, 0);	/* id 0 */
	sim_enq(&sim_a, 10, 100, 0, 0, 0);	/* id 1 */
	sim_enq(&sim_a, 20, 100, 0, 0, 0);	/* id 2 */
	sim_enq(&sim_a, 20, 300, 1, 0, 0);	/* id 3, R */
	/* At 1010: id 0 waited 1010 > 1000 (drop), id 1 waited 1000 (kept). */
	id = sim_deq_full(&sim_a, 1010, &band, &len, &arrival);
	CHECK(sim_a.head_drops == 1 && sim_a.last_head_drop_id == 0, "only id 0 dropped");
	CHECK(id == 1 && band == SRD_BAND_D, "sojourn = d is served (got %lld)", id);
	CHECK(v->l_d_bytes == 100, "the dropped packet is not counted in L_D (%llu)",
	      (unsigned long long)v->l_d_bytes);
	CHECK(st->drops[SRD_BAND_D][QCORE_REASON_DELAY] == 1 && st->sent_pkts[0] == 1, "stats");
	/* R's turn; id 2 (waited 5000) is still dropped first: the check runs before choosing. */
	id = sim_deq_full(&sim_a, 5020, &band, &len, &arrival);
	CHECK(sim_a.head_drops == 2 && sim_a.last_head_drop_id == 2, "id 2 dropped before R");
	CHECK(id == 3 && band == SRD_BAND_R, "then R served");
	CHECK(v->l_r_bytes == 300 && v->l_d_bytes == 100, "L_R counted, L_D untouched");
	/* R packets are never head-dropped, however old. */
	sim_enq(&sim_a, 6000, 100, 1, 0, 0);
	CHECK(sim_deq_full(&sim_a, 900000, &band, &len, &arrival) == 4 && band == SRD_BAND_R &&
	      sim_a.head_drops == 2, "old R packet served");
	/* S-RD never head-drops. */
	{
		static const char *const skv[] = { "d_ns=100000000", "n_d=1", "n_r=1", NULL };

		CHECK(sim_init(&sim_a, "srd", skv, 1) == 0, "srd init");
		sim_enq(&sim_a, 0, 100, 0, 0, 0);
		CHECK(sim_deq(&sim_a, 500000000, &band) == 0 && sim_a.head_drops == 0,
		      "srd serves a late D packet");
	}
}

/* The replay prints RD's head drops before their dequeue's row. */
static void test_rd_replay_prints_head_drops(void)
{
	static const char events[] =
		"t_ns,op,len,cls,prec,flow\n"
		"0,enq,100,0,,\n"
		"10,enq,100,0,,\n"
		"20,enq,300,1,,\n"
		"1010,deq,,,,\n"
		"5000,deq,,,,\n"
		"5000,deq,,,,\n";
	static const char want[] =
		"t_ns,op,pkt,verdict,band,reason\n"
		"0,enq,0,queued,0,\n"
		"10,enq,1,queued,0,\n"
		"20,enq,2,queued,1,\n"
		"1010,drop_head,0,dropped,0,delay\n"
		"1010,deq,1,sent,0,\n"
		"5000,deq,2,sent,1,\n"
		"5000,deq,-1,empty,,\n";
	char cmd[512], got[2048], path[] = "/tmp/qcore-rd-XXXXXX";
	size_t n;
	FILE *f;
	int fd;

	if (!replay_path) {
		printf("  (no replay path given: skipped)\n");
		return;
	}
	fd = mkstemp(path);
	CHECK(fd >= 0, "temp file");
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	fputs(events, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "%s rd --param d_ns=1000 --param rate_bps=100000000000 --param n_d=1 --param n_r=1 < %s", replay_path, path);
	f = popen(cmd, "r");
	CHECK(f != NULL, "popen");
	if (!f)
		return;
	n = fread(got, 1, sizeof(got) - 1, f);
	got[n] = '\0';
	CHECK(pclose(f) == 0, "replay exit 0");
	remove(path);
	CHECK(strcmp(got, want) == 0, "replay rows:\n%s", got);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		replay_path = argv[1];
	RUN(test_cqaqm_defaults_and_registry);
	RUN(test_cqaqm_check_params);
	RUN(test_cqaqm_check_pkt);
	RUN(test_cqaqm_low_queue_rules);
	RUN(test_cqaqm_high_queue_rules_and_cross);
	RUN(test_cqaqm_identity_two_finite_queues);
	RUN(test_cqaqm_overload_zero_high_precedence_loss);
	RUN(test_cqaqm_wrr_ratio);
	RUN(test_cqaqm_drr_matches_sch_drr_and_byte_shares);
	RUN(test_cqaqm_hysteresis_prevents_flapping);
	RUN(test_srd_defaults_and_registry);
	RUN(test_srd_sizing_exact);
	RUN(test_srd_check_params);
	RUN(test_srd_check_pkt_and_overflow);
	RUN(test_srd_scheduler_ratio_and_yield);
	RUN(test_srd_period_reset);
	RUN(test_srd_flow_estimation);
	RUN(test_srd_delay_bound_holds_at_default_period);
	RUN(test_srd_delay_bound_breaks_with_one_packet_period);
	RUN(test_rd_head_drop_exactly_above_d);
	RUN(test_rd_replay_prints_head_drops);
	return harness_summary();
}
