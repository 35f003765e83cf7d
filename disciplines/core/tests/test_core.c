// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * test_core.c - unit tests of the discipline core and the parameter parser.
 * A tiny harness: each test function runs its CHECKs; the last line of
 * output is "N passed, N failed" (tests, not checks) and the exit status is
 * non-zero when any test failed.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdlib.h>
#include "qcore.h"
#include "qcore_usage.h"
#include "droptail.h"
#include "prio.h"
#include "ncq.h"

#include "harness.h"
#include "sim.h"

/* ---- the adapter (sim.h), with this file's packet shape ----------- */

static struct sim sim_a, sim_b;

static struct qcore_decision sim_enq(struct sim *s, u64 now, u32 len, u8 cls,
				     u8 flags)
{
	struct qcore_pkt pkt = { .now_ns = now, .len = len, .cls = cls, .flags = flags };

	return sim_enq_pkt(s, &pkt);
}

/* ---- randomness ------------------------------------------------------ */

static void test_rng_splitmix64_known_outputs(void)
{
	struct qcore_rng r;

	qcore_rng_seed(&r, 0);
	CHECK(qcore_rng_u64(&r) == 0xe220a8397b1dcdafULL, "first output");
	CHECK(qcore_rng_u64(&r) == 0x6e789e6aa1b965f4ULL, "second output");
	CHECK(qcore_rng_u64(&r) == 0x06c45d188009454fULL, "third output");
	qcore_rng_seed(&r, 0);
	CHECK(qcore_rng_u32(&r) == 0xe220a839U, "u32 is the high half");
}

static void test_rng_reproducible_per_seed(void)
{
	struct qcore_rng a, b, c;
	int i, same = 1, differ = 0;

	qcore_rng_seed(&a, 42);
	qcore_rng_seed(&b, 42);
	qcore_rng_seed(&c, 43);
	for (i = 0; i < 1000; i++) {
		u64 x = qcore_rng_u64(&a);

		same &= x == qcore_rng_u64(&b);
		differ |= x != qcore_rng_u64(&c);
	}
	CHECK(same, "same seed gives the same stream");
	CHECK(differ, "another seed gives another stream");
}

static void test_frac_q32_exact(void)
{
	struct qcore_rng r;
	int i, ok = 1;

	CHECK(qcore_frac_q32(1, 2) == 0x80000000U, "1/2");
	CHECK(qcore_frac_q32(1, 3) == 0x55555555U, "1/3");
	CHECK(qcore_frac_q32(0, 7) == 0, "0/7");
	CHECK(qcore_frac_q32(UINT64_MAX - 1, UINT64_MAX) == 0xffffffffU, "near 1, huge den");
	qcore_rng_seed(&r, 7);
	for (i = 0; i < 10000; i++) {
		u64 den = qcore_rng_u64(&r) >> (qcore_rng_u32(&r) % 63);
		u64 num;

		if (den < 2)
			continue;
		num = qcore_rng_u64(&r) % den;
		ok &= qcore_frac_q32(num, den) ==
		      (u32)(((unsigned __int128)num << 32) / den);
	}
	CHECK(ok, "matches 128-bit division on random operands");
}

/* ---- registry and names --------------------------------------------- */

static void test_reason_names_and_registry(void)
{
	static const char *const want[] = { "", "overflow", "aqm",
		"precedence_local", "precedence_cross", "delay" };
	static const char *const papers[] = { "droptail", "prio", "ncq", "cqaqm",
		"srd", "rd", "red", "wred", "rbaqm" };
	u32 i, j, n = 0;

	CHECK(QCORE_REASON__COUNT == 6, "reason count %d", QCORE_REASON__COUNT);
	for (i = 0; i < QCORE_REASON__COUNT; i++)
		CHECK(strcmp(qcore_reason_names[i], want[i]) == 0, "reason %u", i);
	CHECK(qcore_find("ncq") == &ncq_ops, "find ncq");
	CHECK(qcore_find("droptail") == &droptail_ops, "find droptail");
	CHECK(qcore_find("prio") == &prio_ops, "find prio");
	CHECK(qcore_find("nope") == NULL, "unknown name");
	CHECK(qcore_find(NULL) == NULL, "NULL name");
	for (i = 0; qcore_disciplines[i]; i++, n++) {
		CHECK(qcore_find(qcore_disciplines[i]->name) == qcore_disciplines[i],
		      "find %s", qcore_disciplines[i]->name);
		for (j = 0; j < i; j++)
			CHECK(strcmp(qcore_disciplines[i]->name,
				     qcore_disciplines[j]->name), "duplicate name");
	}
	/* The papers' disciplines are registered; more may be (a new one is
	 * one entry, README "Adding a discipline"). */
	for (i = 0; i < ARRAY_SIZE(papers); i++)
		CHECK(qcore_find(papers[i]) != NULL, "%s is not registered", papers[i]);
	CHECK(n >= ARRAY_SIZE(papers), "%u disciplines", n);
}

/* The table defaults and the C initialisers must agree. */
static void test_defaults_match_params_init(void)
{
	union { struct droptail_params d; struct prio_params p; struct ncq_params n; } a, b;
	char err[256];

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	CHECK(qcore_params_defaults(&droptail_ops, &a, err, sizeof(err)) == 0, "%s", err);
	droptail_params_init(&b.d);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0, "droptail");
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	CHECK(qcore_params_defaults(&prio_ops, &a, err, sizeof(err)) == 0, "%s", err);
	prio_params_init(&b.p);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0, "prio");
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	CHECK(qcore_params_defaults(&ncq_ops, &a, err, sizeof(err)) == 0, "%s", err);
	ncq_params_init(&b.n);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0, "ncq");
	CHECK(a.n.thresh_ppm == 50000 && a.n.size_bytes == 130 && a.n.ramp_ppm == 500000,
	      "ncq defaults");
}

/* ---- parameter parser ----------------------------------------------- */

static int set_ncq(struct ncq_params *p, const char *name, const char *value,
		   char *err)
{
	return qcore_params_set(&ncq_ops, p, name, value, err, 256);
}

static void test_params_ppm_accepts_exact_decimals(void)
{
	static const struct { const char *text; u32 ppm; } ok[] = {
		{ "0.05", 50000 }, { "1", 1000000 }, { "0.000001", 1 },
		{ "0", 0 }, { "1.000000", 1000000 }, { "0.5", 500000 },
		{ "0.123456", 123456 }, { "00.25", 250000 },
	};
	struct ncq_params p;
	char err[256];
	u32 i;

	ncq_params_init(&p);
	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		CHECK(set_ncq(&p, "thresh", ok[i].text, err) == 0, "%s: %s", ok[i].text, err);
		CHECK(p.thresh_ppm == ok[i].ppm, "%s -> %u", ok[i].text, p.thresh_ppm);
	}
}

static void test_params_ppm_rejects_inexact_forms(void)
{
	static const char *const bad[] = { "0.0000001", "1e-3", "-0.1", "abc",
		"", ".5", "1.", "0,5", " 0.5", "0.5 ", "+0.5", "1.5", "2",
		"0x1", "0.05.1", "99999999999999999999" };
	struct ncq_params p;
	char err[256];
	u32 i;

	ncq_params_init(&p);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		err[0] = '\0';
		CHECK(set_ncq(&p, "thresh", bad[i], err) == -1, "'%s' accepted", bad[i]);
		CHECK(strncmp(err, "thresh: ", 8) == 0, "message names the parameter: %s", err);
		CHECK(strstr(err, "between 0 and 1") != NULL, "message gives the range: %s", err);
		CHECK(p.thresh_ppm == 50000, "'%s' changed the value (clamped?)", bad[i]);
	}
}

static void test_params_integer_enum_bool_errors(void)
{
	struct ncq_params p;
	char err[256];

	ncq_params_init(&p);
	CHECK(set_ncq(&p, "limit_pkts", "0", err) == -1, "below range");
	CHECK(strstr(err, "limit_pkts: expected an integer between 1 and 1000000") == err,
	      "%s", err);
	CHECK(set_ncq(&p, "limit_pkts", "1000001", err) == -1, "above range");
	CHECK(set_ncq(&p, "limit_pkts", "-1", err) == -1, "negative");
	CHECK(set_ncq(&p, "limit_pkts", "10a", err) == -1, "trailing junk");
	CHECK(set_ncq(&p, "limit_pkts", "4294967296", err) == -1, "u32 overflow");
	CHECK(p.limit_pkts == 100, "unchanged after errors");
	CHECK(set_ncq(&p, "limit_pkts", "1000000", err) == 0, "max accepted");
	CHECK(p.limit_pkts == 1000000, "max stored");
	CHECK(set_ncq(&p, "size_bytes", "65536", err) == -1, "size above 65535");
	CHECK(set_ncq(&p, "variant", "Journal", err) == -1, "enum is exact");
	CHECK(strstr(err, "variant: expected one of journal|conf-literal") == err, "%s", err);
	CHECK(set_ncq(&p, "variant", "conf-literal", err) == 0, "%s", err);
	CHECK(p.variant == NCQ_VARIANT_CONF_LITERAL, "variant stored");
	CHECK(set_ncq(&p, "mode", "probabilistic", err) == 0, "%s", err);
	CHECK(p.mode == NCQ_MODE_PROBABILISTIC, "mode stored");
	CHECK(set_ncq(&p, "favor_acks", "2", err) == -1, "bool 2");
	CHECK(set_ncq(&p, "favor_acks", "true", err) == -1, "bool true");
	CHECK(set_ncq(&p, "favor_acks", "1", err) == 0 && p.favor_acks == 1, "bool 1");
}

static void test_params_unknown_name_lists_valid(void)
{
	struct ncq_params p;
	char err[256];

	ncq_params_init(&p);
	CHECK(set_ncq(&p, "threshold", "0.1", err) == -1, "unknown accepted");
	CHECK(strstr(err, "unknown parameter 'threshold'") != NULL, "%s", err);
	CHECK(strstr(err, "size_bytes, thresh, limit_pkts, variant, mode, favor_acks, ramp") != NULL,
	      "%s", err);
}

static void test_params_format_round_trip(void)
{
	static const char *const names[] = { "size_bytes", "thresh", "limit_pkts",
		"variant", "mode", "favor_acks", "ramp" };
	static const char *const values[] = { "100", "0.000001", "7",
		"conf-literal", "probabilistic", "1", "0.25" };
	struct ncq_params p;
	char err[256], out[64];
	u32 i;

	ncq_params_init(&p);
	CHECK(qcore_params_format(&ncq_ops, &p, "thresh", out, sizeof(out)) == 0 &&
	      strcmp(out, "0.05") == 0, "default thresh formats as %s", out);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		CHECK(set_ncq(&p, names[i], values[i], err) == 0, "%s", err);
		CHECK(qcore_params_format(&ncq_ops, &p, names[i], out, sizeof(out)) == 0,
		      "format %s", names[i]);
		CHECK(strcmp(out, values[i]) == 0, "%s: '%s' != '%s'", names[i], out, values[i]);
	}
	CHECK(qcore_params_format(&ncq_ops, &p, "nope", out, sizeof(out)) == -1, "unknown");
	CHECK(qcore_params_format(&ncq_ops, &p, "variant", out, 4) == -1, "too small");
}

static void test_check_params_messages(void)
{
	struct ncq_params n;
	struct prio_params p;
	struct droptail_params d;
	char err[QCORE_ERRLEN];

	ncq_params_init(&n);
	CHECK(ncq_ops.check_params(&n, err, sizeof(err)) == 0, "defaults valid");
	n.thresh_ppm = 1500000;
	CHECK(ncq_ops.check_params(&n, err, sizeof(err)) == -1, "thresh 1.5");
	CHECK(strcmp(err, "thresh: must be between 0 and 1, got 1.5") == 0, "%s", err);
	ncq_params_init(&n);
	n.ramp_ppm = 1000001;
	CHECK(ncq_ops.check_params(&n, err, sizeof(err)) == -1, "ramp");
	CHECK(strcmp(err, "ramp: must be between 0 and 1, got 1.000001") == 0, "%s", err);
	ncq_params_init(&n);
	n.variant = 2;
	CHECK(ncq_ops.check_params(&n, err, sizeof(err)) == -1, "variant 2");
	CHECK(strncmp(err, "variant: must be one of journal|conf-literal", 44) == 0, "%s", err);
	ncq_params_init(&n);
	n.size_bytes = 0;
	CHECK(ncq_ops.check_params(&n, err, sizeof(err)) == -1, "size 0");
	CHECK(strcmp(err, "size_bytes: must be between 1 and 65535, got 0") == 0, "%s", err);
	prio_params_init(&p);
	p.bands = 9;
	CHECK(prio_ops.check_params(&p, err, sizeof(err)) == -1, "bands 9");
	CHECK(strcmp(err, "bands: must be between 2 and 8, got 9") == 0, "%s", err);
	droptail_params_init(&d);
	d.limit_pkts = 0;
	CHECK(droptail_ops.check_params(&d, err, sizeof(err)) == -1, "limit 0");
	CHECK(strcmp(err, "limit_pkts: must be between 1 and 1000000, got 0") == 0, "%s", err);
}

static void test_usage_lists_every_param(void)
{
	char buf[8192];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	u32 i;

	qcore_params_usage(&ncq_ops, f);
	fclose(f);
	for (i = 0; i < ncq_ops.nparams; i++) {
		const struct qcore_param_desc *d = &ncq_ops.params[i];
		char line[160];

		snprintf(line, sizeof(line), "%-12s unit %s, default %s,", d->name,
			 d->unit, d->dflt);
		CHECK(strstr(buf, line) != NULL, "usage lacks '%s'", line);
		CHECK(strstr(buf, d->help) != NULL, "usage lacks help of %s", d->name);
	}
	CHECK(strstr(buf, "one of journal|conf-literal") != NULL, "choices");
	CHECK(strstr(buf, "between 0 and 1") != NULL, "ppm range");
}

/* ---- droptail and prio ----------------------------------------------- */

static void test_droptail_overflow_at_limit(void)
{
	static const char *const kv[] = { "limit_pkts=3", NULL };
	struct droptail_stats *st = (struct droptail_stats *)sim_a.stats;
	struct qcore_decision d;
	u32 band;
	int i;

	CHECK(sim_init(&sim_a, "droptail", kv, 1) == 0, "init");
	for (i = 0; i < 3; i++) {
		d = sim_enq(&sim_a, i, 1000, (u8)(i * 7), 0);
		CHECK(d.verdict == QCORE_QUEUE && d.band == 0, "pkt %d queued", i);
	}
	d = sim_enq(&sim_a, 3, 40, 0, 0);
	CHECK(d.verdict == QCORE_DROP && d.reason == QCORE_REASON_OVERFLOW && d.band == 0,
	      "4th dropped");
	CHECK(sim_deq(&sim_a, 4, &band) == 0, "FIFO order");
	d = sim_enq(&sim_a, 5, 40, 0, 0);
	CHECK(d.verdict == QCORE_QUEUE, "room again after a dequeue");
	CHECK(st->queued == 4 && st->drops[QCORE_REASON_OVERFLOW] == 1, "stats");
}

static void test_prio_band_selection_and_shared_limit(void)
{
	static const char *const kv[] = { "bands=3", "limit_pkts=5", NULL };
	static const u8 cls[] = { 2, 0, 1, 2, 0 };
	static const long long order[] = { 1, 4, 2, 0, 3 };
	struct qcore_decision d;
	struct qcore_pkt pkt = { .len = 100, .cls = 3 };
	char err[QCORE_ERRLEN];
	u32 i, band;

	CHECK(sim_init(&sim_a, "prio", kv, 1) == 0, "init");
	CHECK(sim_a.nbands == 3, "nbands");
	for (i = 0; i < ARRAY_SIZE(cls); i++) {
		d = sim_enq(&sim_a, i, 100, cls[i], 0);
		CHECK(d.verdict == QCORE_QUEUE && d.band == cls[i], "pkt %u in band %u", i, d.band);
	}
	d = sim_enq(&sim_a, 9, 100, 0, 0);
	CHECK(d.verdict == QCORE_DROP && d.band == 0 && d.reason == QCORE_REASON_OVERFLOW,
	      "shared limit drops even the top band");
	for (i = 0; i < ARRAY_SIZE(order); i++) {
		long long id = sim_deq(&sim_a, 10 + i, &band);

		CHECK(id == order[i], "dequeue %u: got %lld want %lld", i, id, order[i]);
	}
	CHECK(sim_deq(&sim_a, 20, &band) == -1, "empty");
	CHECK(prio_ops.check_pkt(sim_a.params, &pkt, err, sizeof(err)) == -1, "cls 3 of 3 bands");
	CHECK(strcmp(err, "cls: must be below bands (3), got 3") == 0, "%s", err);
	pkt.cls = 2;
	CHECK(prio_ops.check_pkt(sim_a.params, &pkt, err, sizeof(err)) == 0, "cls 2 valid");
}

/* ---- ncq ------------------------------------------------------------- */

static void test_ncq_favours_small_up_to_thresh(void)
{
	static const char *const kv[] = { "limit_pkts=1000000", NULL };
	struct ncq_stats *st = (struct ncq_stats *)sim_a.stats;
	u32 i, favoured = 0, bad_order = 0;

	CHECK(sim_init(&sim_a, "ncq", kv, 1) == 0, "init");
	/* All small, thresh 0.05: packets 1, 21, 41, ... are favoured. */
	for (i = 1; i <= 1000; i++) {
		struct qcore_decision d = sim_enq(&sim_a, i, 64, 0, 0);
		u32 want = (i % 20 == 1) ? 0 : 1;

		bad_order += d.band != want;
		favoured += d.band == 0;
		if (sim_a.q[d.band].n)	/* keep the buffer from filling */
			sim_a.q[d.band].n = 0;
	}
	CHECK(bad_order == 0, "%u packets in the wrong band", bad_order);
	CHECK(favoured == 50, "favoured %u of 1000", favoured);
	CHECK(st->favoured == 50 && st->normal == 950, "stats %llu/%llu",
	      (unsigned long long)st->favoured, (unsigned long long)st->normal);
}

/* On a mixed random stream the favoured fraction tracks thresh from below. */
static void test_ncq_fraction_bound_on_mixed_stream(void)
{
	static const char *const kv[] = { "thresh=0.2", "limit_pkts=1000000", NULL };
	struct ncq_vars *v = (struct ncq_vars *)sim_a.vars;
	struct qcore_rng r;
	u32 i, over = 0;

	CHECK(sim_init(&sim_a, "ncq", kv, 1) == 0, "init");
	qcore_rng_seed(&r, 99);
	for (i = 0; i < 20000; i++) {
		u32 len = (qcore_rng_u32(&r) & 1) ? 52 : 1500;
		struct qcore_decision d = sim_enq(&sim_a, i, len, 0, 0);

		sim_a.q[d.band].n = 0;
		/* favoured <= ceil(thresh * received) after every packet */
		if (v->counted * 5 > v->received + 4)
			over++;
		if (len >= 130)
			CHECK(d.band == 1, "large packet %u favoured", i);
	}
	CHECK(over == 0, "bound exceeded %u times", over);
	CHECK(v->counted * 5 + 5 >= v->received, "bound reached: %llu of %llu",
	      (unsigned long long)v->counted, (unsigned long long)v->received);
}

static void test_ncq_thresh_1_is_strict_priority_for_small(void)
{
	static const char *const kv[] = { "thresh=1", "limit_pkts=1000000", NULL };
	struct qcore_rng r;
	u32 i, wrong = 0;

	CHECK(sim_init(&sim_a, "ncq", kv, 1) == 0, "init");
	qcore_rng_seed(&r, 5);
	for (i = 0; i < 5000; i++) {
		u32 len = 40 + qcore_rng_u32(&r) % 1461;
		struct qcore_decision d = sim_enq(&sim_a, i, len, 0, 0);

		wrong += d.band != (len < 130 ? 0 : 1);
		sim_a.q[d.band].n = 0;
	}
	CHECK(wrong == 0, "%u packets in the wrong band", wrong);
}

/*
 * thresh = 0 is DropTail: on a random stream of arrivals and dequeues the
 * verdicts, reasons and service order match, band 1 of ncq being
 * droptail's band 0.
 */
static void test_ncq_thresh_0_equals_droptail(void)
{
	static const char *const kv_ncq[] = { "thresh=0", "limit_pkts=20", NULL };
	static const char *const kv_dt[] = { "limit_pkts=20", NULL };
	struct qcore_rng r;
	u32 i, mismatch = 0, drops = 0, sent = 0;

	CHECK(sim_init(&sim_a, "ncq", kv_ncq, 1) == 0, "init ncq");
	CHECK(sim_init(&sim_b, "droptail", kv_dt, 1) == 0, "init droptail");
	qcore_rng_seed(&r, 1234);
	for (i = 0; i < 20000; i++) {
		if (qcore_rng_u32(&r) % 100 < 60) {
			u32 len = 40 + qcore_rng_u32(&r) % 1461;
			struct qcore_decision a = sim_enq(&sim_a, i, len, 0, 0);
			struct qcore_decision b = sim_enq(&sim_b, i, len, 0, 0);

			mismatch += a.verdict != b.verdict || a.reason != b.reason ||
				    a.band != 1 || b.band != 0;
			drops += a.verdict == QCORE_DROP;
		} else {
			u32 ba = 9, bb = 9;
			long long ia = sim_deq(&sim_a, i, &ba);
			long long ib = sim_deq(&sim_b, i, &bb);

			mismatch += ia != ib || (ia >= 0 && (ba != 1 || bb != 0));
			sent += ia >= 0;
		}
	}
	CHECK(mismatch == 0, "%u decisions differ", mismatch);
	CHECK(drops > 100 && sent > 100, "stream exercised drops (%u) and service (%u)",
	      drops, sent);
}

static void test_ncq_conf_literal_differs_from_journal(void)
{
	static const char *const kv_j[] = { "limit_pkts=1000000", NULL };
	static const char *const kv_c[] = { "limit_pkts=1000000", "variant=conf-literal", NULL };
	struct ncq_stats *sj = (struct ncq_stats *)sim_a.stats;
	struct ncq_stats *sc = (struct ncq_stats *)sim_b.stats;
	struct qcore_decision dj, dc;
	u32 i, differ = 0;

	CHECK(sim_init(&sim_a, "ncq", kv_j, 1) == 0, "init journal");
	CHECK(sim_init(&sim_b, "ncq", kv_c, 1) == 0, "init conf-literal");
	/* Only small packets: the printed rule never counts, so favours all. */
	for (i = 0; i < 100; i++) {
		dj = sim_enq(&sim_a, i, 64, 0, 0);
		dc = sim_enq(&sim_b, i, 64, 0, 0);
		sim_a.q[dj.band].n = 0;
		sim_b.q[dc.band].n = 0;
	}
	CHECK(sj->favoured == 5, "journal favoured %llu", (unsigned long long)sj->favoured);
	CHECK(sc->favoured == 100, "conf-literal favoured %llu", (unsigned long long)sc->favoured);
	/* Mixed: 1 small in 40; conf-literal counts the large ones and stops. */
	CHECK(sim_init(&sim_a, "ncq", kv_j, 1) == 0, "init journal");
	CHECK(sim_init(&sim_b, "ncq", kv_c, 1) == 0, "init conf-literal");
	for (i = 0; i < 4000; i++) {
		u32 len = i % 40 == 0 ? 64 : 1500;

		dj = sim_enq(&sim_a, i, len, 0, 0);
		dc = sim_enq(&sim_b, i, len, 0, 0);
		differ += dj.band != dc.band;
		sim_a.q[dj.band].n = 0;
		sim_b.q[dc.band].n = 0;
	}
	CHECK(sj->favoured == 100, "journal favours every small packet: %llu",
	      (unsigned long long)sj->favoured);
	CHECK(sc->favoured == 1, "conf-literal favours only the first: %llu",
	      (unsigned long long)sc->favoured);
	CHECK(differ == 99, "%u decisions differ", differ);
}

/*
 * Counting happens before the overflow check.  limit 1, thresh 0.5, nothing
 * dequeued: pkt 2 is dropped but received; so pkt 3 sees 1 favoured of 3
 * and is favoured (then dropped).  Counting after admission would see 1 of
 * 2 and put it in band 1.
 */
static void test_ncq_counts_before_overflow(void)
{
	static const char *const kv[] = { "thresh=0.5", "limit_pkts=1", NULL };
	struct ncq_vars *v = (struct ncq_vars *)sim_a.vars;
	struct ncq_stats *st = (struct ncq_stats *)sim_a.stats;
	struct qcore_decision d;

	CHECK(sim_init(&sim_a, "ncq", kv, 1) == 0, "init");
	d = sim_enq(&sim_a, 0, 64, 0, 0);
	CHECK(d.verdict == QCORE_QUEUE && d.band == 0, "pkt 1 favoured, queued");
	d = sim_enq(&sim_a, 1, 64, 0, 0);
	CHECK(d.verdict == QCORE_DROP && d.band == 1, "pkt 2 normal, dropped");
	d = sim_enq(&sim_a, 2, 64, 0, 0);
	CHECK(d.verdict == QCORE_DROP && d.band == 0 &&
	      d.reason == QCORE_REASON_OVERFLOW, "pkt 3 favoured, dropped");
	CHECK(v->received == 3 && v->counted == 2, "vars %llu/%llu",
	      (unsigned long long)v->counted, (unsigned long long)v->received);
	CHECK(st->favoured == 2 && st->normal == 1 && st->drops[QCORE_REASON_OVERFLOW] == 2,
	      "stats");
}

static void test_ncq_shared_limit(void)
{
	static const char *const kv[] = { "thresh=1", "limit_pkts=3", NULL };
	struct qcore_decision d;
	u32 band;

	CHECK(sim_init(&sim_a, "ncq", kv, 1) == 0, "init");
	sim_enq(&sim_a, 0, 1500, 0, 0);
	sim_enq(&sim_a, 1, 1500, 0, 0);
	d = sim_enq(&sim_a, 2, 64, 0, 0);
	CHECK(d.verdict == QCORE_QUEUE && d.band == 0, "small joins band 0");
	d = sim_enq(&sim_a, 3, 64, 0, 0);
	CHECK(d.verdict == QCORE_DROP && d.band == 0, "band 0 has no own room");
	CHECK(sim_deq(&sim_a, 4, &band) == 2 && band == 0, "favoured served first");
	CHECK(sim_deq(&sim_a, 5, &band) == 0 && band == 1, "then band 1 FIFO");
}

static void test_ncq_favor_acks(void)
{
	static const char *const kv_off[] = { "thresh=1", NULL };
	static const char *const kv_on[] = { "thresh=1", "favor_acks=1", NULL };
	struct qcore_decision d;

	CHECK(sim_init(&sim_a, "ncq", kv_off, 1) == 0, "init");
	d = sim_enq(&sim_a, 0, 1500, 0, QCORE_PKT_PURE_ACK);
	CHECK(d.band == 1, "flag ignored by default");
	CHECK(sim_init(&sim_a, "ncq", kv_on, 1) == 0, "init");
	d = sim_enq(&sim_a, 0, 1500, 0, QCORE_PKT_PURE_ACK);
	CHECK(d.band == 0, "pure ACK counts as small");
	d = sim_enq(&sim_a, 1, 1500, 0, 0);
	CHECK(d.band == 1, "other large packets are not");
}

/*
 * Probabilistic mode at thresh 0.5, ramp 0.5: P = 1 up to f = 0.25, 0 from
 * f = 0.5, linear between.  f = 3/8 is mid-ramp: P = 2^31 and one draw.
 */
static void test_ncq_probabilistic_ramp_points(void)
{
	static const char *const kv[] = { "thresh=0.5", "mode=probabilistic",
		"limit_pkts=1000000", NULL };
	struct ncq_vars *v = (struct ncq_vars *)sim_a.vars;
	struct qcore_rng before, expect;
	struct qcore_decision d;
	u32 draw;

	CHECK(sim_init(&sim_a, "ncq", kv, 77) == 0, "init");
	v->received = 7;	/* this packet makes 8 */
	v->counted = 3;
	before = sim_a.rng;
	expect = sim_a.rng;
	draw = qcore_rng_u32(&expect);
	d = sim_enq(&sim_a, 0, 64, 0, 0);
	CHECK(sim_a.rng.state == expect.state, "mid-ramp draws exactly once");
	CHECK(d.band == (draw < 0x80000000U ? 0 : 1), "favoured iff draw < P = 2^31");

	v->received = 3;	/* f = 1/4: the ramp's low end, P = 1 */
	v->counted = 1;
	before = sim_a.rng;
	d = sim_enq(&sim_a, 1, 64, 0, 0);
	CHECK(d.band == 0 && sim_a.rng.state == before.state, "P = 1 without a draw");
	v->received = 3;	/* f = 2/4 = thresh: P = 0 */
	v->counted = 2;
	d = sim_enq(&sim_a, 2, 64, 0, 0);
	CHECK(d.band == 1 && sim_a.rng.state == before.state, "P = 0 without a draw");
	v->received = 7;
	v->counted = 3;
	d = sim_enq(&sim_a, 3, 1500, 0, 0);
	CHECK(d.band == 1 && sim_a.rng.state == before.state, "large packets never draw");
}

static void test_ncq_probabilistic_long_run_and_ramp0(void)
{
	static const char *const kv_p[] = { "thresh=0.1", "mode=probabilistic",
		"ramp=0.5", "limit_pkts=1000000", NULL };
	static const char *const kv_r0[] = { "thresh=0.1", "mode=probabilistic",
		"ramp=0", "limit_pkts=1000000", NULL };
	static const char *const kv_d[] = { "thresh=0.1", "limit_pkts=1000000", NULL };
	struct ncq_stats *sp = (struct ncq_stats *)sim_a.stats;
	struct qcore_rng r, seeded;
	u32 i, differ = 0;
	u64 draws_seen;

	CHECK(sim_init(&sim_a, "ncq", kv_p, 3) == 0, "init");
	for (i = 0; i < 100000; i++)
		sim_a.q[sim_enq(&sim_a, i, 64, 0, 0).band].n = 0;
	/* the fraction settles inside the ramp [0.05, 0.1] */
	CHECK(sp->favoured > 5000 && sp->favoured < 10000, "favoured %llu of 100000",
	      (unsigned long long)sp->favoured);
	qcore_rng_seed(&seeded, 3);
	draws_seen = sim_a.rng.state - seeded.state;
	CHECK(draws_seen != 0, "the generator was used");

	/* ramp 0 is the deterministic rule and never draws */
	CHECK(sim_init(&sim_a, "ncq", kv_r0, 3) == 0, "init ramp 0");
	CHECK(sim_init(&sim_b, "ncq", kv_d, 3) == 0, "init deterministic");
	qcore_rng_seed(&r, 11);
	for (i = 0; i < 20000; i++) {
		u32 len = (qcore_rng_u32(&r) & 3) ? 64 : 1500;
		struct qcore_decision a = sim_enq(&sim_a, i, len, 0, 0);
		struct qcore_decision b = sim_enq(&sim_b, i, len, 0, 0);

		differ += a.band != b.band;
		sim_a.q[a.band].n = 0;
		sim_b.q[b.band].n = 0;
	}
	CHECK(differ == 0, "%u decisions differ", differ);
	CHECK(sim_a.rng.state == seeded.state, "ramp 0 never draws");
}

static void test_ncq_reset_clears_vars_only(void)
{
	static const char *const kv[] = { "limit_pkts=1000000", NULL };
	struct ncq_vars *v = (struct ncq_vars *)sim_a.vars;
	struct ncq_stats *st = (struct ncq_stats *)sim_a.stats;

	CHECK(sim_init(&sim_a, "ncq", kv, 1) == 0, "init");
	sim_enq(&sim_a, 0, 64, 0, 0);
	sim_enq(&sim_a, 1, 64, 0, 0);
	ncq_ops.reset(sim_a.params, sim_a.vars);
	CHECK(v->received == 0 && v->counted == 0, "vars cleared");
	CHECK(st->favoured == 1 && st->normal == 1, "stats kept");
	CHECK(sim_enq(&sim_a, 2, 64, 0, 0).band == 0, "first packet after reset favoured");
}

/* ---- ops->ignores, proven on the golden vectors ---------------------- */

/*
 * Every case of golden/<disc>/ (QCORE_GOLDEN overrides the directory) is
 * run through sim.h three times: as given, with the inputs the discipline
 * claims to ignore (ops->ignores) zeroed, as the Linux qdisc passes them,
 * and scrambled (and without dequeued() when that is claimed).  Every
 * decision (enqueue verdict/band/reason, dequeue head drops and the packet
 * sent) and the final vars, stats and generator must be the same, so a
 * wrong claim fails here.  A discipline that claims anything needs at least one case.
 */
#define IGN_MAX_EVENTS 16384
#define IGN_MAX_ARGS 64

struct ign_event {
	u64 t;
	u32 len, flow;
	u8 cls, prec, deq;
};

static struct ign_event ign_ev[IGN_MAX_EVENTS];
static u64 ign_ref[IGN_MAX_EVENTS], ign_out[IGN_MAX_EVENTS];

static u64 ign_scramble(u64 x)
{
	struct qcore_rng r;

	qcore_rng_seed(&r, x ^ 0x5eed5eed5eed5eedULL);
	return qcore_rng_u64(&r);
}

static u64 ign_csv_u64(char **p)
{
	char *end;
	u64 v = strtoull(*p, &end, 10);

	*p = *end == ',' ? end + 1 : end;
	return v;
}

/* The case's events; their number, or -1. */
static int ign_load_events(const char *path)
{
	char line[256];
	FILE *f = fopen(path, "r");
	int n = 0;

	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -1;
	}
	while (n < IGN_MAX_EVENTS && fgets(line, sizeof(line), f)) {
		struct ign_event *e = &ign_ev[n];
		char *p = line, *op;

		memset(e, 0, sizeof(*e));
		e->t = ign_csv_u64(&p);
		op = p;
		p = strchr(p, ',');
		if (!p)
			break;
		*p++ = '\0';
		e->deq = strcmp(op, "deq") == 0;
		if (!e->deq) {
			e->len = (u32)ign_csv_u64(&p);
			e->cls = (u8)ign_csv_u64(&p);
			e->prec = (u8)ign_csv_u64(&p);
			e->flow = (u32)ign_csv_u64(&p);
		}
		n++;
	}
	fclose(f);
	return n < IGN_MAX_EVENTS ? n : -1;
}

/* The case's "--param name=value" list and --seed; the number of params, or -1. */
static int ign_load_args(const char *path, char (*kvbuf)[128], const char **kv,
			 u64 *seed)
{
	char tok[128];
	FILE *f = fopen(path, "r");
	int n = 0, next_is = 0;

	if (!f)
		return -1;
	*seed = 1;
	while (fscanf(f, "%127s", tok) == 1) {
		if (next_is == 1 && n < IGN_MAX_ARGS - 1) {
			snprintf(kvbuf[n], 128, "%s", tok);
			kv[n] = kvbuf[n];
			n++;
		} else if (next_is == 2) {
			*seed = strtoull(tok, NULL, 10);
		}
		next_is = !strcmp(tok, "--param") ? 1 : !strcmp(tok, "--seed") ? 2 : 0;
	}
	kv[n] = NULL;
	fclose(f);
	return n;
}

static void ign_no_dequeued(const void *params, void *vars, void *stats,
			    u32 band, u32 len, u64 now_ns,
			    const struct qcore_band_view *bands_after)
{
	(void)params;
	(void)vars;
	(void)stats;
	(void)band;
	(void)len;
	(void)now_ns;
	(void)bands_after;
}

static struct qcore_disc_ops ign_ops;

/*
 * mode 0: as given; 1: ignored inputs zeroed; 2: scrambled; in 1 and 2
 * dequeued() is not called when ignored.  Decisions in out, state in sim_a.
 */
static int ign_run(const char *disc, const char *const *kv, u64 seed, int nev,
		   int mode, u8 ignores, u64 *out)
{
	int i;

	if (sim_init(&sim_a, disc, kv, seed))
		return -1;
	if (mode && (ignores & QCORE_IGNORES_DEQUEUED)) {
		ign_ops = *sim_a.ops;
		ign_ops.dequeued = ign_no_dequeued;
		sim_a.ops = &ign_ops;
	}
	for (i = 0; i < nev; i++) {
		const struct ign_event *e = &ign_ev[i];
		u64 t = e->t;

		if (mode && (ignores & QCORE_IGNORES_TIME))
			t = mode == 1 ? 0 : ign_scramble(t);
		/* Arrival times only: the enqueue's now_ns (the heads' stamps follow). */
		if (mode && !e->deq && (ignores & QCORE_IGNORES_ARRIVAL_TIME))
			t = mode == 1 ? 0 : ign_scramble(t);
		if (e->deq) {
			u64 drops = sim_a.head_drops;
			u32 band = 0;
			long long id = sim_deq(&sim_a, t, &band);

			out[i] = (u64)(id + 1) << 24 | (sim_a.head_drops - drops) << 8 | band;
		} else {
			struct qcore_pkt pkt = {
				.now_ns = t, .len = e->len, .flow_hash = e->flow,
				.cls = e->cls, .prec = e->prec,
			};
			struct qcore_decision d;

			if (mode && (ignores & QCORE_IGNORES_FLOW_HASH))
				pkt.flow_hash = mode == 1 ? 0 : (u32)ign_scramble(e->flow);
			d = sim_enq_pkt(&sim_a, &pkt);
			out[i] = 1ULL << 63 | (u64)d.verdict << 16 | (u64)d.band << 8 | d.reason;
		}
	}
	return 0;
}

static void test_ignores_hold_on_golden_vectors(void)
{
	const char *root = getenv("QCORE_GOLDEN") ? getenv("QCORE_GOLDEN") : "golden";
	static char kvbuf[IGN_MAX_ARGS][128];
	const char *kv[IGN_MAX_ARGS];
	u32 d;

	for (d = 0; qcore_disciplines[d]; d++) {
		const struct qcore_disc_ops *ops = qcore_disciplines[d];
		char dir[512], path[1024];
		struct dirent *de;
		int cases = 0, cases_for = 0;
		DIR *dp;

		CHECK(!(ops->ignores & ~QCORE_IGNORES__ALL),
		      "%s: unknown ignores bits 0x%x", ops->name, ops->ignores);
		snprintf(dir, sizeof(dir), "%s/%s", root, ops->name);
		dp = opendir(dir);
		while (dp && (de = readdir(dp))) {
			size_t l = strlen(de->d_name);
			u64 seed;
			int nev, mode, i;
			u8 ignores;

			if (l < 6 || strcmp(de->d_name + l - 5, ".args"))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			if (ign_load_args(path, kvbuf, kv, &seed) < 0) {
				CHECK(0, "%s: unreadable", path);
				continue;
			}
			snprintf(path, sizeof(path), "%s/%.*s.events.csv", dir,
				 (int)(l - 5), de->d_name);
			nev = ign_load_events(path);
			CHECK(nev > 0, "%s: no events", path);
			if (nev <= 0)
				continue;
			cases++;
			/* What this case's params ignore: ops->ignores and ignores_for(). */
			CHECK(ign_run(ops->name, kv, seed, nev, 0, 0, ign_ref) == 0, "%s: init", path);
			ignores = qcore_ignores(ops, sim_a.params);
			CHECK(!(ignores & ~QCORE_IGNORES__ALL), "%s: unknown ignores bits 0x%x",
			      path, ignores);
			cases_for += ignores != ops->ignores;
			if (!ignores)
				continue;
			sim_b = sim_a;
			for (mode = 1; mode <= 2; mode++) {
				CHECK(ign_run(ops->name, kv, seed, nev, mode, ignores,
					      ign_out) == 0, "%s: init", path);
				for (i = 0; i < nev && ign_out[i] == ign_ref[i]; i++)
					;
				CHECK(i == nev, "%s: with ignored inputs (0x%x) %s, event %d decides 0x%llx, not 0x%llx",
				      path, ignores, mode == 1 ? "zeroed" : "scrambled", i + 1,
				      (unsigned long long)ign_out[i], (unsigned long long)ign_ref[i]);
				CHECK(!memcmp(sim_a.vars, sim_b.vars, ops->vars_size) &&
				      !memcmp(sim_a.stats, sim_b.stats, ops->stats_size) &&
				      sim_a.rng.state == sim_b.rng.state,
				      "%s: with ignored inputs (0x%x) %s, vars, stats or the generator differ at the end",
				      path, ignores, mode == 1 ? "zeroed" : "scrambled");
			}
		}
		if (dp)
			closedir(dp);
		CHECK(!ops->ignores || cases > 0, "%s claims ignores 0x%x but %s has no case",
		      ops->name, ops->ignores, dir);
		CHECK(!ops->ignores_for || cases_for > 0,
		      "%s ignores more for some params (ignores_for) but %s has no such case",
		      ops->name, dir);
	}
}

int main(void)
{
	RUN(test_rng_splitmix64_known_outputs);
	RUN(test_rng_reproducible_per_seed);
	RUN(test_frac_q32_exact);
	RUN(test_reason_names_and_registry);
	RUN(test_defaults_match_params_init);
	RUN(test_params_ppm_accepts_exact_decimals);
	RUN(test_params_ppm_rejects_inexact_forms);
	RUN(test_params_integer_enum_bool_errors);
	RUN(test_params_unknown_name_lists_valid);
	RUN(test_params_format_round_trip);
	RUN(test_check_params_messages);
	RUN(test_usage_lists_every_param);
	RUN(test_droptail_overflow_at_limit);
	RUN(test_prio_band_selection_and_shared_limit);
	RUN(test_ncq_favours_small_up_to_thresh);
	RUN(test_ncq_fraction_bound_on_mixed_stream);
	RUN(test_ncq_thresh_1_is_strict_priority_for_small);
	RUN(test_ncq_thresh_0_equals_droptail);
	RUN(test_ncq_conf_literal_differs_from_journal);
	RUN(test_ncq_counts_before_overflow);
	RUN(test_ncq_shared_limit);
	RUN(test_ncq_favor_acks);
	RUN(test_ncq_probabilistic_ramp_points);
	RUN(test_ncq_probabilistic_long_run_and_ramp0);
	RUN(test_ncq_reset_clears_vars_only);
	RUN(test_ignores_hold_on_golden_vectors);
	return harness_summary();
}
