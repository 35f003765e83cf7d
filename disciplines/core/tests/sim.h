/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sim.h - the minimal adapter the core's C tests drive a discipline with:
 * one FIFO per band, the band views the core reads, and head drops
 * handled as the replay handles them (drop, dequeued(), ask again).
 * Shared by test_core.c, test_disc_aqm.c and test_disc_cqaqm_srd.c.
 */
#ifndef QCORE_TEST_SIM_H
#define QCORE_TEST_SIM_H

#include <stdio.h>
#include <string.h>
#include "qcore.h"

#define SIM_CAP 8192

struct sim_fifo {
	u64 id[SIM_CAP];
	u32 len[SIM_CAP];
	u64 arrival[SIM_CAP];
	u32 head, n;
	u64 bytes;
};

struct sim {
	const struct qcore_disc_ops *ops;
	_Alignas(16) unsigned char params[512];
	_Alignas(16) unsigned char vars[8192];
	_Alignas(16) unsigned char stats[1024];
	u32 nbands;
	struct sim_fifo q[QCORE_MAX_BANDS];
	struct qcore_rng rng;
	u64 next_id;
	u64 head_drops;		/* packets dropped at the head */
	u64 last_head_drop_id;
	u64 last_head_drop_arrival;
};

/*
 * disc with kv (NULL-terminated "name=value" strings) over its defaults,
 * checked, reset, its generator seeded; 0, or -1 with the reason printed.
 */
static inline int sim_init(struct sim *s, const char *disc, const char *const *kv,
		    u64 seed)
{
	char err[QCORE_ERRLEN], name[64];

	memset(s, 0, sizeof(*s));
	s->ops = qcore_find(disc);
	if (!s->ops || s->ops->params_size > sizeof(s->params) ||
	    s->ops->vars_size > sizeof(s->vars) ||
	    s->ops->stats_size > sizeof(s->stats)) {
		printf("  sim_init: %s missing or too large\n", disc);
		return -1;
	}
	if (qcore_params_defaults(s->ops, s->params, err, sizeof(err)))
		return -1;
	for (; kv && *kv; kv++) {
		const char *eq = strchr(*kv, '=');

		snprintf(name, sizeof(name), "%.*s", (int)(eq - *kv), *kv);
		if (qcore_params_set(s->ops, s->params, name, eq + 1, err, sizeof(err))) {
			printf("  sim_init: %s\n", err);
			return -1;
		}
	}
	if (s->ops->check_params(s->params, err, sizeof(err))) {
		printf("  sim_init: %s\n", err);
		return -1;
	}
	s->nbands = s->ops->nbands(s->params);
	s->ops->reset(s->params, s->vars);
	qcore_rng_seed(&s->rng, seed);
	return 0;
}

static inline void sim_views(const struct sim *s, struct qcore_band_view *v)
{
	u32 b;

	memset(v, 0, sizeof(*v) * QCORE_MAX_BANDS);
	for (b = 0; b < s->nbands; b++) {
		const struct sim_fifo *f = &s->q[b];

		v[b].backlog_pkts = f->n;
		v[b].backlog_bytes = f->bytes;
		if (f->n) {
			v[b].head_len = f->len[f->head];
			v[b].head_arrival_ns = f->arrival[f->head];
		}
	}
}

/* One arrival (pkt->now_ns, len, cls, ...): the core's decision, applied. */
static inline struct qcore_decision sim_enq_pkt(struct sim *s, const struct qcore_pkt *pkt)
{
	struct qcore_band_view v[QCORE_MAX_BANDS];
	struct qcore_decision d;
	u64 id = s->next_id++;

	sim_views(s, v);
	d = s->ops->enqueue(s->params, s->vars, s->stats, pkt, v, &s->rng);
	if (d.verdict != QCORE_DROP && d.band < s->nbands && s->q[d.band].n < SIM_CAP) {
		struct sim_fifo *f = &s->q[d.band];
		u32 tail = (f->head + f->n) % SIM_CAP;

		f->id[tail] = id;
		f->len[tail] = pkt->len;
		f->arrival[tail] = pkt->now_ns;
		f->n++;
		f->bytes += pkt->len;
	}
	return d;
}

/* Take band's head packet out and tell the core; its id. */
static inline u64 sim_pop(struct sim *s, u32 band, u32 *len, u64 *arrival, u64 now)
{
	struct qcore_band_view v[QCORE_MAX_BANDS];
	struct sim_fifo *f = &s->q[band];
	u64 id = f->id[f->head];

	*len = f->len[f->head];
	*arrival = f->arrival[f->head];
	f->head = (f->head + 1) % SIM_CAP;
	f->n--;
	f->bytes -= *len;
	sim_views(s, v);
	s->ops->dequeued(s->params, s->vars, s->stats, band, *len, now, v);
	return id;
}

/*
 * One dequeue: head drops (counted) then the sent packet's id, or -1 when
 * nothing is sent.  *band, *len and *arrival describe the sent packet.
 */
static inline long long sim_deq_full(struct sim *s, u64 now, u32 *band, u32 *len,
			      u64 *arrival)
{
	struct qcore_band_view v[QCORE_MAX_BANDS];
	struct qcore_deq d;
	u32 round, l;
	u64 a, id;

	for (round = 0; round <= SIM_CAP * 2; round++) {
		sim_views(s, v);
		d = s->ops->dequeue(s->params, s->vars, v, now);
		if (d.action == QCORE_DEQ_EMPTY || d.band >= s->nbands || !s->q[d.band].n)
			return -1;
		if (d.action == QCORE_DEQ_DROP_HEAD) {
			id = sim_pop(s, d.band, &l, &a, now);
			s->head_drops++;
			s->last_head_drop_id = id;
			s->last_head_drop_arrival = a;
			continue;
		}
		*band = d.band;
		return (long long)sim_pop(s, d.band, len, arrival, now);
	}
	return -1;
}

/* The sent packet's id and band, or -1 when nothing is sent. */
static inline long long sim_deq(struct sim *s, u64 now, u32 *band)
{
	u32 len;
	u64 arrival;

	return sim_deq_full(s, now, band, &len, &arrival);
}

#endif /* QCORE_TEST_SIM_H */
