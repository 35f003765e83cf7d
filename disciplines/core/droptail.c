// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* droptail.c - FIFO with a packet limit (see droptail.h). */
#include "droptail.h"

static const struct qcore_param_desc droptail_param_descs[] = {
	{
		.name = "limit_pkts", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct droptail_params, limit_pkts),
		.min = 1, .max = 1000000, .dflt = "100", .unit = "packets",
		.help = "buffer size; arrivals finding this many packets queued are dropped",
	},
};

void droptail_params_init(struct droptail_params *p)
{
	p->limit_pkts = 100;
}

void droptail_vars_init(struct droptail_vars *v)
{
	v->unused = 0;
}

void droptail_stats_init(struct droptail_stats *s)
{
	memset(s, 0, sizeof(*s));
}

static u32 droptail_nbands(const void *params)
{
	(void)params;
	return 1;
}

static int droptail_check_params(const void *params, char *err, size_t errlen)
{
	return qcore_check_param_ranges(droptail_param_descs,
					ARRAY_SIZE(droptail_param_descs),
					params, err, errlen);
}

static void droptail_reset(const void *params, void *vars)
{
	(void)params;
	droptail_vars_init(vars);
}

static struct qcore_decision droptail_enqueue(const void *params, void *vars,
					      void *stats,
					      const struct qcore_pkt *pkt,
					      const struct qcore_band_view *bands,
					      struct qcore_rng *rng)
{
	const struct droptail_params *p = params;
	struct droptail_stats *st = stats;
	struct qcore_decision d = { QCORE_QUEUE, 0, QCORE_REASON_NONE };

	(void)vars;
	(void)pkt;
	(void)rng;
	if (bands[0].backlog_pkts >= p->limit_pkts) {
		d.verdict = QCORE_DROP;
		d.reason = QCORE_REASON_OVERFLOW;
		st->drops[d.reason]++;
	} else {
		st->queued++;
	}
	return d;
}

static struct qcore_deq droptail_dequeue(const void *params, void *vars,
					 const struct qcore_band_view *bands,
					 u64 now_ns)
{
	(void)params;
	(void)vars;
	(void)now_ns;
	return qcore_deq_strict(bands, 1);
}

/* Service does not change a FIFO's state. */
static void droptail_dequeued(const void *params, void *vars, void *stats,
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

const struct qcore_disc_ops droptail_ops = {
	.name = "droptail",
	.summary = "FIFO with a packet limit (tail drop)",
	.params_size = sizeof(struct droptail_params),
	.vars_size = sizeof(struct droptail_vars),
	.stats_size = sizeof(struct droptail_stats),
	.params = droptail_param_descs,
	.nparams = ARRAY_SIZE(droptail_param_descs),
	.nbands = droptail_nbands,
	.check_params = droptail_check_params,
	.reset = droptail_reset,
	.enqueue = droptail_enqueue,
	.dequeue = droptail_dequeue,
	.dequeued = droptail_dequeued,
	.check_pkt = NULL,
	.bands_help = "bands: 1 (band 0, FIFO); cls and prec are accepted (0..255) and ignored",
	.ignores = QCORE_IGNORES_TIME | QCORE_IGNORES_FLOW_HASH | QCORE_IGNORES_DEQUEUED,
};
