// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * qlab-emu - a userspace bottleneck between two interfaces (bump in the
 * wire), running any discipline of the qlab core (disciplines/core).
 *
 *	qlab-emu --if-a IFACE --if-b IFACE --epoch-ns T [options]
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
 * Only IPv4 goes through the model; other frames (ARP, IPv6) are forwarded
 * at once and counted.  The core sees the IP total length (no Ethernet
 * header); cls/prec come from the ToS byte as in the ns-3 adapter
 * (cls = ToS >> 5, prec = (ToS >> 3) & 3).
 *
 * Outputs (forward link only, times relative to --epoch-ns, in seconds):
 * --queues FILE (docs/traces.md queues.csv), --packets FILE (packets.csv),
 * --summary FILE (JSON: counters and fidelity statistics of both links).
 * SIGTERM/SIGINT: a last queue sample, counters flushed, exit 0.
 *
 * Timing: a timerfd (CLOCK_REALTIME, absolute) wakes the loop --spin-ns
 * before the next departure; the rest is spun.  Timer slack is set to 1 ns.
 * Sends use sendmmsg; ENOBUFS/EAGAIN keep the packet at the head of the
 * delay line and retry (counted), a packet that still fails after
 * --send-give-up-ns is counted as send_failed (never silently lost).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "qcore.h"

#define QLAB_EMU_VERSION "1.0"
#define U64F PRIu64		/* u64 is uint64_t (qcore_compat.h) */
#define NS_PER_S ((u64)1000000000)
#define BATCH 64
#define FRAME_MAX 65600		/* a whole GSO frame, should offloads be on */
#define DEFAULT_SPIN_NS 50000
#define LAT_BUCKETS 200001	/* 1 us histogram buckets up to 200 ms */
#define MAX_FLOWMAP 4096

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	va_list ap;

	fputs("qlab-emu: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die("out of memory");
	return p;
}

static u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

/* ---- packets and FIFOs ---------------------------------------------------- */

struct pkt {
	struct pkt *next;
	u64 arrival_ns;		/* virtual: kernel receive timestamp */
	u64 deq_ns;		/* virtual: start of transmission */
	u64 release_ns;		/* virtual: leaves the emulator */
	u32 ip_len;		/* what the core sees */
	u32 frame_len;
	u32 tx_ns;		/* transmission time */
	int flow_id;		/* -1: not in the flow map */
	u8 band;
	u8 back_to_back;	/* dequeued the moment the previous left the transmitter */
	u8 is_ip;
	u8 data[];
};

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

struct link {
	const char *name;	/* "forward" / "reverse" */
	int in_fd, out_fd;	/* sockets: receive on in, send on out */
	int out_ifindex;
	u64 rate_bps;
	u64 delay_ns;
	u32 overhead_bytes;	/* added to the IP length for the transmission time */

	const struct qcore_disc_ops *ops;
	void *params, *vars, *stats;
	u32 nbands;
	struct qcore_rng rng;
	struct fifo band[QCORE_MAX_BANDS];
	struct band_counters cnt[QCORE_MAX_BANDS];

	struct fifo staged;	/* received, not yet processed (virtual time) */
	struct fifo delay_line;	/* transmitted, waiting for release_ns */
	struct fifo bypass;	/* non-IPv4 frames, sent at once */
	u64 vt_ns;		/* virtual time of the last processed event */
	u64 tx_busy_until_ns;
	u64 backlog_since_ns;	/* when the band queues last became non-empty */

	u64 rx_pkts, rx_bytes, non_ip, truncated, rejected, marked_noecn;
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
	FILE *packets;
	u64 seq;
};

static struct flowmap_entry {
	u32 addr;		/* network order */
	int flow_id;
} g_flowmap[MAX_FLOWMAP];
static int g_nflowmap;
static u64 g_epoch_ns;

static int flow_of(u32 saddr)
{
	int i;

	for (i = 0; i < g_nflowmap; i++)
		if (g_flowmap[i].addr == saddr)
			return g_flowmap[i].flow_id;
	return -1;
}

static void fmt_time(char *buf, size_t len, u64 t_ns)
{
	u64 rel = t_ns > g_epoch_ns ? t_ns - g_epoch_ns : 0;

	snprintf(buf, len, "%" U64F ".%09" U64F, rel / NS_PER_S, rel % NS_PER_S);
}

static void log_event(struct link *l, u64 t_ns, const char *event, const struct pkt *p,
		      int sojourn, const char *reason)
{
	char t[32], soj[32];

	if (!l->packets)
		return;
	fmt_time(t, sizeof(t), t_ns);
	if (sojourn) {
		u64 s = t_ns - p->arrival_ns;

		snprintf(soj, sizeof(soj), "%" U64F ".%09" U64F, s / NS_PER_S,
			 s % NS_PER_S);
	}
	fprintf(l->packets, "%" U64F ",%s,%s,%u,%u,", l->seq++, t, event, p->band, p->ip_len);
	if (p->flow_id >= 0)
		fprintf(l->packets, "%d,", p->flow_id);
	else
		fputs("NA,", l->packets);
	fprintf(l->packets, "%s,%s\n", sojourn ? soj : "NA", reason ? reason : "NA");
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

static u32 total_backlog(const struct link *l)
{
	u32 b, n = 0;

	for (b = 0; b < l->nbands; b++)
		n += l->band[b].n;
	return n;
}

/* Metadata the core sees, from the IPv4 header (ns-3 adapter's rules). */
static int classify(struct pkt *p, struct qcore_pkt *qp)
{
	const struct iphdr *ip = (const struct iphdr *)(p->data + ETH_HLEN);
	u32 ihl, h;

	memset(qp, 0, sizeof(*qp));
	ihl = (u32)ip->ihl * 4;
	qp->len = p->ip_len;
	qp->cls = ip->tos >> 5;
	qp->prec = (ip->tos >> 3) & 3;
	h = ip->saddr * 2654435761u ^ ip->daddr * 40503u ^ ip->protocol;
	if (ip->protocol == IPPROTO_TCP && ihl >= 20 && p->ip_len >= ihl + 20 &&
	    p->frame_len >= ETH_HLEN + ihl + 20 && !(ntohs(ip->frag_off) & 0x1fff)) {
		const struct tcphdr *tcp = (const struct tcphdr *)((const u8 *)ip + ihl);
		u32 doff = (u32)tcp->doff * 4;

		h ^= ((u32)ntohs(tcp->source) << 16 | ntohs(tcp->dest)) * 2246822519u;
		if (p->ip_len == ihl + doff && tcp->ack && !tcp->syn && !tcp->fin && !tcp->rst)
			qp->flags |= QCORE_PKT_PURE_ACK;
	} else if (ip->protocol == IPPROTO_UDP && p->frame_len >= ETH_HLEN + ihl + 8) {
		const u8 *udp = (const u8 *)ip + ihl;

		h ^= ((u32)udp[0] << 24 | (u32)udp[1] << 16 | (u32)udp[2] << 8 | udp[3]) * 2246822519u;
	}
	qp->flow_hash = h;
	return 0;
}

/* ECN CE on an ECT packet, with the checksum recomputed; 0 if not ECT. */
static int mark_ce(struct pkt *p)
{
	struct iphdr *ip = (struct iphdr *)(p->data + ETH_HLEN);
	u32 sum = 0, i, ihl = (u32)ip->ihl * 4;
	const u16 *w = (const u16 *)ip;

	if ((ip->tos & 3) == 0)
		return 0;
	ip->tos |= 3;
	ip->check = 0;
	for (i = 0; i < ihl / 2; i++)
		sum += w[i];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	ip->check = (u16)~sum;
	return 1;
}

static void do_arrival(struct link *l, struct pkt *p)
{
	struct qcore_band_view v[QCORE_MAX_BANDS];
	struct qcore_pkt qp;
	struct qcore_decision d;
	char err[QCORE_ERRLEN];

	l->vt_ns = p->arrival_ns;
	classify(p, &qp);
	qp.now_ns = p->arrival_ns;
	if (l->ops->check_pkt && l->ops->check_pkt(l->params, &qp, err, sizeof(err))) {
		/* The ns-3 adapter stops here; an emulator must keep going: count it. */
		if (l->rejected++ == 0)
			fprintf(stderr, "qlab-emu: %s: packet cls=%u prec=%u rejected: %s\n",
				l->name, qp.cls, qp.prec, err);
		free(p);
		return;
	}
	fill_views(l, v);
	d = l->ops->enqueue(l->params, l->vars, l->stats, &qp, v, &l->rng);
	if (d.band >= l->nbands || d.reason >= QCORE_REASON__COUNT)
		die("%s: the core returned band %u reason %u", l->ops->name, d.band, d.reason);
	p->band = d.band;
	if (d.verdict == QCORE_MARK && !mark_ce(p)) {
		d.verdict = QCORE_DROP;	/* as ns-3: a mark on a non-ECT packet drops it */
		d.reason = QCORE_REASON_AQM;
		l->marked_noecn++;
	}
	if (d.verdict == QCORE_DROP) {
		l->cnt[d.band].dropped++;
		log_event(l, p->arrival_ns, "drop", p, 0, qcore_reason_names[d.reason]);
		free(p);
		return;
	}
	if (d.verdict == QCORE_MARK) {
		l->cnt[d.band].marked++;
		log_event(l, p->arrival_ns, "mark", p, 0, NULL);
	}
	if (total_backlog(l) == 0)
		l->backlog_since_ns = p->arrival_ns;
	fifo_push(&l->band[d.band], p);
	l->cnt[d.band].enqueued++;
	log_event(l, p->arrival_ns, "enq", p, 0, NULL);
}

/* The transmitter is free at t: ask the core, start one transmission. */
static void do_dequeue(struct link *l, u64 t)
{
	struct qcore_band_view v[QCORE_MAX_BANDS];
	u32 rounds = total_backlog(l) + 1, i;
	int b2b = l->tx_busy_until_ns == t && t > l->backlog_since_ns;

	l->vt_ns = t;
	for (i = 0; i < rounds; i++) {
		struct qcore_deq d;
		struct pkt *p;

		fill_views(l, v);
		d = l->ops->dequeue(l->params, l->vars, v, t);
		if (d.action == QCORE_DEQ_EMPTY)
			return;
		if (d.band >= l->nbands || !l->band[d.band].n)
			die("%s: the core chose empty or missing band %u", l->ops->name, d.band);
		p = fifo_pop(&l->band[d.band]);
		fill_views(l, v);
		l->ops->dequeued(l->params, l->vars, l->stats, d.band, p->ip_len, t, v);
		if (d.action == QCORE_DEQ_DROP_HEAD) {
			l->cnt[d.band].dropped++;
			log_event(l, t, "drop", p, 1, qcore_reason_names[d.reason]);
			free(p);
			continue;
		}
		l->cnt[d.band].dequeued++;
		log_event(l, t, "deq", p, 1, NULL);
		p->deq_ns = t;
		p->tx_ns = (u32)(((u64)(p->ip_len + l->overhead_bytes) * 8ULL * 1000000000ULL +
				  l->rate_bps - 1) / l->rate_bps);
		p->back_to_back = (u8)b2b;
		l->tx_busy_until_ns = t + p->tx_ns;
		p->release_ns = l->tx_busy_until_ns + l->delay_ns;
		fifo_push(&l->delay_line, p);
		return;
	}
	die("%s: the core asked for more head drops than packets queued", l->ops->name);
}

/* Run the model up to virtual time `until`, events in time order. */
static void advance(struct link *l, u64 until)
{
	for (;;) {
		u64 t_arr = l->staged.head ? l->staged.head->arrival_ns : UINT64_MAX;
		u64 t_deq = UINT64_MAX;

		if (total_backlog(l))
			t_deq = l->tx_busy_until_ns > l->vt_ns ? l->tx_busy_until_ns : l->vt_ns;
		if (t_arr <= t_deq && t_arr <= until) {
			struct pkt *p = fifo_pop(&l->staged);

			if (p->arrival_ns < l->vt_ns)	/* read late: keep time monotonic */
				p->arrival_ns = l->vt_ns;
			do_arrival(l, p);
		} else if (t_deq <= until) {
			do_dequeue(l, t_deq);
		} else {
			return;
		}
	}
}

static u64 next_wake(const struct link *l)
{
	u64 t = UINT64_MAX;

	if (l->bypass.head || l->retry_since_ns)
		return 0;
	if (l->delay_line.head)
		t = l->delay_line.head->release_ns;
	if (total_backlog(l)) {
		u64 d = l->tx_busy_until_ns > l->vt_ns ? l->tx_busy_until_ns : l->vt_ns;

		if (d < t)
			t = d;
	}
	return t;
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
				free(s);
			}
			if (sent > 0)
				l->retry_since_ns = 0;
			if (sent < n) {
				if (errno == EMSGSIZE || errno == EINVAL) {
					/* cannot ever be sent: account for it, go on */
					free(fifo_pop(queues[q]));
					l->send_failed++;
					continue;
				}
				l->send_retries++;
				if (!l->retry_since_ns)
					l->retry_since_ns = now;
				else if (now - l->retry_since_ns > give_up_ns) {
					free(fifo_pop(queues[q]));
					l->send_failed++;
					l->retry_since_ns = 0;
					continue;
				}
				return;
			}
		}
	}
}

/* Read every frame waiting on the link's input socket into `staged`. */
static void drain(struct link *l)
{
	static u8 *bufs[BATCH];
	static char ctrl[BATCH][256];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_ll from[BATCH];
	int n, i;

	if (!bufs[0])
		for (i = 0; i < BATCH; i++)
			bufs[i] = xcalloc(1, FRAME_MAX);
	for (;;) {
		for (i = 0; i < BATCH; i++) {
			memset(&msgs[i], 0, sizeof(msgs[i]));
			iov[i].iov_base = bufs[i];
			iov[i].iov_len = FRAME_MAX;
			msgs[i].msg_hdr.msg_iov = &iov[i];
			msgs[i].msg_hdr.msg_iovlen = 1;
			msgs[i].msg_hdr.msg_name = &from[i];
			msgs[i].msg_hdr.msg_namelen = sizeof(from[i]);
			msgs[i].msg_hdr.msg_control = ctrl[i];
			msgs[i].msg_hdr.msg_controllen = sizeof(ctrl[i]);
		}
		n = recvmmsg(l->in_fd, msgs, BATCH, MSG_DONTWAIT | MSG_TRUNC, NULL);
		if (n <= 0)
			return;
		for (i = 0; i < n; i++) {
			u32 len = msgs[i].msg_len;
			u64 ts = 0;
			struct cmsghdr *c;
			struct pkt *p;
			const struct ether_header *eth = (const struct ether_header *)bufs[i];

			if (from[i].sll_pkttype == PACKET_OUTGOING)
				continue;
			if (len > FRAME_MAX || (msgs[i].msg_hdr.msg_flags & MSG_TRUNC)) {
				l->truncated++;
				continue;
			}
			if (len < ETH_HLEN)
				continue;
			for (c = CMSG_FIRSTHDR(&msgs[i].msg_hdr); c;
			     c = CMSG_NXTHDR(&msgs[i].msg_hdr, c)) {
				if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPNS) {
					struct timespec tsv;

					memcpy(&tsv, CMSG_DATA(c), sizeof(tsv));
					ts = (u64)tsv.tv_sec * 1000000000ULL + (u64)tsv.tv_nsec;
				}
			}
			if (!ts)
				ts = now_ns();
			p = xcalloc(1, sizeof(*p) + len);
			memcpy(p->data, bufs[i], len);
			p->frame_len = len;
			p->arrival_ns = ts;
			p->flow_id = -1;
			l->rx_pkts++;
			l->rx_bytes += len;
			if (ntohs(eth->ether_type) == ETHERTYPE_IP && len >= ETH_HLEN + 20) {
				const struct iphdr *ip = (const struct iphdr *)(bufs[i] + ETH_HLEN);
				u32 tot = ntohs(ip->tot_len);

				if (ip->version == 4 && tot >= 20 && tot <= len - ETH_HLEN) {
					p->is_ip = 1;
					p->ip_len = tot;
					p->flow_id = flow_of(ip->saddr);
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

static int open_socket(const char *ifname, int *ifindex)
{
	struct sockaddr_ll sll;
	int fd, one = 1, big = 8 << 20;

	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (fd < 0)
		die("socket(AF_PACKET): %s (run as root)", strerror(errno));
	*ifindex = (int)if_nametoindex(ifname);
	if (!*ifindex)
		die("no interface %s", ifname);
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = *ifindex;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		die("bind %s: %s", ifname, strerror(errno));
#ifdef PACKET_IGNORE_OUTGOING
	setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
#endif
	setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	/* Frames sent here must not be seen again by this socket's receive path
	 * (PACKET_IGNORE_OUTGOING above; PACKET_OUTGOING is also skipped). */
	{
		struct packet_mreq mr;

		memset(&mr, 0, sizeof(mr));
		mr.mr_ifindex = *ifindex;
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

/* ---- configuration --------------------------------------------------------- */

static void setup_disc(struct link *l, const char *disc, char **params, int nparams, u64 seed)
{
	char err[QCORE_ERRLEN];
	int i;

	l->ops = qcore_find(disc);
	if (!l->ops) {
		fprintf(stderr, "qlab-emu: %s: unknown discipline '%s' (known:", l->name, disc);
		for (i = 0; qcore_disciplines[i]; i++)
			fprintf(stderr, " %s", qcore_disciplines[i]->name);
		fputs(")\n", stderr);
		exit(2);
	}
	l->params = xcalloc(1, l->ops->params_size);
	l->vars = xcalloc(1, l->ops->vars_size);
	l->stats = xcalloc(1, l->ops->stats_size);
	if (qcore_params_defaults(l->ops, l->params, err, sizeof(err)))
		die("%s: %s", l->name, err);
	for (i = 0; i < nparams; i++) {
		char *eq = strchr(params[i], '=');

		if (!eq || eq == params[i])
			die("%s: expected NAME=VALUE, got '%s'", l->name, params[i]);
		*eq = '\0';
		if (qcore_params_set(l->ops, l->params, params[i], eq + 1, err, sizeof(err)))
			die("%s: %s", l->name, err);
		*eq = '=';
	}
	if (l->ops->check_params(l->params, err, sizeof(err)))
		die("%s: %s", l->name, err);
	l->nbands = l->ops->nbands(l->params);
	if (!l->nbands || l->nbands > QCORE_MAX_BANDS)
		die("%s: %s reports %u bands", l->name, disc, l->nbands);
	l->ops->reset(l->params, l->vars);
	qcore_rng_seed(&l->rng, seed);
	dist_init(&l->lateness);
	dist_init(&l->spacing_err);
	dist_init(&l->added_delay);
}

static void load_flowmap(const char *path)
{
	FILE *f = fopen(path, "r");
	char addr[64];
	int id;

	if (!f)
		die("cannot read flow map %s: %s", path, strerror(errno));
	while (fscanf(f, "%63s %d", addr, &id) == 2) {
		struct in_addr a;

		if (g_nflowmap >= MAX_FLOWMAP)
			die("%s: more than %d entries", path, MAX_FLOWMAP);
		if (inet_pton(AF_INET, addr, &a) != 1 || id < 0)
			die("%s: bad entry '%s %d'", path, addr, id);
		g_flowmap[g_nflowmap].addr = a.s_addr;
		g_flowmap[g_nflowmap].flow_id = id;
		g_nflowmap++;
	}
	fclose(f);
}

static void write_sample(FILE *q, const struct link *l, u64 t)
{
	char ts[32];
	u32 b;

	if (!q)
		return;
	fmt_time(ts, sizeof(ts), t);
	for (b = 0; b < l->nbands; b++)
		fprintf(q, "%s,%u,%u,%" U64F ",%" U64F ",%" U64F ",%" U64F ",NA\n", ts, b,
			l->band[b].n, l->band[b].bytes, l->cnt[b].enqueued, l->cnt[b].dequeued,
			l->cnt[b].dropped);
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

static void usage(FILE *out)
{
	fputs("usage: qlab-emu --if-a IFACE --if-b IFACE [options]\n"
	      "  forward link (A -> B), the bottleneck under test:\n"
	      "    --rate-bps N          link rate (required)\n"
	      "    --delay-ns N          propagation delay (default 0)\n"
	      "    --disc NAME           core discipline (default droptail)\n"
	      "    --param NAME=VALUE    discipline parameter (repeatable)\n"
	      "  reverse link (B -> A): --rev-rate-bps N (default: forward's),\n"
	      "    --rev-delay-ns N (default: forward's), --rev-disc NAME (default droptail),\n"
	      "    --rev-param NAME=VALUE (default limit_pkts=10000)\n"
	      "  --overhead-bytes N      added to the IP length for the transmission time (default 0)\n"
	      "  --seed N                seed of the core's generator (default 1)\n"
	      "  --epoch-ns T            CLOCK_REALTIME of trace time 0 (default: start)\n"
	      "  --flowmap FILE          lines 'IPV4-SOURCE FLOW-ID' for packets.csv\n"
	      "  --queues FILE           queue samples (docs/traces.md queues.csv)\n"
	      "  --sample-ns N           queue sample interval (default 100000000)\n"
	      "  --packets FILE          per-packet events (packets.csv)\n"
	      "  --summary FILE          JSON counters and fidelity statistics at exit\n"
	      "  --ready FILE            created once both sockets are open\n"
	      "  --spin-ns N             spin this long before a departure (default 50000)\n"
	      "  --send-give-up-ns N     retry a refused send this long (default 100000000)\n"
	      "  --rt-priority N         run SCHED_FIFO at priority N (1..99; default 0: off)\n"
	      "  --list                  the core's disciplines\n", out);
}

enum {
	OPT_IF_A = 256, OPT_IF_B, OPT_RATE, OPT_DELAY, OPT_DISC, OPT_PARAM, OPT_REV_RATE,
	OPT_REV_DELAY, OPT_REV_DISC, OPT_REV_PARAM, OPT_OVERHEAD, OPT_SEED, OPT_EPOCH,
	OPT_FLOWMAP, OPT_QUEUES, OPT_SAMPLE, OPT_PACKETS, OPT_SUMMARY, OPT_READY, OPT_SPIN,
	OPT_GIVEUP, OPT_RT, OPT_LIST, OPT_HELP,
};

static u64 parse_u64_opt(const char *name, const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || !*s || *end || *s == '-')
		die("--%s: expected a non-negative integer, got '%s'", name, s);
	return v;
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
		{ "epoch-ns", 1, 0, OPT_EPOCH }, { "flowmap", 1, 0, OPT_FLOWMAP },
		{ "queues", 1, 0, OPT_QUEUES }, { "sample-ns", 1, 0, OPT_SAMPLE },
		{ "packets", 1, 0, OPT_PACKETS }, { "summary", 1, 0, OPT_SUMMARY },
		{ "ready", 1, 0, OPT_READY }, { "spin-ns", 1, 0, OPT_SPIN },
		{ "send-give-up-ns", 1, 0, OPT_GIVEUP }, { "rt-priority", 1, 0, OPT_RT },
		{ "list", 0, 0, OPT_LIST },
		{ "help", 0, 0, OPT_HELP }, { 0, 0, 0, 0 },
	};
	const char *if_a = NULL, *if_b = NULL, *disc = "droptail", *rev_disc = "droptail";
	const char *queues_path = NULL, *packets_path = NULL, *summary_path = NULL;
	const char *ready_path = NULL;
	char *params[64], *rev_params[64], rev_default[] = "limit_pkts=10000";
	int nparams = 0, nrev = 0, c, ifa, ifb, have_rev_rate = 0, have_rev_delay = 0;
	u64 rt_priority = 0;
	u64 seed = 1, sample_ns = 100000000ULL, spin_ns = DEFAULT_SPIN_NS, give_up_ns = 100000000ULL;
	u64 next_sample, start_ns;
	struct link fwd, rev;
	struct link *links[2] = { &fwd, &rev };
	FILE *queues = NULL;
	int tfd, ep, i;
	struct epoll_event ev;
	struct sigaction sa;

	memset(&fwd, 0, sizeof(fwd));
	memset(&rev, 0, sizeof(rev));
	fwd.name = "forward";
	rev.name = "reverse";
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case OPT_IF_A: if_a = optarg; break;
		case OPT_IF_B: if_b = optarg; break;
		case OPT_RATE: fwd.rate_bps = parse_u64_opt("rate-bps", optarg); break;
		case OPT_DELAY: fwd.delay_ns = parse_u64_opt("delay-ns", optarg); break;
		case OPT_DISC: disc = optarg; break;
		case OPT_PARAM:
			if (nparams == 64)
				die("too many --param");
			params[nparams++] = optarg;
			break;
		case OPT_REV_RATE:
			rev.rate_bps = parse_u64_opt("rev-rate-bps", optarg);
			have_rev_rate = 1;
			break;
		case OPT_REV_DELAY:
			rev.delay_ns = parse_u64_opt("rev-delay-ns", optarg);
			have_rev_delay = 1;
			break;
		case OPT_REV_DISC: rev_disc = optarg; break;
		case OPT_REV_PARAM:
			if (nrev == 64)
				die("too many --rev-param");
			rev_params[nrev++] = optarg;
			break;
		case OPT_OVERHEAD:
			fwd.overhead_bytes = rev.overhead_bytes =
				(u32)parse_u64_opt("overhead-bytes", optarg);
			break;
		case OPT_SEED: seed = parse_u64_opt("seed", optarg); break;
		case OPT_EPOCH: g_epoch_ns = parse_u64_opt("epoch-ns", optarg); break;
		case OPT_FLOWMAP: load_flowmap(optarg); break;
		case OPT_QUEUES: queues_path = optarg; break;
		case OPT_SAMPLE: sample_ns = parse_u64_opt("sample-ns", optarg); break;
		case OPT_PACKETS: packets_path = optarg; break;
		case OPT_SUMMARY: summary_path = optarg; break;
		case OPT_READY: ready_path = optarg; break;
		case OPT_SPIN: spin_ns = parse_u64_opt("spin-ns", optarg); break;
		case OPT_GIVEUP: give_up_ns = parse_u64_opt("send-give-up-ns", optarg); break;
		case OPT_RT: rt_priority = parse_u64_opt("rt-priority", optarg); break;
		case OPT_LIST:
			for (i = 0; qcore_disciplines[i]; i++)
				printf("%s\n", qcore_disciplines[i]->name);
			return 0;
		case OPT_HELP: usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || !if_a || !if_b || !fwd.rate_bps) {
		usage(stderr);
		return 2;
	}
	if (!sample_ns)
		die("--sample-ns must be positive");
	if (!have_rev_rate)
		rev.rate_bps = fwd.rate_bps;
	if (!have_rev_delay)
		rev.delay_ns = fwd.delay_ns;
	if (!rev.rate_bps)
		die("--rev-rate-bps must be positive");
	if (!nrev && !strcmp(rev_disc, "droptail"))
		rev_params[nrev++] = rev_default;
	setup_disc(&fwd, disc, params, nparams, seed);
	setup_disc(&rev, rev_disc, rev_params, nrev, seed + 1);

	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (rt_priority) {
		/* The hosts and applications share 2 cores with the emulator: a
		 * real-time priority keeps their load from delaying departures.
		 * The loop sleeps between events and spins at most --spin-ns. */
		struct sched_param sp = { .sched_priority = (int)rt_priority };

		if (rt_priority > 99)
			die("--rt-priority must be 1..99");
		if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
			die("SCHED_FIFO priority %d: %s", (int)rt_priority, strerror(errno));
		mlockall(MCL_CURRENT | MCL_FUTURE);
	}
	fwd.in_fd = open_socket(if_a, &ifa);
	rev.in_fd = open_socket(if_b, &ifb);
	fwd.out_fd = rev.in_fd;
	rev.out_fd = fwd.in_fd;
	fwd.out_ifindex = ifb;
	rev.out_ifindex = ifa;

	if (queues_path) {
		queues = fopen(queues_path, "w");
		if (!queues)
			die("cannot write %s: %s", queues_path, strerror(errno));
		setvbuf(queues, NULL, _IOFBF, 1 << 16);
		fputs("time_s,band,backlog_pkts,backlog_bytes,enqueued_pkts,dequeued_pkts,"
		      "dropped_pkts,drop_prob\n", queues);
	}
	if (packets_path) {
		fwd.packets = fopen(packets_path, "w");
		if (!fwd.packets)
			die("cannot write %s: %s", packets_path, strerror(errno));
		setvbuf(fwd.packets, NULL, _IOFBF, 1 << 20);
		fputs("seq,time_s,event,band,len_bytes,flow_id,sojourn_s,reason\n", fwd.packets);
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	tfd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (tfd < 0 || ep < 0)
		die("timerfd/epoll: %s", strerror(errno));
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.fd = tfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
	ev.data.fd = fwd.in_fd;
	epoll_ctl(ep, EPOLL_CTL_ADD, fwd.in_fd, &ev);
	ev.data.fd = rev.in_fd;
	epoll_ctl(ep, EPOLL_CTL_ADD, rev.in_fd, &ev);

	start_ns = now_ns();
	if (!g_epoch_ns)
		g_epoch_ns = start_ns;
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
		u64 now, wake;
		struct epoll_event evs[4];

		drain(&fwd);
		drain(&rev);
		now = now_ns();
		while (next_sample <= now) {
			advance(&fwd, next_sample);
			advance(&rev, next_sample);
			if (next_sample >= g_epoch_ns)
				write_sample(queues, &fwd, next_sample);
			next_sample += sample_ns;
		}
		advance(&fwd, now);
		advance(&rev, now);
		send_due(&fwd, give_up_ns);
		send_due(&rev, give_up_ns);

		wake = next_sample;
		for (i = 0; i < 2; i++) {
			u64 w = next_wake(links[i]);

			if (links[i]->retry_since_ns)
				w = now + 20000;	/* ENOBUFS: try again shortly */
			if (w < wake)
				wake = w;
		}
		now = now_ns();
		if (wake <= now)
			continue;
		if (wake - now > spin_ns) {
			struct itimerspec its;
			u64 at = wake - spin_ns;

			memset(&its, 0, sizeof(its));
			its.it_value.tv_sec = (time_t)(at / 1000000000ULL);
			its.it_value.tv_nsec = (long)(at % 1000000000ULL);
			timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
			if (epoll_wait(ep, evs, 4, -1) > 0) {
				u64 junk;

				if (read(tfd, &junk, sizeof(junk)) < 0 && errno != EAGAIN)
					die("timerfd: %s", strerror(errno));
			}
			continue;
		}
		/* The last few microseconds: spin, but notice arrivals. */
		while (now_ns() < wake && !g_stop) {
			struct pollfd pf[2] = { { fwd.in_fd, POLLIN, 0 }, { rev.in_fd, POLLIN, 0 } };

			if (poll(pf, 2, 0) > 0)
				break;
		}
	}

	/* Shutdown: the state now, counters flushed. */
	{
		u64 now = now_ns();

		drain(&fwd);
		drain(&rev);
		advance(&fwd, now);
		advance(&rev, now);
		if (queues && now >= g_epoch_ns)
			write_sample(queues, &fwd, now);
		fwd.kernel_drops += kernel_drops(fwd.in_fd);
		rev.kernel_drops += kernel_drops(rev.in_fd);
	}
	if (queues && fclose(queues))
		die("writing %s: %s", queues_path, strerror(errno));
	if (fwd.packets && fclose(fwd.packets))
		die("writing %s: %s", packets_path, strerror(errno));
	if (summary_path) {
		FILE *f = fopen(summary_path, "w");

		if (!f)
			die("cannot write %s: %s", summary_path, strerror(errno));
		fprintf(f, "{\"version\": \"%s\", \"compiler\": \"%s\", \"epoch_ns\": %" U64F
			", \"start_ns\": %" U64F ", \"stop_ns\": %" U64F ", \"spin_ns\": %" U64F ", \"rt_priority\": %" U64F ",\n",
			QLAB_EMU_VERSION, __VERSION__, g_epoch_ns, start_ns, now_ns(), spin_ns, rt_priority);
		link_json(f, &fwd);
		fputs(",\n", f);
		link_json(f, &rev);
		fputs("}\n", f);
		if (fclose(f))
			die("writing %s: %s", summary_path, strerror(errno));
	}
	return 0;
}
