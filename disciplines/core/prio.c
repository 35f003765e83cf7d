// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* prio.c - strict priority with a shared packet limit (see prio.h). */
#include "prio.h"

static const struct qcore_param_desc prio_param_descs[] = {
	{
		.name = "bands", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct prio_params, bands),
		.min = 2, .max = QCORE_MAX_BANDS, .dflt = "2", .unit = "bands",
		.help = "number of bands; a packet's cls is its band, band 0 is served first",
	},
	{
		.name = "limit_pkts", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct prio_params, limit_pkts),
		.min = 1, .max = 1000000, .dflt = "100", .unit = "packets",
		.help = "buffer shared by all bands; arrivals finding this many packets queued are dropped",
	},
};

void prio_params_init(struct prio_params *p)
{
	p->bands = 2;
	p->limit_pkts = 100;
}

void prio_vars_init(struct prio_vars *v)
{
	v->unused = 0;
}

void prio_stats_init(struct prio_stats *s)
{
	memset(s, 0, sizeof(*s));
}

static u32 prio_nbands(const void *params)
{
	const struct prio_params *p = params;

	return p->bands;
}

static int prio_check_params(const void *params, char *err, size_t errlen)
{
	return qcore_check_param_ranges(prio_param_descs,
					ARRAY_SIZE(prio_param_descs),
					params, err, errlen);
}

static int prio_check_pkt(const void *params, const struct qcore_pkt *pkt,
			  char *err, size_t errlen)
{
	const struct prio_params *p = params;

	return qcore_check_cls(pkt->cls, p->bands, "bands", err, errlen);
}

static void prio_reset(const void *params, void *vars)
{
	(void)params;
	prio_vars_init(vars);
}

static struct qcore_decision prio_enqueue(const void *params, void *vars,
					  void *stats,
					  const struct qcore_pkt *pkt,
					  const struct qcore_band_view *bands,
					  struct qcore_rng *rng)
{
	const struct prio_params *p = params;
	struct prio_stats *st = stats;
	struct qcore_decision d = { QCORE_QUEUE, 0, QCORE_REASON_NONE };

	(void)vars;
	(void)rng;
	d.band = pkt->cls < p->bands ? pkt->cls : (u8)(p->bands - 1);
	if (qcore_total_pkts(bands, p->bands) >= p->limit_pkts) {
		d.verdict = QCORE_DROP;
		d.reason = QCORE_REASON_OVERFLOW;
		st->drops[d.reason]++;
	} else {
		st->queued[d.band]++;
	}
	return d;
}

static struct qcore_deq prio_dequeue(const void *params, void *vars,
				     const struct qcore_band_view *bands,
				     u64 now_ns)
{
	const struct prio_params *p = params;

	(void)vars;
	(void)now_ns;
	return qcore_deq_strict(bands, p->bands);
}

/* Service does not change strict priority's state. */
static void prio_dequeued(const void *params, void *vars, void *stats,
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

const struct qcore_disc_ops prio_ops = {
	.name = "prio",
	.summary = "strict priority over 2..8 bands with a shared packet limit",
	.params_size = sizeof(struct prio_params),
	.vars_size = sizeof(struct prio_vars),
	.stats_size = sizeof(struct prio_stats),
	.params = prio_param_descs,
	.nparams = ARRAY_SIZE(prio_param_descs),
	.nbands = prio_nbands,
	.check_params = prio_check_params,
	.reset = prio_reset,
	.enqueue = prio_enqueue,
	.dequeue = prio_dequeue,
	.dequeued = prio_dequeued,
	.check_pkt = prio_check_pkt,
	.bands_help = "bands: `bands` (band = cls, must be < bands; band 0 served first); prec is accepted (0..255) and ignored",
	.ignores = QCORE_IGNORES_TIME | QCORE_IGNORES_FLOW_HASH | QCORE_IGNORES_DEQUEUED,
};
