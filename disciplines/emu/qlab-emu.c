// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * qlab-emu - a userspace bottleneck between two interfaces (bump in the
 * wire), running any discipline of the qlab core (disciplines/core).
 *
 *	qlab-emu --if-a IFACE --if-b IFACE --rate-bps N [options]
 *	qlab-emu --replay DISC [--param NAME=VALUE]... [--seed N] < events.csv > decisions.csv
 *
 * Frames entering on A leave on B through the forward link (the bottleneck
 * under test: rate, propagation delay, a core discipline); frames entering
 * on B leave on A through the reverse link (its own rate, delay and
 * discipline, by default a 10000-packet droptail).  Each link is the model
 * of ns-3's point-to-point link: a packet is dequeued when the transmitter
 * is free, occupies it for (IP length + overhead) * 8 / rate, and leaves
 * the emulator `delay` later.  The model runs in virtual time taken from
 * the kernel's receive timestamps (SO_TIMESTAMPNS), so a late wake-up
 * delays a departure but never changes the queue's decisions; how late the
 * real departures are is what the fidelity statistics measure.
 *
 * The code is in layers: the queue (a link's bands, its arrival and service
 * paths, asking the core) knows nothing of sockets or clocks; the link's
 * timing (transmitter, delay line) and the packet I/O sit on top of it.
 * --replay feeds qcore-replay's events (disciplines/core/README.md, "Replay
 * format") through that same queue and prints the same decision rows, so
 * the golden vectors check the emulator's own queueing (tests/test_replay.sh).
 *
 * Only IPv4 goes through the model; other frames (ARP, IPv6) are forwarded
 * at once and counted.  The core sees what every adapter gives it, through
 * the core's helpers: the IP total length (no Ethernet header), class,
 * precedence and ECT from the ToS byte (qcore_pkt_set_tos), the 5-tuple's
 * flow hash (qcore_flow_hash), a MARK on a non-ECT packet becoming a drop
 * (qcore_mark_fallback).
 *
 * Outputs (forward link only; times in integer ns since --epoch-ns; the
 * queue column is --queue-id): --queues FILE (docs/traces.md
 * queue_facts.csv), --packets FILE (packet_facts.csv), --summary FILE
 * (JSON: counters and fidelity statistics of both links).
 * SIGTERM/SIGINT, or --end-ns reached: a last queue sample, files
 * flushed, exit 0.
 *
 * Timing: the loop sleeps in ppoll() until the next departure less the
 * measured wake-up latency (at most --spin-ns) and spins the rest; arrivals
 * on a link with a delay are read in batches rather than waking the loop
 * ("waiting for the next event" below).  Timer slack is set to 1 ns.
 * Packets come from a pool and frames are read into them: nothing is
 * allocated or copied per packet.  Sends use sendmmsg; ENOBUFS/EAGAIN keep the packet at the head of the
 * delay line and retry (counted), a packet that still fails after
 * --send-give-up-ns is counted as send_failed (never silently lost).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/if_packet.h>
#include <linux/net_tstamp.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "qcore.h"
#include "qcore_usage.h"

#define QLAB_EMU_VERSION "2.0"
#define U64F PRIu64		/* u64 is uint64_t (qcore_compat.h) */
#define BATCH 64
#define FRAME_MAX 65600		/* a whole GSO frame, should offloads be on */
#define DEFAULT_SPIN_NS 50000
#define LAT_BUCKETS 200001	/* 1 us histogram buckets up to 200 ms */
#define MAX_FLOWMAP 65536
#define MAX_PARAMS 64
#define EXIT_USAGE 2		/* bad arguments or bad replay events (as qcore-replay) */
#define EXIT_CONTRACT 3		/* a discipline broke the qcore contract (as qcore-replay) */

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static void __attribute__((noreturn, format(printf, 2, 3))) die(int status, const char *fmt, ...)
{
	va_list ap;

	fputs("qlab-emu: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die(1, "out of memory");
	return p;
}

static u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

/*
 * A decimal option or field, read by the core's parser (digits only, range
 * checked, the same rules as a discipline's integer parameters).
 */
static int parse_dec(const char *name, const char *text, u64 min, u64 max, const char *unit,
		     u64 *out, char *err, size_t errlen)
{
	struct qcore_param_desc d = {
		.name = name, .kind = QCORE_PARAM_U64, .min = min, .max = max, .unit = unit,
	};
	struct qcore_param_value v;

	memset(&v, 0, sizeof(v));
	if (qcore_param_parse(&d, text, &v, err, errlen))
		return -1;
	*out = v.value;
	return 0;
}

static u64 opt_dec(const char *name, const char *text, u64 min, u64 max, const char *unit)
{
	char err[QCORE_ERRLEN];
	u64 v;

	if (parse_dec(name, text, min, max, unit, &v, err, sizeof(err)))
		die(EXIT_USAGE, "--%s", err);
	return v;
}

/* ---- packets and FIFOs ---------------------------------------------------- */

/*
 * A packet and the room for its frame.  Packets come from a pool (pkt_get,
 * pkt_put) that grows by chunks and never shrinks: the receive path reads a
 * frame straight into a free packet's room, so forwarding allocates, clears
 * and copies nothing per packet.  A frame larger than the room (offloads
 * on) gets a buffer of its own.
 */
#define PKT_ROOM 2048		/* an Ethernet frame of a 1500-byte MTU, VLAN tag included */
#define POOL_CHUNK 256

struct pkt {
	struct pkt *next;
	u64 id;			/* arrival number at its link, from 0 (dropped ones too) */
	u64 arrival_ns;		/* virtual: kernel receive timestamp */
	u64 deq_ns;		/* virtual: start of transmission */
	u64 release_ns;		/* virtual: leaves the emulator */
	u32 ip_len;		/* what the core sees */
	u32 frame_len;		/* 0: no frame (replay) */
	u64 tx_ns;		/* transmission time */
	int flow_id;		/* -1: not in the flow map */
	u8 band;
	u8 back_to_back;	/* dequeued the moment the previous left the transmitter */
	u8 *data;		/* the frame: room, or a buffer of its own when larger */
	u8 room[PKT_ROOM];
};

static struct pkt *g_free_pkts;	/* the pool's free packets */
static u64 g_pool_pkts;		/* packets the pool holds (free or in use) */

/* A packet from the pool, its header cleared (not its room), flow id -1. */
static struct pkt *pkt_get(void)
{
	struct pkt *p = g_free_pkts;

	if (!p) {
		struct pkt *chunk = xcalloc(POOL_CHUNK, sizeof(*chunk));
		int i;

		for (i = POOL_CHUNK - 1; i >= 0; i--) {
			chunk[i].next = g_free_pkts;
			g_free_pkts = &chunk[i];
		}
		g_pool_pkts += POOL_CHUNK;
		p = g_free_pkts;
	}
	g_free_pkts = p->next;
	memset(p, 0, offsetof(struct pkt, room));
	p->data = p->room;
	p->flow_id = -1;
	return p;
}

/* Back to the pool (NULL: nothing). */
static void pkt_put(struct pkt *p)
{
	if (!p)
		return;
	if (p->data != p->room)
		free(p->data);
	p->next = g_free_pkts;
	g_free_pkts = p;
}

struct fifo {
	struct pkt *head, *tail;
	u32 n;
	u64 bytes;		/* IP bytes */
};

static void fifo_push(struct fifo *f, struct pkt *p)
{
	p->next = NULL;
	if (f->tail)
		f->tail->next = p;
	else
		f->head = p;
	f->tail = p;
	f->n++;
	f->bytes += p->ip_len;
}

static struct pkt *fifo_pop(struct fifo *f)
{
	struct pkt *p = f->head;

	if (!p)
		return NULL;
	f->head = p->next;
	if (!f->head)
		f->tail = NULL;
	f->n--;
	f->bytes -= p->ip_len;
	p->next = NULL;
	return p;
}

/* ---- statistics ---------------------------------------------------------- */

/* Streaming mean/max plus a 1 us histogram of magnitudes for percentiles. */
struct dist {
	u64 n;
	double sum, max_abs;
	int64_t min, max;
	u32 *hist;		/* |value| in microseconds, clamped to the last bucket */
};

static void dist_init(struct dist *d)
{
	memset(d, 0, sizeof(*d));
	d->hist = xcalloc(LAT_BUCKETS, sizeof(u32));
	d->min = INT64_MAX;
	d->max = INT64_MIN;
}

static void dist_add(struct dist *d, int64_t v)
{
	u64 mag = (u64)(v < 0 ? -v : v) / 1000;

	d->n++;
	d->sum += (double)v;
	if (v < d->min)
		d->min = v;
	if (v > d->max)
		d->max = v;
	if ((double)(v < 0 ? -v : v) > d->max_abs)
		d->max_abs = (double)(v < 0 ? -v : v);
	d->hist[mag < LAT_BUCKETS - 1 ? mag : LAT_BUCKETS - 1]++;
}

/* The q-quantile of |value| in seconds (bucket upper edge). */
static double dist_abs_quantile_s(const struct dist *d, double q)
{
	u64 want, seen = 0;
	u32 i;

	if (!d->n)
		return 0;
	want = (u64)(q * (double)d->n);
	if (want >= d->n)
		want = d->n - 1;
	for (i = 0; i < LAT_BUCKETS; i++) {
		seen += d->hist[i];
		if (seen > want)
			return (double)(i + 1) * 1e-6;
	}
	return d->max_abs * 1e-9;
}

static void dist_json(FILE *f, const char *name, const struct dist *d)
{
	fprintf(f, "\"%s\": {\"n\": %" U64F, name, d->n);
	if (d->n)
		fprintf(f, ", \"mean_s\": %.9f, \"min_s\": %.9f, \"max_s\": %.9f, "
			"\"abs_p50_s\": %.6f, \"abs_p99_s\": %.6f, \"abs_p999_s\": %.6f, \"abs_max_s\": %.9f",
			d->sum / (double)d->n * 1e-9, (double)d->min * 1e-9, (double)d->max * 1e-9,
			dist_abs_quantile_s(d, 0.5), dist_abs_quantile_s(d, 0.99),
			dist_abs_quantile_s(d, 0.999), d->max_abs * 1e-9);
	fputc('}', f);
}

/* ---- a link (one direction) ------------------------------------------------ */

struct band_counters {
	u64 enqueued, dequeued, dropped, marked;
};

/* What the queue did, for whoever watches it (packet facts, replay rows). */
enum queue_event {
	QEV_QUEUED,		/* arrival queued in band */
	QEV_MARKED,		/* arrival queued with a CE mark */
	QEV_DROPPED,		/* arrival dropped (reason) */
	QEV_SENT,		/* served: the head of band goes to the transmitter */
	QEV_HEAD_DROP,		/* head of band dropped before a service (reason) */
	QEV_EMPTY,		/* asked to serve, nothing to send (p is NULL) */
};

struct link;
typedef void (*queue_observer)(struct link *l, enum queue_event ev, u64 t_ns,
			       const struct pkt *p, u8 band, u8 reason);

struct link {
	const char *name;	/* "forward" / "reverse"; replay: the current row */

	/* the queue: a discipline of the core and its bands */
	const struct qcore_disc_ops *ops;
	void *params, *vars, *stats;
	u32 nbands;
	struct qcore_rng rng;
	struct fifo band[QCORE_MAX_BANDS];
	struct band_counters cnt[QCORE_MAX_BANDS];
	u64 arrivals;		/* packets offered so far (the next pkt id) */
	u8 held;		/* the core left packets queued on an idle transmitter */
	queue_observer observe;	/* NULL: nobody watches */

	/* timing: transmitter and propagation */
	u64 rate_bps;
	u64 delay_ns;
	u32 overhead_bytes;	/* added to the IP length for the transmission time */
	struct fifo staged;	/* received, not yet processed (virtual time) */
	struct fifo delay_line;	/* transmitted, waiting for release_ns */
	u64 defer_ns;		/* how late arrivals may be read and services run (0: at once) */
	u64 vt_ns;		/* virtual time of the last processed event */
	u64 tx_busy_until_ns;
	u64 backlog_since_ns;	/* when the band queues last became non-empty */

	/* packet I/O */
	int in_fd, out_fd;	/* sockets: receive on in, send on out */
	struct fifo bypass;	/* non-IPv4 frames, sent at once */
	u64 rx_pkts, rx_bytes, non_ip, truncated, rejected;
	u64 sent_pkts, sent_bytes, send_retries, send_failed, bypass_sent;
	u64 kernel_drops;
	u64 retry_since_ns;

	/* fidelity */
	struct dist lateness;	/* actual send - model release */
	struct dist spacing_err;/* back-to-back: actual gap - transmission time */
	struct dist added_delay;/* actual send - end of transmission (configured: delay_ns) */
	u64 prev_actual_ns, prev_release_ns;
	int have_prev;
	double busy_bits, busy_actual_ns, busy_ideal_ns;

	/* traces (forward link only) */
	const char *queue_id;	/* the plan's LINK:NODE */
	FILE *packets;
	u64 seq;
};

static u32 total_backlog(const struct link *l)
{
	u32 b, n = 0;

	for (b = 0; b < l->nbands; b++)
		n += l->band[b].n;
	return n;
}

static void fill_views(const struct link *l, struct qcore_band_view *v)
{
	u32 b;

	memset(v, 0, sizeof(*v) * QCORE_MAX_BANDS);
	for (b = 0; b < l->nbands; b++) {
		v[b].backlog_pkts = l->band[b].n;
		v[b].backlog_bytes = l->band[b].bytes;
		if (l->band[b].head) {
			v[b].head_len = l->band[b].head->ip_len;
			v[b].head_arrival_ns = l->band[b].head->arrival_ns;
		}
	}
}

static void observe(struct link *l, enum queue_event ev, u64 t, const struct pkt *p, u8 band,
		    u8 reason)
{
	if (l->observe)
		l->observe(l, ev, t, p, band, reason);
}

/*
 * An arrival at the queue at p->arrival_ns with the core's view of it (qp):
 * the decision, after the mark fallback, acted on and counted.  0 and the
 * decision in *out: p now belongs to the queue when queued or marked, and
 * is still the caller's when dropped.  -1 when the discipline cannot
 * classify it (check_pkt; message in err): nothing happened.
 */
static int link_arrival(struct link *l, struct pkt *p, const struct qcore_pkt *qp,
			struct qcore_decision *out, char *err, size_t errlen)
{
	struct qcore_band_view v[QCORE_MAX_BANDS];
	struct qcore_decision d;

	if (l->ops->check_pkt && l->ops->check_pkt(l->params, qp, err, errlen))
		return -1;
	l->vt_ns = p->arrival_ns;
	l->held = 0;
	p->id = l->arrivals++;
	fill_views(l, v);
	d = l->ops->enqueue(l->params, l->vars, l->stats, qp, v, &l->rng);
	if (d.verdict > QCORE_DROP || d.band >= l->nbands || d.reason >= QCORE_REASON__COUNT ||
	    (d.verdict == QCORE_DROP) != (d.reason != QCORE_REASON_NONE))
		die(EXIT_CONTRACT, "%s: %s returned an invalid enqueue decision (verdict %u, band %u, reason %u)",
		    l->name, l->ops->name, d.verdict, d.band, d.reason);
	d = qcore_mark_fallback(d, qp);
	p->band = d.band;
	*out = d;
	if (d.verdict == QCORE_DROP) {
		l->cnt[d.band].dropped++;
		observe(l, QEV_DROPPED, p->arrival_ns, p, d.band, d.reason);
		return 0;
	}
	if (d.verdict == QCORE_MARK)
		l->cnt[d.band].marked++;
	if (total_backlog(l) == 0)
		l->backlog_since_ns = p->arrival_ns;
	fifo_push(&l->band[d.band], p);
	l->cnt[d.band].enqueued++;
	observe(l, d.verdict == QCORE_MARK ? QEV_MARKED : QEV_QUEUED, p->arrival_ns, p, d.band, 0);
	return 0;
}

/*
 * The transmitter asks for a packet at t: the core's head drops (each
 * reported), then the packet to send, or NULL.  Each head drop removes a
 * packet, so backlog + 1 rounds always suffice; more means the discipline
 * loops.
 */
static struct pkt *link_serve(struct link *l, u64 t)
{
	struct qcore_band_view v[QCORE_MAX_BANDS];
	u32 rounds = total_backlog(l) + 1, i;

	l->vt_ns = t;
	for (i = 0; i < rounds; i++) {
		struct qcore_deq d;
		struct pkt *p;

		fill_views(l, v);
		d = l->ops->dequeue(l->params, l->vars, v, t);
		if (d.action == QCORE_DEQ_EMPTY) {
			l->held = total_backlog(l) != 0;
			observe(l, QEV_EMPTY, t, NULL, 0, 0);
			return NULL;
		}
		if (d.action != QCORE_DEQ_SERVE && d.action != QCORE_DEQ_DROP_HEAD)
			die(EXIT_CONTRACT, "%s: %s returned dequeue action %u", l->name, l->ops->name,
			    d.action);
		if (d.action == QCORE_DEQ_DROP_HEAD &&
		    (d.reason == QCORE_REASON_NONE || d.reason >= QCORE_REASON__COUNT))
			die(EXIT_CONTRACT, "%s: %s head drop without a valid reason (%u)", l->name,
			    l->ops->name, d.reason);
		if (d.band >= l->nbands || !l->band[d.band].n)
			die(EXIT_CONTRACT, "%s: %s chose band %u, which is empty or does not exist",
			    l->name, l->ops->name, d.band);
		p = fifo_pop(&l->band[d.band]);
		fill_views(l, v);
		l->ops->dequeued(l->params, l->vars, l->stats, d.band, p->ip_len, t, v);
		if (d.action == QCORE_DEQ_DROP_HEAD) {
			l->cnt[d.band].dropped++;
			observe(l, QEV_HEAD_DROP, t, p, d.band, d.reason);
			pkt_put(p);
			continue;
		}
		l->cnt[d.band].dequeued++;
		observe(l, QEV_SENT, t, p, d.band, 0);
		return p;
	}
	die(EXIT_CONTRACT, "%s: %s kept dropping heads of empty queues", l->name, l->ops->name);
}

/* ---- the link's timing: transmitter and delay line (emulation) ------------ */

static void set_ce(struct pkt *p);
static void classify(const struct link *l, struct pkt *p, struct qcore_pkt *qp);

/* A received packet reaches the queue (virtual time p->arrival_ns). */
static void emu_arrival(struct link *l, struct pkt *p)
{
	struct qcore_pkt qp;
	struct qcore_decision d;
	char err[QCORE_ERRLEN];

	classify(l, p, &qp);
	if (link_arrival(l, p, &qp, &d, err, sizeof(err))) {
		/* The replay stops here; an emulator must keep going: count it. */
		if (l->rejected++ == 0) {
			const struct iphdr *ip = (const struct iphdr *)(p->data + ETH_HLEN);
			char src[INET_ADDRSTRLEN], dst[INET_ADDRSTRLEN];

			inet_ntop(AF_INET, &ip->saddr, src, sizeof(src));
			inet_ntop(AF_INET, &ip->daddr, dst, sizeof(dst));
			fprintf(stderr, "qlab-emu: %s: packet %s -> %s protocol %u cls=%u prec=%u rejected: %s\n",
				l->name, src, dst, ip->protocol, qp.cls, qp.prec, err);
		}
		pkt_put(p);
	} else if (d.verdict == QCORE_DROP) {
		pkt_put(p);
	} else if (d.verdict == QCORE_MARK) {
		set_ce(p);	/* ECT: qcore_mark_fallback() turned any other mark into a drop */
	}
}

/* The transmitter is free at t: start the next transmission, if any. */
static void emu_transmit(struct link *l, u64 t)
{
	int b2b = l->tx_busy_until_ns == t && t > l->backlog_since_ns;
	struct pkt *p = link_serve(l, t);

	if (!p)
		return;
	p->deq_ns = t;
	p->tx_ns = (((u64)(p->ip_len + l->overhead_bytes) * 8ULL * 1000000000ULL +
			  l->rate_bps - 1) / l->rate_bps);
	p->back_to_back = (u8)b2b;
	l->tx_busy_until_ns = t + p->tx_ns;
	p->release_ns = l->tx_busy_until_ns + l->delay_ns;
	fifo_push(&l->delay_line, p);
}

/* When the transmitter next asks the queue (UINT64_MAX: not before an arrival). */
static u64 next_service(const struct link *l)
{
	if (l->held || !total_backlog(l))
		return UINT64_MAX;
	return l->tx_busy_until_ns > l->vt_ns ? l->tx_busy_until_ns : l->vt_ns;
}

/* Run the model up to virtual time `until`, events in time order. */
static void advance(struct link *l, u64 until)
{
	for (;;) {
		u64 t_arr = l->staged.head ? l->staged.head->arrival_ns : UINT64_MAX;
		u64 t_deq = next_service(l);

		if (t_arr <= t_deq && t_arr <= until) {
			struct pkt *p = fifo_pop(&l->staged);

			if (p->arrival_ns < l->vt_ns)	/* read late: keep time monotonic */
				p->arrival_ns = l->vt_ns;
			emu_arrival(l, p);
		} else if (t_deq <= until) {
			emu_transmit(l, t_deq);
		} else {
			return;
		}
	}
}

/*
 * When the link next needs the loop: *due, lowered to what must happen on
 * time (a departure, a frame to bypass, a send to retry; the transmitter's
 * service when the link has no deferral); *by, lowered to model work that
 * may run late (the transmitter's service on a link with a deferral: what
 * it serves leaves at least `delay` later).
 */
static void next_wake(const struct link *l, u64 now, u64 *due, u64 *by)
{
	u64 t = next_service(l);

	if (l->bypass.head)
		*due = 0;
	if (l->retry_since_ns && now + 20000 < *due)
		*due = now + 20000;	/* ENOBUFS: try again shortly */
	if (l->delay_line.head && l->delay_line.head->release_ns < *due)
		*due = l->delay_line.head->release_ns;
	if (t == UINT64_MAX)
		return;
	if (!l->defer_ns && t < *due)
		*due = t;
	if (l->defer_ns && t + l->defer_ns < *by)
		*by = t + l->defer_ns;
}

static void record_sent(struct link *l, const struct pkt *p, u64 actual)
{
	l->sent_pkts++;
	l->sent_bytes += p->frame_len;
	dist_add(&l->lateness, (int64_t)(actual - p->release_ns));
	dist_add(&l->added_delay, (int64_t)(actual - (p->deq_ns + p->tx_ns)));
	if (p->back_to_back && l->have_prev) {
		int64_t gap = (int64_t)(actual - l->prev_actual_ns);
		int64_t ideal = (int64_t)(p->release_ns - l->prev_release_ns);

		dist_add(&l->spacing_err, gap - ideal);
		l->busy_bits += (double)(p->ip_len + l->overhead_bytes) * 8.0;
		l->busy_actual_ns += (double)gap;
		l->busy_ideal_ns += (double)ideal;
	}
	l->prev_actual_ns = actual;
	l->prev_release_ns = p->release_ns;
	l->have_prev = 1;
}

/* ---- packet I/O ------------------------------------------------------------ */

/* The flow map: the plan's 5-tuples (host byte order) -> flow ids, for packet facts. */
struct flow_key {
	u32 saddr, daddr;
	u16 sport, dport;
	u8 proto;
};

static struct flowmap_entry {
	struct flow_key key;
	int flow_id;
} *g_flowmap;			/* sorted by key */
static size_t g_nflowmap;

static int flow_key_cmp(const void *x, const void *y)
{
	const struct flow_key *a = x, *b = y;

	if (a->saddr != b->saddr)
		return a->saddr < b->saddr ? -1 : 1;
	if (a->daddr != b->daddr)
		return a->daddr < b->daddr ? -1 : 1;
	if (a->sport != b->sport)
		return a->sport < b->sport ? -1 : 1;
	if (a->dport != b->dport)
		return a->dport < b->dport ? -1 : 1;
	return (int)a->proto - (int)b->proto;
}

static int flow_of(const struct flow_key *k)
{
	const struct flowmap_entry *e = g_nflowmap ?
		bsearch(k, g_flowmap, g_nflowmap, sizeof(*g_flowmap), flow_key_cmp) : NULL;

	return e ? e->flow_id : -1;
}

/* Lines "tcp|udp SRC-ADDR SRC-PORT DST-ADDR DST-PORT FLOW-ID". */
static void load_flowmap(const char *path)
{
	char proto[8], src[64], dst[64];
	unsigned sport, dport, id;
	struct in_addr s, d;
	FILE *f = fopen(path, "r");
	size_t i;

	if (!f)
		die(EXIT_USAGE, "cannot read flow map %s: %s", path, strerror(errno));
	g_flowmap = xcalloc(MAX_FLOWMAP, sizeof(*g_flowmap));
	while (fscanf(f, "%7s %63s %u %63s %u %u", proto, src, &sport, dst, &dport, &id) == 6) {
		if (inet_pton(AF_INET, src, &s) != 1 || inet_pton(AF_INET, dst, &d) != 1 ||
		    sport > 65535 || dport > 65535 || id > INT32_MAX ||
		    (strcmp(proto, "tcp") && strcmp(proto, "udp")) || g_nflowmap == MAX_FLOWMAP)
			die(EXIT_USAGE, "%s: entry %zu: bad '%s %s %u %s %u %u' (at most %d)", path,
			    g_nflowmap + 1, proto, src, sport, dst, dport, id, MAX_FLOWMAP);
		g_flowmap[g_nflowmap++] = (struct flowmap_entry){
			{ ntohl(s.s_addr), ntohl(d.s_addr), (u16)sport, (u16)dport,
			  proto[0] == 't' ? IPPROTO_TCP : IPPROTO_UDP }, (int)id };
	}
	if (!feof(f))
		die(EXIT_USAGE, "%s: entry %zu: expected 'tcp|udp SRC-ADDR SRC-PORT DST-ADDR DST-PORT FLOW-ID'",
		    path, g_nflowmap + 1);
	fclose(f);
	qsort(g_flowmap, g_nflowmap, sizeof(*g_flowmap), flow_key_cmp);
	for (i = 1; i < g_nflowmap; i++)
		if (!flow_key_cmp(&g_flowmap[i - 1].key, &g_flowmap[i].key))
			die(EXIT_USAGE, "%s: flows %d and %d have the same 5-tuple", path,
			    g_flowmap[i - 1].flow_id, g_flowmap[i].flow_id);
}

/*
 * The core's view of a received IPv4 packet (every adapter's rules, through
 * the core's helpers), and its flow id when packets are traced.
 */
static void classify(const struct link *l, struct pkt *p, struct qcore_pkt *qp)
{
	const struct iphdr *ip = (const struct iphdr *)(p->data + ETH_HLEN);
	u32 ihl = (u32)ip->ihl * 4;
	const u8 *l4 = (const u8 *)ip + ihl;
	struct flow_key k = { ntohl(ip->saddr), ntohl(ip->daddr), 0, 0, ip->protocol };
	/* ports only from a first fragment that holds them (drain(): ip_len fits the frame) */
	int ports = !(ntohs(ip->frag_off) & 0x1fff) && ihl >= 20 &&
		    ((ip->protocol == IPPROTO_TCP && p->ip_len >= ihl + 20) ||
		     (ip->protocol == IPPROTO_UDP && p->ip_len >= ihl + 8));

	memset(qp, 0, sizeof(*qp));
	qp->len = p->ip_len;
	qp->now_ns = p->arrival_ns;
	qcore_pkt_set_tos(qp, ip->tos);
	if (ports) {
		k.sport = (u16)(l4[0] << 8 | l4[1]);
		k.dport = (u16)(l4[2] << 8 | l4[3]);
	}
	if (ports && ip->protocol == IPPROTO_TCP) {
		const struct tcphdr *tcp = (const struct tcphdr *)l4;

		if (p->ip_len == ihl + (u32)tcp->doff * 4 && tcp->ack && !tcp->syn && !tcp->fin &&
		    !tcp->rst)
			qp->flags |= QCORE_PKT_PURE_ACK;
	}
	if (!(l->ops->ignores & QCORE_IGNORES_FLOW_HASH))
		qp->flow_hash = qcore_flow_hash(k.saddr, k.daddr, k.sport, k.dport, k.proto);
	if (l->packets)
		p->flow_id = flow_of(&k);
}

/* Set ECN CE on an ECT packet and recompute the header checksum. */
static void set_ce(struct pkt *p)
{
	struct iphdr *ip = (struct iphdr *)(p->data + ETH_HLEN);
	u32 sum = 0, i, ihl = (u32)ip->ihl * 4;
	const u16 *w = (const u16 *)ip;

	ip->tos |= 3;
	ip->check = 0;
	for (i = 0; i < ihl / 2; i++)
		sum += w[i];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	ip->check = (u16)~sum;
}

/* Send what is due; returns after an ENOBUFS (retry later). */
static void send_due(struct link *l, u64 give_up_ns)
{
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	struct fifo *queues[2] = { &l->bypass, &l->delay_line };
	int q;

	for (q = 0; q < 2; q++) {
		for (;;) {
			u64 now = now_ns();
			struct pkt *p = queues[q]->head;
			int n = 0, sent, i;

			while (p && n < BATCH && (q == 0 || p->release_ns <= now)) {
				memset(&msgs[n], 0, sizeof(msgs[n]));
				iov[n].iov_base = p->data;
				iov[n].iov_len = p->frame_len;
				msgs[n].msg_hdr.msg_iov = &iov[n];
				msgs[n].msg_hdr.msg_iovlen = 1;
				n++;
				p = p->next;
			}
			if (!n)
				break;
			sent = sendmmsg(l->out_fd, msgs, (unsigned)n, 0);
			now = now_ns();
			if (sent < 0)
				sent = 0;
			for (i = 0; i < sent; i++) {
				struct pkt *s = fifo_pop(queues[q]);

				if (q == 0)
					l->bypass_sent++;
				else
					record_sent(l, s, now);
				pkt_put(s);
			}
			if (sent > 0)
				l->retry_since_ns = 0;
			if (sent < n) {
				if (errno == EMSGSIZE || errno == EINVAL) {
					/* cannot ever be sent: account for it, go on */
					pkt_put(fifo_pop(queues[q]));
					l->send_failed++;
					continue;
				}
				l->send_retries++;
				if (!l->retry_since_ns)
					l->retry_since_ns = now;
				else if (now - l->retry_since_ns > give_up_ns) {
					pkt_put(fifo_pop(queues[q]));
					l->send_failed++;
					l->retry_since_ns = 0;
					continue;
				}
				return;
			}
		}
	}
}

/*
 * The receive batch, shared by both links (drained in turn): message i reads
 * into the room of rx_pkt[i], a packet of the pool, and whatever of a frame
 * does not fit there into rx_tail[i].  A packet that is kept is replaced by
 * a new one from the pool; the others stay posted for the next call.
 */
static struct {
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH][2];
	struct sockaddr_ll from[BATCH];
	char ctrl[BATCH][256];
	struct pkt *pkt[BATCH];
	u8 *tail[BATCH];
	int ready, used;	/* used: messages the last call filled in */
} g_rx;

static void rx_post(int i)
{
	struct msghdr *h = &g_rx.msgs[i].msg_hdr;

	g_rx.pkt[i] = pkt_get();
	g_rx.iov[i][0].iov_base = g_rx.pkt[i]->room;
	g_rx.iov[i][0].iov_len = PKT_ROOM;
	g_rx.iov[i][1].iov_base = g_rx.tail[i];
	g_rx.iov[i][1].iov_len = FRAME_MAX - PKT_ROOM;
	h->msg_iov = g_rx.iov[i];
	h->msg_iovlen = 2;
	h->msg_name = &g_rx.from[i];
	h->msg_control = g_rx.ctrl[i];
}

/* Read every frame waiting on the link's input socket into `staged`. */
static void drain(struct link *l)
{
	int n, i;

	if (!g_rx.ready) {
		for (i = 0; i < BATCH; i++) {
			g_rx.tail[i] = xcalloc(1, FRAME_MAX - PKT_ROOM);
			rx_post(i);
		}
		g_rx.used = BATCH;
		g_rx.ready = 1;
	}
	for (;;) {
		for (i = 0; i < g_rx.used; i++) {	/* what the kernel overwrote */
			g_rx.msgs[i].msg_hdr.msg_namelen = sizeof(g_rx.from[i]);
			g_rx.msgs[i].msg_hdr.msg_controllen = sizeof(g_rx.ctrl[i]);
		}
		n = recvmmsg(l->in_fd, g_rx.msgs, BATCH, MSG_DONTWAIT | MSG_TRUNC, NULL);
		g_rx.used = n > 0 ? n : 0;
		if (n <= 0)
			return;
		for (i = 0; i < n; i++) {
			struct msghdr *h = &g_rx.msgs[i].msg_hdr;
			u32 len = g_rx.msgs[i].msg_len;
			u64 ts = 0;
			struct cmsghdr *c;
			struct pkt *p = g_rx.pkt[i];
			const struct ether_header *eth;

			if (g_rx.from[i].sll_pkttype == PACKET_OUTGOING)
				continue;
			if (len > FRAME_MAX || (h->msg_flags & MSG_TRUNC)) {
				l->truncated++;
				continue;
			}
			if (len < ETH_HLEN)
				continue;
			for (c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
				if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPNS) {
					struct timespec tsv;

					memcpy(&tsv, CMSG_DATA(c), sizeof(tsv));
					ts = (u64)tsv.tv_sec * 1000000000ULL + (u64)tsv.tv_nsec;
				}
			}
			if (!ts)
				ts = now_ns();
			if (len > PKT_ROOM) {	/* larger than the room: a buffer of its own */
				p->data = xcalloc(1, len);
				memcpy(p->data, p->room, PKT_ROOM);
				memcpy(p->data + PKT_ROOM, g_rx.tail[i], len - PKT_ROOM);
			}
			rx_post(i);	/* p is the link's now */
			eth = (const struct ether_header *)p->data;
			p->frame_len = len;
			p->arrival_ns = ts;
			l->rx_pkts++;
			l->rx_bytes += len;
			if (ntohs(eth->ether_type) == ETHERTYPE_IP && len >= ETH_HLEN + 20) {
				const struct iphdr *ip = (const struct iphdr *)(p->data + ETH_HLEN);
				u32 tot = ntohs(ip->tot_len);

				if (ip->version == 4 && tot >= 20 && tot <= len - ETH_HLEN) {
					p->ip_len = tot;
					fifo_push(&l->staged, p);
					continue;
				}
			}
			l->non_ip++;
			p->ip_len = len;
			fifo_push(&l->bypass, p);
		}
		if (n < BATCH)
			return;
	}
}

static int open_socket(const char *ifname)
{
	struct sockaddr_ll sll;
	int fd, one = 1, big = 8 << 20, ifindex;

	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (fd < 0)
		die(EXIT_USAGE, "socket(AF_PACKET): %s (run as root)", strerror(errno));
	ifindex = (int)if_nametoindex(ifname);
	if (!ifindex)
		die(EXIT_USAGE, "no interface %s", ifname);
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = ifindex;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		die(EXIT_USAGE, "bind %s: %s", ifname, strerror(errno));
	/* Frames sent here must not be seen again by this socket's receive
	 * path (PACKET_OUTGOING is also skipped in drain()). */
#ifdef PACKET_IGNORE_OUTGOING
	setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
#endif
	setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	{
		struct packet_mreq mr;

		memset(&mr, 0, sizeof(mr));
		mr.mr_ifindex = ifindex;
		mr.mr_type = PACKET_MR_PROMISC;
		setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr));
	}
	{
		/* Discard what arrived before the socket was bound to the interface. */
		char junk[64];

		while (recv(fd, junk, sizeof(junk), MSG_DONTWAIT) > 0)
			;
	}
	return fd;
}

static u64 kernel_drops(int fd)
{
	struct tpacket_stats st;
	socklen_t len = sizeof(st);

	if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) < 0)
		return 0;
	return st.tp_drops;	/* since the last call */
}

/* ---- waiting for the next event (emulation) ------------------------------------ */

/*
 * The loop sleeps in ppoll() until just before the next timed event (a
 * departure, the transmitter, a queue sample, the end) and spins only what
 * is left.  How early it asks to be woken is measured, not fixed: the
 * EARLY_Q quantile of how late its timed sleeps end (the wake-up latency),
 * a stochastic quantile estimate updated at every timed sleep (calibrated
 * by a few sleeps before the start) and bounded by --spin-ns.  So nine
 * timed sleeps in ten end early enough, and the spin after each is that
 * sleep's wake-up latency short of the estimate: a few microseconds where
 * wake-ups are prompt, more on a virtual machine whose wake-ups are slow,
 * never more than --spin-ns.  A sleep shorter than the estimate is not
 * worth its wake-up (it would end late, and on a virtual machine a sleep
 * and its wake-up cost the CPU about as much as spinning through it): when
 * the event is less than twice the estimate away, the loop spins to it, so
 * no spin is longer than twice --spin-ns.  And the spins share a budget,
 * SPIN_SHARE of every SPIN_WINDOW_NS: once it is spent, the loop sleeps to
 * the event itself (later, by the wake-up latency; departures that fall
 * due together then leave in one sendmmsg), so the emulator, at real-time
 * priority, never takes a CPU for itself on a 2-core machine.  The spin reads the clock only
 * (vDSO, no system call; it also polls the sockets it watches, if any) and
 * is counted (the summary's "wait").
 *
 * Only departures need the loop on time.  The model runs in virtual time
 * (arrivals carry the kernel's receive timestamps), and neither an arrival
 * nor a service can make a packet leave sooner than the link's delay after
 * it.  So on a link whose delay is at least DEFER_MIN_NS, with deferral
 * d = min(delay / 2, DEFER_MAX_NS): the input socket is not watched (it is
 * read at every wake-up, and at least every d), and the transmitter's
 * service runs up to d late, without a spin; queue samples and the end run
 * late too (they are computed in virtual time).  On a link with a shorter
 * delay, arrivals end the sleep and services are timed like departures.
 */
#define EARLY_Q 0.9
#define EARLY_STEP_NS 2000.0
#define CALIBRATION_SLEEPS 32
#define CALIBRATION_SLEEP_NS 200000
#define SPIN_WINDOW_NS 10000000ULL
#define SPIN_SHARE 0.25
#define DEFER_MIN_NS 200000ULL
#define DEFER_MAX_NS 1000000ULL

struct waiter {
	double early_ns;	/* ask to be woken this long before a timed event */
	u64 cap_ns;		/* --spin-ns: early_ns's bound */
	u64 sleeps;		/* ppoll() calls */
	u64 timed;		/* ... that ended on their time (the estimate learns from these) */
	u64 spins, spin_ns;	/* spins before an event, their total length */
	u64 window_start, window_spin;	/* the spin budget's current window, its spin so far */
	u64 over_budget;	/* timed waits that slept to the event: the budget was spent */
};

/* Whether the spin budget (SPIN_SHARE of each SPIN_WINDOW_NS) has room left. */
static int waiter_may_spin(struct waiter *w, u64 now)
{
	if (now - w->window_start >= SPIN_WINDOW_NS) {
		w->window_start = now;
		w->window_spin = 0;
	}
	return (double)w->window_spin < SPIN_SHARE * (double)SPIN_WINDOW_NS;
}

static int ppoll_ns(struct pollfd *fds, int nfds, u64 ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ULL),
			       .tv_nsec = (long)(ns % 1000000000ULL) };

	return ppoll(fds, (nfds_t)nfds, &ts, NULL);
}

static void waiter_learn(struct waiter *w, u64 late_ns)
{
	w->early_ns += EARLY_STEP_NS * (EARLY_Q - ((double)late_ns < w->early_ns ? 1.0 : 0.0));
	if (w->early_ns < 0)
		w->early_ns = 0;
	if (w->early_ns > (double)w->cap_ns)
		w->early_ns = (double)w->cap_ns;
}

/*
 * With --rt-priority: a PM QoS request for zero wake-up latency, held (the
 * fd open) until exit, so idle CPUs poll instead of halting.  On a virtual
 * machine a halted vCPU wakes late (measured here: p99 of a timed sleep 60
 * us with the vCPU busy, 800 us with it halted); a polling idle loop gives
 * way at once to any task that can run, so unlike a spin it starves
 * nothing.  -1 when the machine offers no such request (not an error).
 */
static int hold_cpu_latency_zero(void)
{
	int32_t zero = 0;
	int fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (write(fd, &zero, sizeof(zero)) != (ssize_t)sizeof(zero)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int cmp_u64(const void *x, const void *y)
{
	u64 a = *(const u64 *)x, b = *(const u64 *)y;

	return a < b ? -1 : a > b;
}

/* The estimate's start: the EARLY_Q quantile of a few sleeps' lateness. */
static void waiter_calibrate(struct waiter *w)
{
	u64 late[CALIBRATION_SLEEPS];
	int i;

	for (i = 0; i < CALIBRATION_SLEEPS; i++) {
		u64 at = now_ns() + CALIBRATION_SLEEP_NS, t;

		ppoll_ns(NULL, 0, CALIBRATION_SLEEP_NS);
		t = now_ns();
		late[i] = t > at ? t - at : 0;
	}
	qsort(late, CALIBRATION_SLEEPS, sizeof(late[0]), cmp_u64);
	w->early_ns = (double)late[(int)(EARLY_Q * CALIBRATION_SLEEPS)];
	if (w->early_ns > (double)w->cap_ns)
		w->early_ns = (double)w->cap_ns;
}

/*
 * Wait for the timed event at `due`, for `by` (read the sockets: no
 * precision needed) if that is sooner, or for an arrival on fds.
 */
static void waiter_wait(struct waiter *w, struct pollfd *fds, int nfds, u64 due, u64 by)
{
	u64 now = now_ns(), at, early;
	int spin;

	if (by < due) {
		if (by > now) {
			w->sleeps++;
			ppoll_ns(fds, nfds, by - now);
		}
		return;
	}
	spin = waiter_may_spin(w, now);
	early = spin ? (u64)w->early_ns : 0;
	if (!spin)
		w->over_budget++;
	at = due > early ? due - early : 0;
	if (at > now && at - now >= early) {
		w->sleeps++;
		if (ppoll_ns(fds, nfds, at - now) != 0)
			return;	/* an arrival or a signal: back to the loop */
		w->timed++;
		now = now_ns();
		waiter_learn(w, now > at ? now - at : 0);
	}
	if (spin && due > now && due - now <= 2 * w->cap_ns) {
		u64 t0 = now;

		while ((now = now_ns()) < due && !g_stop)
			if (nfds && poll(fds, (nfds_t)nfds, 0) > 0)
				break;	/* an arrival on a link without deferral */
		w->spins++;
		w->spin_ns += now - t0;
		w->window_spin += now - t0;
	}
}

/* ---- traces: raw facts of the forward link (docs/traces.md) ------------------ */

static u64 g_epoch_ns;

static u64 since_epoch(u64 t_ns)
{
	return t_ns > g_epoch_ns ? t_ns - g_epoch_ns : 0;
}

/* packet_facts.csv: seq,time_ns,queue,event,band,len_bytes,flow_id,sojourn_ns,reason */
static void write_packet_fact(struct link *l, u64 t, const char *event, const struct pkt *p,
			      u8 band, int with_sojourn, u8 reason)
{
	fprintf(l->packets, "%" U64F ",%" U64F ",%s,%s,%u,%u,", l->seq++, since_epoch(t),
		l->queue_id, event, band, p->ip_len);
	if (p->flow_id >= 0)
		fprintf(l->packets, "%d,", p->flow_id);
	else
		fputs("NA,", l->packets);
	if (with_sojourn)
		fprintf(l->packets, "%" U64F ",", t - p->arrival_ns);
	else
		fputs("NA,", l->packets);
	fprintf(l->packets, "%s\n", reason ? qcore_reason_names[reason] : "NA");
}

static void trace_packet_event(struct link *l, enum queue_event ev, u64 t, const struct pkt *p,
			       u8 band, u8 reason)
{
	switch (ev) {
	case QEV_MARKED:	/* marked, then queued */
		write_packet_fact(l, t, "mark", p, band, 0, 0);
		write_packet_fact(l, t, "enq", p, band, 0, 0);
		break;
	case QEV_QUEUED:
		write_packet_fact(l, t, "enq", p, band, 0, 0);
		break;
	case QEV_DROPPED:
		write_packet_fact(l, t, "drop", p, band, 0, reason);
		break;
	case QEV_SENT:
		write_packet_fact(l, t, "deq", p, band, 1, 0);
		break;
	case QEV_HEAD_DROP:
		write_packet_fact(l, t, "drop", p, band, 1, reason);
		break;
	case QEV_EMPTY:
		break;
	}
}

/* queue_facts.csv: time_ns,queue,band,backlog_pkts,backlog_bytes,enqueued_pkts,dequeued_pkts,dropped_pkts */
static void write_sample(FILE *q, const struct link *l, u64 t)
{
	u32 b;

	if (!q)
		return;
	for (b = 0; b < l->nbands; b++)
		fprintf(q, "%" U64F ",%s,%u,%u,%" U64F ",%" U64F ",%" U64F ",%" U64F "\n",
			since_epoch(t), l->queue_id, b, l->band[b].n, l->band[b].bytes,
			l->cnt[b].enqueued, l->cnt[b].dequeued, l->cnt[b].dropped);
}

static void link_json(FILE *f, const struct link *l)
{
	u64 enq = 0, deq = 0, drop = 0, mark = 0;
	u32 b;
	double achieved = l->busy_actual_ns > 0 ? l->busy_bits / (l->busy_actual_ns * 1e-9) : 0;

	for (b = 0; b < l->nbands; b++) {
		enq += l->cnt[b].enqueued;
		deq += l->cnt[b].dequeued;
		drop += l->cnt[b].dropped;
		mark += l->cnt[b].marked;
	}
	fprintf(f, "\"%s\": {\"discipline\": \"%s\", \"rate_bps\": %" U64F
		", \"delay_s\": %.9f, \"overhead_bytes\": %u, \"bands\": %u,\n",
		l->name, l->ops->name, l->rate_bps, (double)l->delay_ns * 1e-9, l->overhead_bytes,
		l->nbands);
	fprintf(f, "  \"rx_pkts\": %" U64F ", \"rx_bytes\": %" U64F ", \"non_ip_pkts\": %" U64F
		", \"truncated_pkts\": %" U64F ", \"rejected_pkts\": %" U64F
		", \"kernel_drops\": %" U64F ",\n",
		l->rx_pkts, l->rx_bytes, l->non_ip, l->truncated, l->rejected, l->kernel_drops);
	fprintf(f, "  \"enqueued_pkts\": %" U64F ", \"dequeued_pkts\": %" U64F
		", \"dropped_pkts\": %" U64F ", \"marked_pkts\": %" U64F
		", \"backlog_pkts\": %u, \"staged_pkts\": %u, \"in_flight_pkts\": %u,\n",
		enq, deq, drop, mark, total_backlog(l), l->staged.n, l->delay_line.n);
	fprintf(f, "  \"sent_pkts\": %" U64F ", \"sent_bytes\": %" U64F
		", \"bypass_sent_pkts\": %" U64F ", \"send_retries\": %" U64F
		", \"send_failed_pkts\": %" U64F ",\n",
		l->sent_pkts, l->sent_bytes, l->bypass_sent, l->send_retries, l->send_failed);
	fprintf(f, "  \"busy_bits\": %.0f, \"busy_actual_s\": %.9f, \"busy_ideal_s\": %.9f, "
		"\"achieved_rate_bps\": %.1f,\n  ",
		l->busy_bits, l->busy_actual_ns * 1e-9, l->busy_ideal_ns * 1e-9, achieved);
	dist_json(f, "lateness", &l->lateness);
	fputs(",\n  ", f);
	dist_json(f, "spacing_error", &l->spacing_err);
	fputs(",\n  ", f);
	dist_json(f, "added_delay", &l->added_delay);
	fputs("}", f);
}

/* ---- configuration ------------------------------------------------------------ */

static const struct qcore_disc_ops *find_disc(const char *disc)
{
	const struct qcore_disc_ops *ops = qcore_find(disc);
	int i;

	if (ops)
		return ops;
	fprintf(stderr, "qlab-emu: unknown discipline '%s' (known:", disc);
	for (i = 0; qcore_disciplines[i]; i++)
		fprintf(stderr, " %s", qcore_disciplines[i]->name);
	fputs(")\n", stderr);
	exit(EXIT_USAGE);
}

/*
 * The configure sequence every adapter uses (qcore_configure): each
 * NAME=VALUE parsed by the core's one parser, then defaults, values,
 * check_params and the band count; then the state reset and the seed.
 */
static void setup_disc(struct link *l, const char *disc, char **args, int nargs, u64 seed)
{
	struct qcore_param_value values[MAX_PARAMS];
	char err[QCORE_ERRLEN + 200], name[64];
	int i;

	l->ops = find_disc(disc);
	l->params = xcalloc(1, l->ops->params_size);
	l->vars = xcalloc(1, l->ops->vars_size);
	l->stats = xcalloc(1, l->ops->stats_size);
	memset(values, 0, sizeof(values));
	for (i = 0; i < nargs; i++) {
		const char *eq = strchr(args[i], '=');
		int idx;

		if (!eq || eq == args[i] || (size_t)(eq - args[i]) >= sizeof(name))
			die(EXIT_USAGE, "%s: --param: expected NAME=VALUE, got '%s'", l->name, args[i]);
		snprintf(name, sizeof(name), "%.*s", (int)(eq - args[i]), args[i]);
		idx = qcore_param_index(l->ops, name, err, sizeof(err));
		if (idx < 0 || qcore_param_parse(&l->ops->params[idx], eq + 1, &values[i], err, sizeof(err)))
			die(EXIT_USAGE, "%s: --param: %s", l->name, err);
		values[i].index = (u32)idx;
	}
	if (qcore_configure(l->ops, l->params, values, (u32)nargs, &l->nbands, err, sizeof(err))) {
		char scratch[QCORE_ERRLEN];

		/* The values are in range: failing with check_params passing is a
		 * bad default or band count, the discipline's fault. */
		die(l->ops->check_params(l->params, scratch, sizeof(scratch)) ? EXIT_USAGE : EXIT_CONTRACT,
		    "%s: %s: %s", l->name, disc, err);
	}
	l->ops->reset(l->params, l->vars);
	qcore_rng_seed(&l->rng, seed);
}

/* ---- replay: qcore-replay's events through the emulator's queue --------------- */

static const char events_header[] = "t_ns,op,len,cls,prec,flow";
static const char decisions_header[] = "t_ns,op,pkt,verdict,band,reason";

static void print_decision(struct link *l, enum queue_event ev, u64 t, const struct pkt *p,
			   u8 band, u8 reason)
{
	static const char *const op[] = {
		[QEV_QUEUED] = "enq", [QEV_MARKED] = "enq", [QEV_DROPPED] = "enq",
		[QEV_SENT] = "deq", [QEV_HEAD_DROP] = "drop_head",
	};
	static const char *const verdict[] = {
		[QEV_QUEUED] = "queued", [QEV_MARKED] = "marked", [QEV_DROPPED] = "dropped",
		[QEV_SENT] = "sent", [QEV_HEAD_DROP] = "dropped",
	};

	(void)l;
	if (ev == QEV_EMPTY)
		printf("%" U64F ",deq,-1,empty,,\n", t);
	else
		printf("%" U64F ",%s,%" U64F ",%s,%u,%s\n", t, op[ev], p->id, verdict[ev], band,
		       qcore_reason_names[reason]);
}

static char g_row_name[48];

static void __attribute__((noreturn, format(printf, 1, 2))) die_row(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "qlab-emu: %s: ", g_row_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_USAGE);
}

/* One column of an events row: empty is 0 where allowed. */
static u64 event_field(const char *name, const char *text, u64 min, u64 max, const char *unit,
		       int empty_ok)
{
	char err[QCORE_ERRLEN];
	u64 v = 0;

	if (!(*text == '\0' && empty_ok) && parse_dec(name, text, min, max, unit, &v, err, sizeof(err)))
		die_row("column %s", err);
	return v;
}

/* Exactly n comma-separated fields, split in place. */
static int split_row(char *line, char **col, int n)
{
	int k = 0;

	col[k++] = line;
	for (; *line; line++) {
		if (*line != ',')
			continue;
		if (k == n)
			return -1;
		*line = '\0';
		col[k++] = line + 1;
	}
	return k == n ? 0 : -1;
}

/*
 * Every events row through link_arrival / link_serve, the decisions
 * printed by the queue's observer.  Replayed packets are ECN-capable, as in
 * ns-3's golden test: the events carry no ECN field, and qcore-replay
 * reports the core's MARK as it is.
 */
static int replay(const char *disc, char **params, int nparams, u64 seed)
{
	char *line = NULL, *col[6], err[QCORE_ERRLEN];
	size_t cap = 0, len;
	u64 row = 0, t, last_t = 0;
	struct link l;

	memset(&l, 0, sizeof(l));
	l.name = "replay";
	setup_disc(&l, disc, params, nparams, seed);
	l.name = g_row_name;
	l.observe = print_decision;
	if (getline(&line, &cap, stdin) < 0)
		die(EXIT_USAGE, "line 1: missing header %s", events_header);
	line[strcspn(line, "\r\n")] = '\0';
	if (strcmp(line, events_header))
		die(EXIT_USAGE, "line 1: header must be exactly %s, got '%s'", events_header, line);
	printf("%s\n", decisions_header);
	while (getline(&line, &cap, stdin) >= 0) {
		row++;
		snprintf(g_row_name, sizeof(g_row_name), "row %" U64F " (line %" U64F ")", row, row + 1);
		len = strlen(line);
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		if (len && line[len - 1] == '\r')
			line[--len] = '\0';
		if (split_row(line, col, 6))
			die_row("expected 6 columns (%s)", events_header);
		t = event_field("t_ns", col[0], 0, UINT64_MAX, "ns", 0);
		if (t < last_t)
			die_row("column t_ns: %" U64F " is before the previous row's %" U64F
				" (times never decrease)", t, last_t);
		last_t = t;
		if (!strcmp(col[1], "enq")) {
			struct qcore_pkt qp = { .now_ns = t, .flags = QCORE_PKT_ECT };
			struct pkt *p = pkt_get();
			struct qcore_decision d;

			qp.len = (u32)event_field("len", col[2], 1, 65535, "IP bytes", 0);
			qp.cls = (u8)event_field("cls", col[3], 0, 255, "class", 1);
			qp.prec = (u8)event_field("prec", col[4], 0, 255, "precedence", 1);
			qp.flow_hash = (u32)event_field("flow", col[5], 0, UINT32_MAX, "hash", 1);
			p->ip_len = qp.len;
			p->arrival_ns = t;
			if (link_arrival(&l, p, &qp, &d, err, sizeof(err)))
				die_row("column %s", err);
			if (d.verdict == QCORE_DROP)
				pkt_put(p);
		} else if (!strcmp(col[1], "deq")) {
			static const char *const names[] = { "len", "cls", "prec", "flow" };
			int i;

			for (i = 0; i < 4; i++)
				if (*col[i + 2])
					die_row("column %s: must be empty on a deq row, got '%s'", names[i],
						col[i + 2]);
			pkt_put(link_serve(&l, t));	/* no transmitter: the decision is the output */
		} else {
			die_row("column op: expected enq or deq, got '%s'", col[1]);
		}
	}
	if (ferror(stdin))
		die(1, "reading events: read error");
	if (fflush(stdout) || ferror(stdout))
		die(1, "writing decisions: write error");
	free(line);
	return 0;
}

/* ---- emulation ---------------------------------------------------------------- */

static void usage(FILE *out)
{
	fputs("usage: qlab-emu --if-a IFACE --if-b IFACE --rate-bps N [options]\n"
	      "       qlab-emu --replay DISC [--param NAME=VALUE]... [--seed N] < events.csv > decisions.csv\n"
	      "       qlab-emu --replay DISC --help | --list\n"
	      "  forward link (A -> B), the bottleneck under test:\n"
	      "    --rate-bps N          link rate (required)\n"
	      "    --delay-ns N          propagation delay (default 0)\n"
	      "    --disc NAME           core discipline (default droptail)\n"
	      "    --param NAME=VALUE    discipline parameter (repeatable)\n"
	      "  reverse link (B -> A): --rev-rate-bps N (default: forward's),\n"
	      "    --rev-delay-ns N (default: forward's), --rev-disc NAME (default droptail),\n"
	      "    --rev-param NAME=VALUE (default limit_pkts=10000)\n"
	      "  --overhead-bytes N      added to the IP length for the transmission time (default 0)\n"
	      "  --seed N                seed of the core's generator (default 1; reverse: N + 1)\n"
	      "  --epoch-ns T            CLOCK_REALTIME of trace time 0 (default: start)\n"
	      "  --end-ns N              stop N ns after the epoch at the latest (last sample then)\n"
	      "  --queue-id ID           the forward queue's name in the traces (LINK:NODE)\n"
	      "  --flowmap FILE          lines 'tcp|udp SRC-ADDR SRC-PORT DST-ADDR DST-PORT FLOW-ID'\n"
	      "  --queues FILE           queue samples (docs/traces.md queue_facts.csv)\n"
	      "  --sample-ns N           queue sample interval (default 100000000)\n"
	      "  --packets FILE          per-packet events (packet_facts.csv)\n"
	      "  --summary FILE          JSON counters and fidelity statistics at exit\n"
	      "  --ready FILE            created once both sockets are open\n"
	      "  --spin-ns N             the most a wake-up is asked early before a departure;\n"
	      "                          spins last at most twice this (default 50000; 0: never spin)\n"
	      "  --send-give-up-ns N     retry a refused send this long (default 100000000)\n"
	      "  --rt-priority N         run SCHED_FIFO at priority N (1..99; default 0: off)\n"
	      "  --replay DISC           replay events (qcore-replay's format) through the queue\n"
	      "  --list                  the core's disciplines\n"
	      "exit status: 0 ok, 2 bad arguments (or replay events), 3 a discipline broke the contract\n",
	      out);
}

enum {
	OPT_IF_A = 256, OPT_IF_B, OPT_RATE, OPT_DELAY, OPT_DISC, OPT_PARAM, OPT_REV_RATE,
	OPT_REV_DELAY, OPT_REV_DISC, OPT_REV_PARAM, OPT_OVERHEAD, OPT_SEED, OPT_EPOCH, OPT_END,
	OPT_QUEUE_ID, OPT_FLOWMAP, OPT_QUEUES, OPT_SAMPLE, OPT_PACKETS, OPT_SUMMARY, OPT_READY,
	OPT_SPIN, OPT_GIVEUP, OPT_RT, OPT_REPLAY, OPT_LIST, OPT_HELP,
};

static FILE *open_trace(const char *path, const char *header, size_t buf)
{
	FILE *f = fopen(path, "w");

	if (!f)
		die(EXIT_USAGE, "cannot write %s: %s", path, strerror(errno));
	setvbuf(f, NULL, _IOFBF, buf);
	fprintf(f, "%s\n", header);
	return f;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "if-a", 1, 0, OPT_IF_A }, { "if-b", 1, 0, OPT_IF_B },
		{ "rate-bps", 1, 0, OPT_RATE }, { "delay-ns", 1, 0, OPT_DELAY },
		{ "disc", 1, 0, OPT_DISC }, { "param", 1, 0, OPT_PARAM },
		{ "rev-rate-bps", 1, 0, OPT_REV_RATE }, { "rev-delay-ns", 1, 0, OPT_REV_DELAY },
		{ "rev-disc", 1, 0, OPT_REV_DISC }, { "rev-param", 1, 0, OPT_REV_PARAM },
		{ "overhead-bytes", 1, 0, OPT_OVERHEAD }, { "seed", 1, 0, OPT_SEED },
		{ "epoch-ns", 1, 0, OPT_EPOCH }, { "end-ns", 1, 0, OPT_END },
		{ "queue-id", 1, 0, OPT_QUEUE_ID }, { "flowmap", 1, 0, OPT_FLOWMAP },
		{ "queues", 1, 0, OPT_QUEUES }, { "sample-ns", 1, 0, OPT_SAMPLE },
		{ "packets", 1, 0, OPT_PACKETS }, { "summary", 1, 0, OPT_SUMMARY },
		{ "ready", 1, 0, OPT_READY }, { "spin-ns", 1, 0, OPT_SPIN },
		{ "send-give-up-ns", 1, 0, OPT_GIVEUP }, { "rt-priority", 1, 0, OPT_RT },
		{ "replay", 1, 0, OPT_REPLAY }, { "list", 0, 0, OPT_LIST },
		{ "help", 0, 0, OPT_HELP }, { 0, 0, 0, 0 },
	};
	const char *if_a = NULL, *if_b = NULL, *disc = "droptail", *rev_disc = "droptail";
	const char *queues_path = NULL, *packets_path = NULL, *summary_path = NULL;
	const char *ready_path = NULL, *replay_disc = NULL, *flowmap_path = NULL;
	char *params[MAX_PARAMS], *rev_params[MAX_PARAMS], rev_default[] = "limit_pkts=10000";
	int nparams = 0, nrev = 0, c, have_rev_rate = 0, have_rev_delay = 0, help = 0;
	u64 rt_priority = 0, end_ns = UINT64_MAX, last_sample = UINT64_MAX;
	u64 seed = 1, sample_ns = 100000000ULL, spin_ns = DEFAULT_SPIN_NS, give_up_ns = 100000000ULL;
	u64 next_sample, start_ns, stop_at, t_end;
	struct link fwd, rev;
	struct link *links[2] = { &fwd, &rev };
	FILE *queues = NULL;
	int i, cpu_latency_fd = -1;
	struct waiter waiter;
	struct sigaction sa;

	memset(&fwd, 0, sizeof(fwd));
	memset(&rev, 0, sizeof(rev));
	memset(&waiter, 0, sizeof(waiter));
	fwd.name = "forward";
	rev.name = "reverse";
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case OPT_IF_A: if_a = optarg; break;
		case OPT_IF_B: if_b = optarg; break;
		case OPT_RATE: fwd.rate_bps = opt_dec("rate-bps", optarg, 1, UINT64_MAX / 8, "bps"); break;
		case OPT_DELAY: fwd.delay_ns = opt_dec("delay-ns", optarg, 0, UINT64_MAX / 4, "ns"); break;
		case OPT_DISC: disc = optarg; break;
		case OPT_PARAM:
			if (nparams == MAX_PARAMS)
				die(EXIT_USAGE, "too many --param");
			params[nparams++] = optarg;
			break;
		case OPT_REV_RATE:
			rev.rate_bps = opt_dec("rev-rate-bps", optarg, 1, UINT64_MAX / 8, "bps");
			have_rev_rate = 1;
			break;
		case OPT_REV_DELAY:
			rev.delay_ns = opt_dec("rev-delay-ns", optarg, 0, UINT64_MAX / 4, "ns");
			have_rev_delay = 1;
			break;
		case OPT_REV_DISC: rev_disc = optarg; break;
		case OPT_REV_PARAM:
			if (nrev == MAX_PARAMS)
				die(EXIT_USAGE, "too many --rev-param");
			rev_params[nrev++] = optarg;
			break;
		case OPT_OVERHEAD:
			fwd.overhead_bytes = rev.overhead_bytes =
				(u32)opt_dec("overhead-bytes", optarg, 0, 65535, "bytes");
			break;
		case OPT_SEED: seed = opt_dec("seed", optarg, 0, UINT64_MAX, "seed"); break;
		case OPT_EPOCH: g_epoch_ns = opt_dec("epoch-ns", optarg, 0, UINT64_MAX / 2, "ns"); break;
		case OPT_END: end_ns = opt_dec("end-ns", optarg, 0, UINT64_MAX / 2, "ns"); break;
		case OPT_QUEUE_ID: fwd.queue_id = optarg; break;
		case OPT_FLOWMAP: flowmap_path = optarg; break;
		case OPT_QUEUES: queues_path = optarg; break;
		case OPT_SAMPLE: sample_ns = opt_dec("sample-ns", optarg, 1, UINT64_MAX / 4, "ns"); break;
		case OPT_PACKETS: packets_path = optarg; break;
		case OPT_SUMMARY: summary_path = optarg; break;
		case OPT_READY: ready_path = optarg; break;
		case OPT_SPIN: spin_ns = opt_dec("spin-ns", optarg, 0, 1000000000, "ns"); break;
		case OPT_GIVEUP: give_up_ns = opt_dec("send-give-up-ns", optarg, 0, UINT64_MAX / 2, "ns"); break;
		case OPT_RT: rt_priority = opt_dec("rt-priority", optarg, 0, 99, "priority"); break;
		case OPT_REPLAY: replay_disc = optarg; break;
		case OPT_LIST:
			for (i = 0; qcore_disciplines[i]; i++)
				printf("%s\n", qcore_disciplines[i]->name);
			return 0;
		case OPT_HELP: help = 1; break;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (replay_disc) {
		if (optind != argc || if_a || if_b)
			die(EXIT_USAGE, "--replay takes only --param and --seed (qlab-emu --help)");
		if (help) {
			const struct qcore_disc_ops *ops = find_disc(replay_disc);

			printf("%s: %s\n%s\n", ops->name, ops->summary,
			       ops->bands_help ? ops->bands_help : "bands: see the discipline's header");
			qcore_params_usage(ops, stdout);
			return 0;
		}
		return replay(replay_disc, params, nparams, seed);
	}
	if (help) {
		usage(stdout);
		return 0;
	}
	if (optind != argc || !if_a || !if_b || !fwd.rate_bps) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if ((queues_path || packets_path) && !fwd.queue_id)
		die(EXIT_USAGE, "--queues and --packets need --queue-id (the queue's LINK:NODE)");
	if (!have_rev_rate)
		rev.rate_bps = fwd.rate_bps;
	if (!have_rev_delay)
		rev.delay_ns = fwd.delay_ns;
	if (!nrev && !strcmp(rev_disc, "droptail"))
		rev_params[nrev++] = rev_default;
	setup_disc(&fwd, disc, params, nparams, seed);
	setup_disc(&rev, rev_disc, rev_params, nrev, seed + 1);
	for (i = 0; i < 2; i++) {
		dist_init(&links[i]->lateness);
		dist_init(&links[i]->spacing_err);
		dist_init(&links[i]->added_delay);
	}
	if (flowmap_path)
		load_flowmap(flowmap_path);

	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (rt_priority) {
		/* The hosts and applications share 2 cores with the emulator: a
		 * real-time priority keeps their load from delaying departures.
		 * The loop sleeps between events and spins at most --spin-ns. */
		struct sched_param sp = { .sched_priority = (int)rt_priority };

		if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
			die(EXIT_USAGE, "SCHED_FIFO priority %d: %s", (int)rt_priority, strerror(errno));
		mlockall(MCL_CURRENT | MCL_FUTURE);
		cpu_latency_fd = hold_cpu_latency_zero();
	}
	fwd.in_fd = open_socket(if_a);
	rev.in_fd = open_socket(if_b);
	fwd.out_fd = rev.in_fd;
	rev.out_fd = fwd.in_fd;

	if (queues_path)
		queues = open_trace(queues_path, "time_ns,queue,band,backlog_pkts,backlog_bytes,"
				    "enqueued_pkts,dequeued_pkts,dropped_pkts", 1 << 16);
	if (packets_path) {
		fwd.packets = open_trace(packets_path, "seq,time_ns,queue,event,band,len_bytes,flow_id,"
					 "sojourn_ns,reason", 1 << 20);
		fwd.observe = trace_packet_event;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	for (i = 0; i < 2; i++)
		if (links[i]->delay_ns >= DEFER_MIN_NS)
			links[i]->defer_ns = links[i]->delay_ns / 2 < DEFER_MAX_NS ?
					     links[i]->delay_ns / 2 : DEFER_MAX_NS;
	waiter.cap_ns = spin_ns;
	waiter_calibrate(&waiter);

	start_ns = now_ns();
	if (!g_epoch_ns)
		g_epoch_ns = start_ns;
	/* The model never runs past the end: what arrives later is not processed. */
	stop_at = end_ns == UINT64_MAX ? UINT64_MAX : g_epoch_ns + end_ns;
	/* Samples at epoch + k * interval, from the first one not in the past. */
	next_sample = g_epoch_ns;
	while (next_sample < start_ns)
		next_sample += sample_ns;
	for (i = 0; i < 2; i++)
		links[i]->vt_ns = start_ns;
	if (ready_path) {
		FILE *r = fopen(ready_path, "w");

		if (r)
			fclose(r);
	}

	while (!g_stop) {
		u64 now, wake, by;
		struct pollfd watch[2];
		int nwatch;

		drain(&fwd);
		drain(&rev);
		now = now_ns();
		if (now >= stop_at)
			break;
		while (next_sample <= now) {
			advance(&fwd, next_sample);
			advance(&rev, next_sample);
			write_sample(queues, &fwd, next_sample);
			last_sample = next_sample;
			next_sample += sample_ns;
		}
		advance(&fwd, now);
		advance(&rev, now);
		send_due(&fwd, give_up_ns);
		send_due(&rev, give_up_ns);

		/* samples and the end are model work: they may run late */
		wake = UINT64_MAX;
		by = next_sample < stop_at ? next_sample : stop_at;
		nwatch = 0;
		for (i = 0; i < 2; i++) {
			next_wake(links[i], now, &wake, &by);
			if (!links[i]->defer_ns)
				watch[nwatch++] = (struct pollfd){ .fd = links[i]->in_fd, .events = POLLIN };
			else if (now + links[i]->defer_ns < by)
				by = now + links[i]->defer_ns;
		}
		now = now_ns();
		if (wake <= now || by <= now)
			continue;
		waiter_wait(&waiter, watch, nwatch, wake, by);
	}

	/* The end (a signal or --end-ns): the state then, counters flushed. */
	t_end = now_ns();
	if (t_end > stop_at)
		t_end = stop_at;
	drain(&fwd);
	drain(&rev);
	for (; next_sample <= t_end; next_sample += sample_ns) {	/* any a late wake-up left out */
		advance(&fwd, next_sample);
		advance(&rev, next_sample);
		write_sample(queues, &fwd, next_sample);
		last_sample = next_sample;
	}
	advance(&fwd, t_end);
	advance(&rev, t_end);
	if (t_end >= g_epoch_ns && t_end != last_sample)
		write_sample(queues, &fwd, t_end);
	fwd.kernel_drops += kernel_drops(fwd.in_fd);
	rev.kernel_drops += kernel_drops(rev.in_fd);
	if (queues && fclose(queues))
		die(1, "writing %s: %s", queues_path, strerror(errno));
	if (fwd.packets && fclose(fwd.packets))
		die(1, "writing %s: %s", packets_path, strerror(errno));
	if (summary_path) {
		FILE *f = fopen(summary_path, "w");

		if (!f)
			die(1, "cannot write %s: %s", summary_path, strerror(errno));
		fprintf(f, "{\"version\": \"%s\", \"compiler\": \"%s\", \"epoch_ns\": %" U64F
			", \"start_ns\": %" U64F ", \"stop_ns\": %" U64F ", \"end_ns\": %" U64F
			", \"spin_ns\": %" U64F ", \"rt_priority\": %" U64F ", \"cpu_latency_zero\": %s,\n",
			QLAB_EMU_VERSION, __VERSION__, g_epoch_ns, start_ns, now_ns(),
			since_epoch(t_end), spin_ns, rt_priority, cpu_latency_fd >= 0 ? "true" : "false");
		fprintf(f, "\"wait\": {\"early_ns\": %.0f, \"sleeps\": %" U64F ", \"timed_sleeps\": %" U64F
			", \"spins\": %" U64F ", \"spin_s\": %.9f, \"over_budget\": %" U64F
			"}, \"pool_pkts\": %" U64F ",\n",
			waiter.early_ns, waiter.sleeps, waiter.timed, waiter.spins,
			(double)waiter.spin_ns * 1e-9, waiter.over_budget, g_pool_pkts);
		link_json(f, &fwd);
		fputs(",\n", f);
		link_json(f, &rev);
		fputs("}\n", f);
		if (fclose(f))
			die(1, "writing %s: %s", summary_path, strerror(errno));
	}
	return 0;
}
