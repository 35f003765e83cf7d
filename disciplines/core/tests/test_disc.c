// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * test_disc.c - test-only disciplines for qcore-replay-testdisc, so that the
 * replay's generic mechanisms no production discipline uses yet (head
 * drops, contract checks) are tested before RD needs them.
 *
 * headdrop: one FIFO band; at dequeue, a head packet that has waited more
 * than d_ns is dropped (reason delay) and the discipline is asked again,
 * like RD's D queue.  broken=1 answers enqueue with a band that does not
 * exist, which the replay must refuse with exit 3.
 */
#include "qcore.h"

struct headdrop_params {
	u64 d_ns;
	u8 broken;
};

struct headdrop_vars {
	u64 served;
};

struct headdrop_stats {
	u64 dequeued;
};

static const struct qcore_param_desc headdrop_param_descs[] = {
	{ .name = "d_ns", .kind = QCORE_PARAM_U64,
	  .offset = offsetof(struct headdrop_params, d_ns),
	  .min = 0, .max = UINT64_MAX, .dflt = "10", .unit = "ns",
	  .help = "drop head packets that waited longer than this" },
	{ .name = "broken", .kind = QCORE_PARAM_BOOL,
	  .offset = offsetof(struct headdrop_params, broken),
	  .min = 0, .max = 1, .dflt = "0", .unit = "bool",
	  .help = "return an invalid band on enqueue" },
};

static u32 headdrop_nbands(const void *params)
{
	(void)params;
	return 1;
}

static int headdrop_check_params(const void *params, char *err, size_t errlen)
{
	return qcore_check_param_ranges(headdrop_param_descs,
					ARRAY_SIZE(headdrop_param_descs),
					params, err, errlen);
}

static void headdrop_reset(const void *params, void *vars)
{
	(void)params;
	memset(vars, 0, sizeof(struct headdrop_vars));
}

static struct qcore_decision headdrop_enqueue(const void *params, void *vars,
					      void *stats,
					      const struct qcore_pkt *pkt,
					      const struct qcore_band_view *bands,
					      struct qcore_rng *rng)
{
	const struct headdrop_params *p = params;
	struct qcore_decision d = { QCORE_QUEUE, 0, QCORE_REASON_NONE };

	(void)vars;
	(void)stats;
	(void)pkt;
	(void)bands;
	(void)rng;
	if (p->broken)
		d.band = 3;
	return d;
}

static struct qcore_deq headdrop_dequeue(const void *params, void *vars,
					 const struct qcore_band_view *bands,
					 u64 now_ns)
{
	const struct headdrop_params *p = params;
	struct qcore_deq d = { QCORE_DEQ_EMPTY, 0, QCORE_REASON_NONE };

	(void)vars;
	if (!bands[0].backlog_pkts)
		return d;
	if (now_ns - bands[0].head_arrival_ns > p->d_ns) {
		d.action = QCORE_DEQ_DROP_HEAD;
		d.reason = QCORE_REASON_DELAY;
	} else {
		d.action = QCORE_DEQ_SERVE;
	}
	return d;
}

static void headdrop_dequeued(const void *params, void *vars, void *stats,
			      u32 band, u32 len, u64 now_ns,
			      const struct qcore_band_view *bands_after)
{
	struct headdrop_stats *st = stats;

	(void)params;
	(void)vars;
	(void)band;
	(void)len;
	(void)now_ns;
	(void)bands_after;
	st->dequeued++;
}

static const struct qcore_disc_ops headdrop_ops = {
	.name = "headdrop",
	.summary = "test only: FIFO dropping heads older than d_ns",
	.params_size = sizeof(struct headdrop_params),
	.vars_size = sizeof(struct headdrop_vars),
	.stats_size = sizeof(struct headdrop_stats),
	.params = headdrop_param_descs,
	.nparams = ARRAY_SIZE(headdrop_param_descs),
	.nbands = headdrop_nbands,
	.check_params = headdrop_check_params,
	.reset = headdrop_reset,
	.enqueue = headdrop_enqueue,
	.dequeue = headdrop_dequeue,
	.dequeued = headdrop_dequeued,
	.bands_help = "bands: 1",
};

/* Replaces qcore_find() in qcore-replay-testdisc (see replay.c). */
const struct qcore_disc_ops *test_find(const char *name);
const struct qcore_disc_ops *test_find(const char *name)
{
	if (name && strcmp(name, headdrop_ops.name) == 0)
		return &headdrop_ops;
	return qcore_find(name);
}
