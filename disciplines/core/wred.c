// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* wred.c - WRED baseline of rbaqm §3.2 over the low-jitter WFQ (see wred.h). */
#include "wred.h"
#include "red.h"

static const struct qcore_param_desc wred_param_descs[] = {
	{
		.name = "classes", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct wred_params, classes),
		.min = 1, .max = QCORE_MAX_BANDS, .dflt = "4", .unit = "classes",
		.help = "number of classes; band = class = cls, WFQ scans 0 first (rbaqm: 4)",
	},
	{
		.name = "q_pkts", .kind = QCORE_PARAM_U32_LIST,
		.offset = offsetof(struct wred_params, q_pkts),
		.min = 1, .max = 1000000, .dflt = "10", .unit = "packets",
		.help = "per-class max queue q (list, or one value for all): P = B_w/q, hard drop at q (rbaqm: 10; 5/10/20)",
	},
	{
		.name = "w_q", .kind = QCORE_PARAM_PPM,
		.offset = offsetof(struct wred_params, w_q_ppm),
		.min = 1, .max = 1000000, .dflt = "0.002", .unit = "fraction",
		.help = "weight of each class's backlog EWMA B_w per arrival (not in rbaqm; RED's 0.002)",
	},
	{
		.name = "weights_bytes", .kind = QCORE_PARAM_U32_LIST,
		.offset = offsetof(struct wred_params, weights_bytes),
		.min = 1, .max = WFQ_MAX_QUANTUM_BYTES, .dflt = "1001:501:251:126", .unit = "bytes",
		.help = "WFQ quantum W per class (list, or one value for all); rbaqm's 8001:4001:2001:1001 bits in bytes",
	},
	{
		.name = "maxs_bytes", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct wred_params, maxs_bytes),
		.min = 1, .max = WFQ_MAX_MAXS_BYTES, .dflt = "3000", .unit = "bytes",
		.help = "WFQ credit cap MaxS: refills only while a credit is below it (not in rbaqm)",
	},
	{
		.name = "ecn", .kind = QCORE_PARAM_BOOL,
		.offset = offsetof(struct wred_params, ecn),
		.min = 0, .max = 1, .dflt = "0", .unit = "bool",
		.help = "CE-mark instead of the probabilistic (aqm) drop; the hard limit still drops",
	},
};

void wred_params_init(struct wred_params *p)
{
	static const u32 paper_weights_bytes[] = { 1001, 501, 251, 126 };

	memset(p, 0, sizeof(*p));
	p->classes = 4;
	p->q_pkts[0] = 10;
	p->w_q_ppm = 2000;
	memcpy(p->weights_bytes, paper_weights_bytes, sizeof(paper_weights_bytes));
	p->maxs_bytes = 3000;
	p->ecn = 0;
}

void wred_vars_init(struct wred_vars *v, const struct wred_params *p)
{
	u32 i;

	memset(v, 0, sizeof(*v));
	v->w_q32 = red_ppm_to_q32(p->w_q_ppm);
	for (i = 0; i < QCORE_MAX_BANDS; i++) {
		v->q_pkts[i] = wfq_list_at(p->q_pkts, i);
		v->quantum_bytes[i] = wfq_list_at(p->weights_bytes, i);
	}
	wfq_vars_init(&v->wfq);
}

void wred_stats_init(struct wred_stats *s)
{
	memset(s, 0, sizeof(*s));
}

/*
 * floor(2^32 B_w / (q 2^20)) = floor(2^12 B_w / q): the 2^20 of B_w's
 * Q44.20 cancels, and B_w < q 2^20 < 2^52 keeps 2^12 B_w below 2^64, so
 * one 64-bit division gives qcore_frac_q32(B_w, q 2^20) exactly.
 */
static inline u64 wred_prob(u64 avg, u32 q_pkts)
{
	if (avg >= (u64)q_pkts << RED_AVG_SHIFT)
		return RED_ONE_Q32;
	return qcore_div64(avg << (32 - RED_AVG_SHIFT), q_pkts);
}

u64 wred_prob_q32(u64 avg, u32 q_pkts)
{
	return wred_prob(avg, q_pkts);
}

static u32 wred_nbands(const void *params)
{
	const struct wred_params *p = params;

	return p->classes;
}

static int wred_check_params(const void *params, char *err, size_t errlen)
{
	const struct wred_params *p = params;

	if (qcore_check_param_ranges(wred_param_descs, ARRAY_SIZE(wred_param_descs),
				     params, err, errlen) ||
	    wfq_check_list("q_pkts", p->q_pkts, p->classes, err, errlen) ||
	    wfq_check_list("weights_bytes", p->weights_bytes, p->classes, err, errlen))
		return -1;
	return 0;
}

static int wred_check_pkt(const void *params, const struct qcore_pkt *pkt,
			  char *err, size_t errlen)
{
	const struct wred_params *p = params;

	return qcore_check_cls(pkt->cls, p->classes, "classes", err, errlen);
}

static void wred_reset(const void *params, void *vars)
{
	wred_vars_init(vars, params);
}

static struct qcore_decision wred_enqueue(const void *params, void *vars,
					  void *stats,
					  const struct qcore_pkt *pkt,
					  const struct qcore_band_view *bands,
					  struct qcore_rng *rng)
{
	const struct wred_params *p = params;
	struct wred_vars *v = vars;
	struct wred_stats *st = stats;
	struct qcore_decision d = { QCORE_QUEUE, 0, QCORE_REASON_NONE };
	u32 i = pkt->cls < p->classes ? pkt->cls : p->classes - 1;
	u32 b = bands[i].backlog_pkts;
	bool hit;
	u64 prob;

	d.band = (u8)i;
	v->avg[i] = red_ewma(v->avg[i], (u64)b << RED_AVG_SHIFT, v->w_q32);
	prob = wred_prob(v->avg[i], v->q_pkts[i]);
	if (prob >= RED_ONE_Q32)
		hit = true;
	else if (prob)		/* only a genuinely random decision draws */
		hit = qcore_rng_u32(rng) < prob;
	else
		hit = false;
	if (hit) {
		if (p->ecn) {
			d.verdict = QCORE_MARK;
		} else {
			d.verdict = QCORE_DROP;
			d.reason = QCORE_REASON_AQM;
		}
	}
	if (d.verdict != QCORE_DROP && b >= v->q_pkts[i]) {
		d.verdict = QCORE_DROP;
		d.reason = QCORE_REASON_OVERFLOW;
	}
	if (d.verdict == QCORE_DROP) {
		st->dropped[i]++;
		st->drops[d.reason]++;
	} else if (d.verdict == QCORE_MARK) {
		st->marked[i]++;
	} else {
		st->queued[i]++;
	}
	return d;
}

static struct qcore_deq wred_dequeue(const void *params, void *vars,
				     const struct qcore_band_view *bands,
				     u64 now_ns)
{
	const struct wred_params *p = params;
	struct wred_vars *v = vars;

	(void)now_ns;
	return wfq_select(&v->wfq, v->quantum_bytes, p->classes, p->maxs_bytes,
			  bands);
}

static void wred_dequeued(const void *params, void *vars, void *stats,
			  u32 band, u32 len, u64 now_ns,
			  const struct qcore_band_view *bands_after)
{
	struct wred_vars *v = vars;

	(void)params;
	(void)stats;
	(void)now_ns;
	(void)bands_after;
	wfq_charge(&v->wfq, band, len);
}

const struct qcore_disc_ops wred_ops = {
	.name = "wred",
	.summary = "WRED baseline of rbaqm: per-class P = B_w/q, hard drop at q, low-jitter WFQ",
	.params_size = sizeof(struct wred_params),
	.vars_size = sizeof(struct wred_vars),
	.stats_size = sizeof(struct wred_stats),
	.params = wred_param_descs,
	.nparams = ARRAY_SIZE(wred_param_descs),
	.nbands = wred_nbands,
	.check_params = wred_check_params,
	.reset = wred_reset,
	.enqueue = wred_enqueue,
	.dequeue = wred_dequeue,
	.dequeued = wred_dequeued,
	.check_pkt = wred_check_pkt,
	.bands_help = "bands: `classes` (band = class = cls, must be < classes); low-jitter WFQ scans class 0 first; prec is accepted (0..255) and ignored",
	.ignores = QCORE_IGNORES_TIME | QCORE_IGNORES_FLOW_HASH,
};
