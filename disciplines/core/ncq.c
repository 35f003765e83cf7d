// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* ncq.c - Non-Congestive Queuing (see ncq.h for the exact rule). */
#include "ncq.h"

#define NCQ_PPM 1000000ULL
#define NCQ_P_ONE (1ULL << 32)	/* probability 1 in Q0.32, held in a u64 */

static const struct qcore_param_desc ncq_param_descs[] = {
	{
		.name = "size_bytes", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct ncq_params, size_bytes),
		.min = 1, .max = 65535, .dflt = "130", .unit = "bytes",
		.help = "IP packets strictly shorter than this are candidates for priority (ncq-conf: 100)",
	},
	{
		.name = "thresh", .kind = QCORE_PARAM_PPM,
		.offset = offsetof(struct ncq_params, thresh_ppm),
		.min = 0, .max = 1000000, .dflt = "0.05", .unit = "fraction",
		.help = "bound on favoured/received (ncqthresh); 0 gives DropTail, 1 full priority for small packets",
	},
	{
		.name = "limit_pkts", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct ncq_params, limit_pkts),
		.min = 1, .max = 1000000, .dflt = "100", .unit = "packets",
		.help = "buffer shared by both bands; arrivals finding this many packets queued are dropped",
	},
	{
		.name = "variant", .kind = QCORE_PARAM_ENUM,
		.offset = offsetof(struct ncq_params, variant),
		.dflt = "journal", .unit = "choice", .choices = "journal|conf-literal",
		.help = "journal: bound favoured packets; conf-literal: ncq-conf's printed pseudo-code (counts normal packets), ablation only",
	},
	{
		.name = "mode", .kind = QCORE_PARAM_ENUM,
		.offset = offsetof(struct ncq_params, mode),
		.dflt = "deterministic", .unit = "choice", .choices = "deterministic|probabilistic",
		.help = "probabilistic: priority with a probability falling linearly from 1 to 0 as favoured/received rises from thresh*(1-ramp) to thresh",
	},
	{
		.name = "favor_acks", .kind = QCORE_PARAM_BOOL,
		.offset = offsetof(struct ncq_params, favor_acks),
		.min = 0, .max = 1, .dflt = "0", .unit = "bool",
		.help = "treat pure TCP ACKs as small whatever their length (ncq-journal §6)",
	},
	{
		.name = "ramp", .kind = QCORE_PARAM_PPM,
		.offset = offsetof(struct ncq_params, ramp_ppm),
		.min = 0, .max = 1000000, .dflt = "0.5", .unit = "fraction",
		.help = "probabilistic mode only: width of the ramp below thresh, as a fraction of thresh",
	},
};

void ncq_params_init(struct ncq_params *p)
{
	p->size_bytes = 130;
	p->thresh_ppm = 50000;
	p->limit_pkts = 100;
	p->ramp_ppm = 500000;
	p->variant = NCQ_VARIANT_JOURNAL;
	p->mode = NCQ_MODE_DETERMINISTIC;
	p->favor_acks = 0;
}

void ncq_vars_init(struct ncq_vars *v)
{
	v->received = 0;
	v->counted = 0;
}

void ncq_stats_init(struct ncq_stats *s)
{
	memset(s, 0, sizeof(*s));
}

static u32 ncq_nbands(const void *params)
{
	(void)params;
	return 2;
}

static int ncq_check_params(const void *params, char *err, size_t errlen)
{
	return qcore_check_param_ranges(ncq_param_descs,
					ARRAY_SIZE(ncq_param_descs),
					params, err, errlen);
}

static void ncq_reset(const void *params, void *vars)
{
	(void)params;
	ncq_vars_init(vars);
}

static bool ncq_small(const struct ncq_params *p, const struct qcore_pkt *pkt)
{
	if (p->favor_acks && (pkt->flags & QCORE_PKT_PURE_ACK))
		return true;
	return pkt->len < p->size_bytes;
}

/* floor(x * ppm / 10^6) without overflowing x * ppm. */
static u64 ncq_scale_ppm(u64 x, u32 ppm)
{
	u64 q = qcore_div64(x, NCQ_PPM);
	u64 r = x - q * NCQ_PPM;

	return q * ppm + qcore_div64(r * ppm, NCQ_PPM);
}

/*
 * Probability (Q0.32, NCQ_P_ONE = 1) that a small packet is favoured given
 * the counter and received (already incremented).  See ncq.h.
 */
static u64 ncq_priority_q32(const struct ncq_params *p, u64 counted,
			    u64 received)
{
	u64 allowed = (u64)p->thresh_ppm * received;
	u64 used = counted * NCQ_PPM;
	u64 margin, width;

	if (used >= allowed)
		return 0;
	if (p->mode == NCQ_MODE_DETERMINISTIC)
		return NCQ_P_ONE;
	margin = allowed - used;
	width = ncq_scale_ppm(allowed, p->ramp_ppm);
	if (margin >= width)
		return NCQ_P_ONE;
	return qcore_frac_q32(margin, width);
}

static bool ncq_favour(const struct ncq_params *p, const struct ncq_vars *v,
		       const struct qcore_pkt *pkt, struct qcore_rng *rng)
{
	u64 prob;

	if (!ncq_small(p, pkt))
		return false;
	prob = ncq_priority_q32(p, v->counted, v->received);
	if (prob == 0)
		return false;
	if (prob == NCQ_P_ONE)
		return true;
	/* Only a genuinely random decision advances the generator. */
	return qcore_rng_u32(rng) < prob;
}

static struct qcore_decision ncq_enqueue(const void *params, void *vars,
					 void *stats,
					 const struct qcore_pkt *pkt,
					 const struct qcore_band_view *bands,
					 struct qcore_rng *rng)
{
	const struct ncq_params *p = params;
	struct ncq_vars *v = vars;
	struct ncq_stats *st = stats;
	struct qcore_decision d = { QCORE_QUEUE, NCQ_BAND_NORMAL, QCORE_REASON_NONE };
	bool favoured;

	v->received++;
	favoured = ncq_favour(p, v, pkt, rng);
	if (favoured) {
		d.band = NCQ_BAND_FAVOURED;
		st->favoured++;
	} else {
		st->normal++;
	}
	/* conf-literal counts in the else branch, as printed in ncq-conf. */
	if (favoured == (p->variant == NCQ_VARIANT_JOURNAL))
		v->counted++;

	/* Counted above, before admission: a dropped packet was still received. */
	if (qcore_total_pkts(bands, 2) >= p->limit_pkts) {
		d.verdict = QCORE_DROP;
		d.reason = QCORE_REASON_OVERFLOW;
		st->drops[d.reason]++;
	}
	return d;
}

static struct qcore_deq ncq_dequeue(const void *params, void *vars,
				    const struct qcore_band_view *bands,
				    u64 now_ns)
{
	(void)params;
	(void)vars;
	(void)now_ns;
	return qcore_deq_strict(bands, 2);
}

/* NCQ's state depends on arrivals only. */
static void ncq_dequeued(const void *params, void *vars, void *stats,
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

const struct qcore_disc_ops ncq_ops = {
	.name = "ncq",
	.summary = "Non-Congestive Queuing: small packets first, bounded to a fraction thresh of arrivals",
	.params_size = sizeof(struct ncq_params),
	.vars_size = sizeof(struct ncq_vars),
	.stats_size = sizeof(struct ncq_stats),
	.params = ncq_param_descs,
	.nparams = ARRAY_SIZE(ncq_param_descs),
	.nbands = ncq_nbands,
	.check_params = ncq_check_params,
	.reset = ncq_reset,
	.enqueue = ncq_enqueue,
	.dequeue = ncq_dequeue,
	.dequeued = ncq_dequeued,
	.check_pkt = NULL,
	.bands_help = "bands: 2 (band 0 favoured, served first; band 1 normal); cls and prec are accepted (0..255) and ignored",
	.ignores = QCORE_IGNORES_TIME | QCORE_IGNORES_FLOW_HASH | QCORE_IGNORES_DEQUEUED,
};
