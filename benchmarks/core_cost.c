// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * core_cost.c - drive one core discipline with a synthetic packet stream so
 * that callgrind can count the instructions of its entry points only.
 *
 *     core_cost DISC PACKETS [--kernel-workload] [--param NAME=VALUE]...
 *
 * Every packet is enqueued once and, unless dropped, dequeued once; the
 * arrival pattern keeps the queue between empty and a few dozen packets
 * (bursts of 1-8 arrivals, then as many dequeues), sizes are a mix of
 * 64/576/1500 bytes, classes cycle over the discipline's bands and
 * precedences over 0/1.  With --kernel-workload, the packets of the kernel
 * qdiscs' benchmark instead (disciplines/linux/tests/kunit/qlab_bench.c:
 * batches of 64, sizes 64..1500 and ToS 0x00/0x08/0x28 in its order,
 * classified by qcore_pkt_set_tos(), each batch drained): the core's share
 * of benchmarks/kernel-qdisc.sh's figures.  The adapter side here (FIFOs, band views) is
 * deliberately outside the measured functions: benchmarks/core-cost.sh
 * collects only inside bench_enqueue/bench_dequeue's callees (the ops).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qcore.h"

#define RING 4096
#define KERNEL_BATCH 64	/* qlab_bench.c's default batch */

struct fifo {
	u32 len[RING];
	u64 arrival[RING];
	u32 head, count;
	u64 bytes;
};

static struct fifo queues[QCORE_MAX_BANDS];
static struct qcore_band_view views[QCORE_MAX_BANDS];

static void fill_views(u32 nbands)
{
	for (u32 b = 0; b < nbands; b++) {
		struct fifo *q = &queues[b];

		views[b].backlog_pkts = q->count;
		views[b].backlog_bytes = q->bytes;
		views[b].head_len = q->count ? q->len[q->head] : 0;
		views[b].head_arrival_ns = q->count ? q->arrival[q->head] : 0;
	}
}

/* The measured calls: callgrind toggles collection around the ops they make. */
__attribute__((noinline)) static struct qcore_decision
qcore_bench_enqueue(const struct qcore_disc_ops *ops, const void *p, void *v, void *s,
		    const struct qcore_pkt *pkt, struct qcore_rng *rng)
{
	return ops->enqueue(p, v, s, pkt, views, rng);
}

__attribute__((noinline)) static struct qcore_deq
qcore_bench_dequeue(const struct qcore_disc_ops *ops, const void *p, void *v, u64 now)
{
	return ops->dequeue(p, v, views, now);
}

__attribute__((noinline)) static void
qcore_bench_dequeued(const struct qcore_disc_ops *ops, const void *p, void *v, void *s,
		     u32 band, u32 len, u64 now)
{
	ops->dequeued(p, v, s, band, len, now, views);
}

/* Queue a packet in the band the discipline chose: 0, or -1 (said why). */
static int fifo_push(u32 b, u32 nbands, u32 len, u64 now)
{
	struct fifo *q = &queues[b];
	u32 at;

	if (b >= nbands) {
		fprintf(stderr, "core_cost: enqueue answer names band %u of %u\n", b, nbands);
		return -1;
	}
	if (q->count == RING) {
		fprintf(stderr, "core_cost: benchmark FIFO full\n");
		return -1;
	}
	at = (q->head + q->count) % RING;
	q->len[at] = len;
	q->arrival[at] = now;
	q->count++;
	q->bytes += len;
	return 0;
}

static u32 fifo_pop(u32 b)
{
	struct fifo *q = &queues[b];
	u32 len = q->len[q->head];

	q->head = (q->head + 1) % RING;
	q->count--;
	q->bytes -= len;
	return len;
}

/*
 * One dequeue and, unless the discipline is empty, the head it names taken
 * (served, or dropped by RD: either way it leaves) and reported: 1, 0 when
 * empty, -1 for an answer naming no packet.
 */
static int serve_one(const struct qcore_disc_ops *ops, const void *p, void *v, void *s,
		     u32 nbands, u64 *now)
{
	struct qcore_deq d;
	u32 len;

	*now += 1000;
	fill_views(nbands);
	d = qcore_bench_dequeue(ops, p, v, *now);
	if (d.action == QCORE_DEQ_EMPTY)
		return 0;
	if (d.band >= nbands || !queues[d.band].count) {
		fprintf(stderr, "core_cost: dequeue answer %u names band %u, empty or absent\n",
			d.action, d.band);
		return -1;
	}
	len = fifo_pop(d.band);
	fill_views(nbands);
	qcore_bench_dequeued(ops, p, v, s, d.band, len, *now);
	return 1;
}

/* The kernel benchmark's packets (see the top): a batch, then a drain. */
static int kernel_bench_workload(const struct qcore_disc_ops *ops, const void *p,
				 void *v, void *s, u32 nbands, struct qcore_rng *rng,
				 long packets)
{
	static const u32 lens[] = { 64, 1500, 576, 1500, 40, 1500, 200, 1000 };
	static const u8 toses[] = { 0x00, 0x08, 0x28 };
	long sent = 0, dropped = 0;
	u64 now = 0;
	int served;

	while (sent < packets) {
		for (u32 i = 0; i < KERNEL_BATCH && sent < packets; i++, sent++) {
			struct qcore_pkt pkt = {
				.now_ns = now += 1000,
				.len = lens[i % 8],
				.flow_hash = i,	/* the kernel's hashes the 5-tuple */
			};
			struct qcore_decision d;

			qcore_pkt_set_tos(&pkt, toses[i % 3]);
			fill_views(nbands);
			d = qcore_bench_enqueue(ops, p, v, s, &pkt, rng);
			if (d.verdict == QCORE_DROP)
				dropped++;
			else if (fifo_push(d.band, nbands, pkt.len, pkt.now_ns))
				return 1;
		}
		while ((served = serve_one(ops, p, v, s, nbands, &now)) > 0)
			;
		if (served < 0)
			return 1;
	}
	fprintf(stderr, "core_cost: %ld packets, %ld dropped\n", sent, dropped);
	return 0;
}

int main(int argc, char **argv)
{
	static const u32 sizes[] = { 64, 576, 1500, 64, 1500, 1500, 576, 64 };
	char err[QCORE_ERRLEN];
	const struct qcore_disc_ops *ops;
	struct qcore_rng rng, traffic;
	long packets;
	void *p, *v, *s;
	u64 now = 0;
	u32 nbands;

	int first_param = 3;
	bool kernel_workload = false;

	if (argc < 3 || !(ops = qcore_find(argv[1])) || (packets = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: core_cost DISC PACKETS [--kernel-workload] [--param NAME=VALUE]...\n");
		return 2;
	}
	if (argc > 3 && !strcmp(argv[3], "--kernel-workload"))
		kernel_workload = true, first_param = 4;
	p = calloc(1, ops->params_size);
	v = calloc(1, ops->vars_size);
	s = calloc(1, ops->stats_size);
	if (qcore_params_defaults(ops, p, err, sizeof(err))) {
		fprintf(stderr, "core_cost: %s\n", err);
		return 2;
	}
	for (int i = first_param; i + 1 < argc; i += 2) {
		char *eq = strchr(argv[i + 1], '=');

		if (strcmp(argv[i], "--param") || !eq) {
			fprintf(stderr, "core_cost: expected --param NAME=VALUE\n");
			return 2;
		}
		*eq = '\0';
		if (qcore_params_set(ops, p, argv[i + 1], eq + 1, err, sizeof(err))) {
			fprintf(stderr, "core_cost: %s\n", err);
			return 2;
		}
	}
	if (ops->check_params(p, err, sizeof(err))) {
		fprintf(stderr, "core_cost: %s\n", err);
		return 2;
	}
	nbands = ops->nbands(p);
	ops->reset(p, v);
	qcore_rng_seed(&rng, 1);
	qcore_rng_seed(&traffic, 42);
	if (kernel_workload)
		return kernel_bench_workload(ops, p, v, s, nbands, &rng, packets);

	for (long sent = 0; sent < packets;) {
		u32 burst = 1 + (qcore_rng_u32(&traffic) & 7);

		for (u32 i = 0; i < burst && sent < packets; i++, sent++) {
			struct qcore_pkt pkt = {
				.now_ns = now += 1000,
				.len = sizes[qcore_rng_u32(&traffic) & 7],
				.flow_hash = qcore_rng_u32(&traffic) & 63,
				.cls = (u8)(sent % nbands),
				.prec = (u8)(sent & 1),
			};
			struct qcore_decision d;

			if (ops->check_pkt && ops->check_pkt(p, &pkt, err, sizeof(err)))
				pkt.cls = 0, pkt.prec = 0;
			fill_views(nbands);
			d = qcore_bench_enqueue(ops, p, v, s, &pkt, &rng);
			if (d.verdict != QCORE_DROP && fifo_push(d.band, nbands, pkt.len, pkt.now_ns))
				return 1;
		}
		for (u32 i = 0; i < burst + 4; i++) {
			int served = serve_one(ops, p, v, s, nbands, &now);

			if (served < 0)
				return 1;
			if (!served)
				break;
		}
	}
	return 0;
}
