// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* red.c - RED with the gentle option (see red.h for the exact rule). */
#include "red.h"

static const struct qcore_param_desc red_param_descs[] = {
	{
		.name = "min_pkts", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct red_params, min_pkts),
		.min = 0, .max = 1000000, .dflt = "5", .unit = "packets",
		.help = "min_th: no early drop while the average backlog is below this (F&J: 5)",
	},
	{
		.name = "max_pkts", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct red_params, max_pkts),
		.min = 1, .max = 1000000, .dflt = "15", .unit = "packets",
		.help = "max_th: p_b reaches max_p here; above it forced drops (gentle: ramp to 1 at 2*max_pkts) (F&J: 15)",
	},
	{
		.name = "max_p", .kind = QCORE_PARAM_PPM,
		.offset = offsetof(struct red_params, max_p_ppm),
		.min = 0, .max = 1000000, .dflt = "0.02", .unit = "fraction",
		.help = "early-drop probability p_b at max_pkts (F&J: 1/50)",
	},
	{
		.name = "w_q", .kind = QCORE_PARAM_PPM,
		.offset = offsetof(struct red_params, w_q_ppm),
		.min = 1, .max = 1000000, .dflt = "0.002", .unit = "fraction",
		.help = "weight of the backlog EWMA per arrival (F&J: 0.002); 1 = instantaneous backlog",
	},
	{
		.name = "limit_pkts", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct red_params, limit_pkts),
		.min = 1, .max = 1000000, .dflt = "100", .unit = "packets",
		.help = "hard limit: packets the AQM admits are dropped (overflow) when this many are queued",
	},
	{
		.name = "pkt_time_ns", .kind = QCORE_PARAM_U64,
		.offset = offsetof(struct red_params, pkt_time_ns),
		.min = 0, .max = 1000000000000ULL, .dflt = "0", .unit = "ns",
		.help = "typical packet transmission time s for idle decay avg*=(1-w_q)^(idle/s); 0 = off (one EWMA step with q=0)",
	},
	{
		.name = "gentle", .kind = QCORE_PARAM_BOOL,
		.offset = offsetof(struct red_params, gentle),
		.min = 0, .max = 1, .dflt = "1", .unit = "bool",
		.help = "between max_pkts and 2*max_pkts p_b rises from max_p to 1 instead of forced drops",
	},
	{
		.name = "ecn", .kind = QCORE_PARAM_BOOL,
		.offset = offsetof(struct red_params, ecn),
		.min = 0, .max = 1, .dflt = "0", .unit = "bool",
		.help = "CE-mark instead of early (probabilistic) drops; forced-region drops stay drops",
	},
};

void red_params_init(struct red_params *p)
{
	p->min_pkts = 5;
	p->max_pkts = 15;
	p->max_p_ppm = 20000;
	p->w_q_ppm = 2000;
	p->limit_pkts = 100;
	p->pkt_time_ns = 0;
	p->gentle = 1;
	p->ecn = 0;
}

void red_vars_init(struct red_vars *v, const struct red_params *p)
{
	v->avg = 0;
	v->count = 0;
	v->idle_since_ns = 0;
	v->idle = 1;
	v->w_q32 = red_ppm_to_q32(p->w_q_ppm);
}

void red_stats_init(struct red_stats *s)
{
	memset(s, 0, sizeof(*s));
}

u64 red_pow_q32(u64 base, u64 m)
{
	u64 result = RED_ONE_Q32;
	u32 i;

	for (i = 0; i < 64 && m && result; i++, m >>= 1) {
		if (m & 1)
			result = red_mul_q32(result, base);
		base = red_mul_q32(base, base);
	}
	return result;
}

u64 red_uniform_q32(u64 p_b, u64 count)
{
	u64 c = count;
	u64 used;

	if (p_b == 0)
		return 0;
	if (p_b >= RED_ONE_Q32 || c >= RED_ONE_Q32 - 1)
		return RED_ONE_Q32;
	if ((c + 1) * p_b >= RED_ONE_Q32)
		return RED_ONE_Q32;
	used = c * p_b;
	return qcore_frac_q32(p_b, RED_ONE_Q32 - used);
}

static u32 red_nbands(const void *params)
{
	(void)params;
	return 1;
}

static int red_check_params(const void *params, char *err, size_t errlen)
{
	const struct red_params *p = params;

	if (qcore_check_param_ranges(red_param_descs, ARRAY_SIZE(red_param_descs),
				     params, err, errlen))
		return -1;
	if (p->min_pkts >= p->max_pkts) {
		snprintf(err, errlen, "min_pkts: must be below max_pkts (%u), got %u",
			 p->max_pkts, p->min_pkts);
		return -1;
	}
	return 0;
}

static void red_reset(const void *params, void *vars)
{
	red_vars_init(vars, params);
}

/* avg after an idle period (red.h); out of line, the rarer arrival. */
static qcore_noinline void red_idle_decay(const struct red_params *p,
					  struct red_vars *v, u64 now_ns)
{
	u64 m = now_ns > v->idle_since_ns ?
		qcore_div64(now_ns - v->idle_since_ns, p->pkt_time_ns) : 0;

	v->avg = red_mul_q32(v->avg, red_pow_q32(RED_ONE_Q32 - v->w_q32, m));
	/* Keep the partial packet time for the next idle arrival. */
	v->idle_since_ns += m * p->pkt_time_ns;
}

/* avg after this arrival, q packets queued before it (red.h). */
static void red_update_avg(const struct red_params *p, struct red_vars *v,
			   u32 q, u64 now_ns)
{
	if (v->idle && q == 0 && p->pkt_time_ns) {
		red_idle_decay(p, v, now_ns);
		return;
	}
	v->avg = red_ewma(v->avg, (u64)q << RED_AVG_SHIFT, v->w_q32);
}

/* p_b in Q0.32 for min <= avg below the forced region (red.h). */
static u64 red_p_b(const struct red_params *p, u64 avg)
{
	u64 min_q = (u64)p->min_pkts << RED_AVG_SHIFT;
	u64 max_q = (u64)p->max_pkts << RED_AVG_SHIFT;

	if (avg < max_q)
		return qcore_frac_q32((u64)p->max_p_ppm * (avg - min_q),
				      (u64)RED_PPM * (max_q - min_q));
	return qcore_frac_q32((u64)p->max_p_ppm * max_q +
			      (u64)(RED_PPM - p->max_p_ppm) * (avg - max_q),
			      (u64)RED_PPM * max_q);
}

/*
 * The AQM's verdict for avg >= min (count updated): a forced drop, or the
 * early-drop draw.  Out of line: the arrival below min, the common case,
 * then needs few registers.
 */
static qcore_noinline struct qcore_decision red_aqm(const struct red_params *p,
						    struct red_vars *v,
						    struct red_stats *st,
						    struct qcore_rng *rng)
{
	struct qcore_decision d = { QCORE_QUEUE, 0, QCORE_REASON_NONE };
	u64 max_q = (u64)p->max_pkts << RED_AVG_SHIFT;
	u64 forced_q = p->gentle ? 2 * max_q : max_q;
	bool early = false;
	u64 p_a;

	if (v->avg >= forced_q) {
		v->count = 0;
		d.verdict = QCORE_DROP;
		d.reason = QCORE_REASON_AQM;
		st->forced++;
		return d;
	}
	p_a = red_uniform_q32(red_p_b(p, v->avg), v->count);
	if (p_a >= RED_ONE_Q32)
		early = true;
	else if (p_a)	/* only a genuinely random decision draws */
		early = qcore_rng_u32(rng) < p_a;
	v->count = early ? 0 : v->count + 1;
	if (early) {
		if (p->ecn) {
			d.verdict = QCORE_MARK;
		} else {
			d.verdict = QCORE_DROP;
			d.reason = QCORE_REASON_AQM;
		}
	}
	return d;
}

static struct qcore_decision red_enqueue(const void *params, void *vars,
					 void *stats,
					 const struct qcore_pkt *pkt,
					 const struct qcore_band_view *bands,
					 struct qcore_rng *rng)
{
	const struct red_params *p = params;
	struct red_vars *v = vars;
	struct red_stats *st = stats;
	struct qcore_decision d = { QCORE_QUEUE, 0, QCORE_REASON_NONE };
	u32 q = bands[0].backlog_pkts;

	red_update_avg(p, v, q, pkt->now_ns);
	if (v->avg < ((u64)p->min_pkts << RED_AVG_SHIFT))
		v->count = 0;
	else
		d = red_aqm(p, v, st, rng);
	if (d.verdict != QCORE_DROP && q >= p->limit_pkts) {
		d.verdict = QCORE_DROP;
		d.reason = QCORE_REASON_OVERFLOW;
	}
	if (d.verdict == QCORE_DROP) {
		st->drops[d.reason]++;
		return d;
	}
	v->idle = 0;
	if (d.verdict == QCORE_MARK)
		st->marked++;
	else
		st->queued++;
	return d;
}

static struct qcore_deq red_dequeue(const void *params, void *vars,
				    const struct qcore_band_view *bands,
				    u64 now_ns)
{
	(void)params;
	(void)vars;
	(void)now_ns;
	return qcore_deq_strict(bands, 1);
}

/* The idle period starts when service empties the queue. */
static void red_dequeued(const void *params, void *vars, void *stats,
			 u32 band, u32 len, u64 now_ns,
			 const struct qcore_band_view *bands_after)
{
	struct red_vars *v = vars;

	(void)params;
	(void)stats;
	(void)band;
	(void)len;
	if (bands_after[0].backlog_pkts == 0) {
		v->idle = 1;
		v->idle_since_ns = now_ns;
	}
}

const struct qcore_disc_ops red_ops = {
	.name = "red",
	.summary = "RED (Floyd & Jacobson 1993) with the gentle option, one band, count-uniformised early drops",
	.params_size = sizeof(struct red_params),
	.vars_size = sizeof(struct red_vars),
	.stats_size = sizeof(struct red_stats),
	.params = red_param_descs,
	.nparams = ARRAY_SIZE(red_param_descs),
	.nbands = red_nbands,
	.check_params = red_check_params,
	.reset = red_reset,
	.enqueue = red_enqueue,
	.dequeue = red_dequeue,
	.dequeued = red_dequeued,
	.check_pkt = NULL,
	.bands_help = "bands: 1 (FIFO); cls and prec are accepted (0..255) and ignored",
	.ignores = QCORE_IGNORES_FLOW_HASH,
};
