// SPDX-License-Identifier: GPL-2.0
/*
 * qlab_sch.c - the Linux adapter of the qlab discipline core: one generic
 * Qdisc implementation (enqueue/dequeue/peek/init/change/reset/destroy/
 * dump/dump_stats) that every qlab qdisc module instantiates (qlab_sch.h):
 * the generic `qlab` (any discipline of the core's registry) and the
 * dedicated ones (ncq, cqaqm, srd, rbwfq).
 *
 * What the adapter does, and only that (the core decides everything else,
 * through the helpers every backend shares, qcore.h):
 *   - classify: len = IP length (skb->len without the link-layer header),
 *     cls/prec/ECT from the ToS byte or IPv6 traffic class
 *     (qcore_pkt_set_tos), flow = qcore_flow_hash() of the 5-tuple (only
 *     for a discipline that reads it), PURE_ACK for TCP segments without
 *     payload;
 *   - keep one FIFO per band and show the core a view of them;
 *   - act on the core's decisions: queue, mark CE (a mark on a packet that
 *     is not ECN-capable is the core's drop, qcore_mark_fallback), drop,
 *     serve, head-drop;
 *   - netlink <-> typed values (struct qcore_param_value), one per
 *     parameter of the core's table; qcore_configure() turns them into the
 *     core's params (defaults, ranges, check_params, band count) and its
 *     message comes back through extack.
 * No floating point; nothing in the packet path sleeps or allocates.
 *
 * change: the new parameters take effect as a fresh start: the core's
 * state is reset for them and the packets queued at that moment are
 * dropped (counted as `purged`).  The core has no notion of re-sizing live
 * state (e.g. DRR's active list, S-RD's sizes), so anything else would be
 * adapter logic.  The core's statistics are kept unless the discipline
 * changes; the adapter's per-band counters always are.
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/random.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/timekeeping.h>
#include <net/dsfield.h>
#include <net/inet_ecn.h>
#include <net/ip.h>

#include "qlab_sch.h"

/*
 * extack keeps a pointer to its message, and the message is read after
 * rtnl is released, so check_params() texts go to a small ring of static
 * buffers (init/change run under rtnl; the ring makes an overwrite before
 * the ack is sent practically impossible, and every slot stays
 * NUL-terminated whatever happens).
 */
#define QLAB_ERR_SLOTS 16
static char qlab_err_ring[QLAB_ERR_SLOTS][QCORE_ERRLEN];
static atomic_t qlab_err_next = ATOMIC_INIT(0);

static __printf(2, 3) void qlab_err(struct netlink_ext_ack *extack,
				    const char *fmt, ...)
{
	char *buf = qlab_err_ring[(u32)atomic_inc_return(&qlab_err_next) % QLAB_ERR_SLOTS];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, QCORE_ERRLEN, fmt, ap);
	va_end(ap);
	buf[QCORE_ERRLEN - 1] = '\0';
	if (extack)
		extack->_msg = buf;
}

static const struct qlab_kind *qlab_kind_of(const struct Qdisc *sch)
{
	return container_of(sch->ops, struct qlab_kind, qdisc_ops);
}

/* ---- packet path ------------------------------------------------------ */

/*
 * The core's view of the bands (q->views) is kept current as packets come
 * and go: a packet queued into an empty band becomes its head, a head
 * taken out makes the next packet the head.  The views past nbands stay
 * zero (cleared whenever the configuration changes or the queue is
 * purged), so the packet path never rebuilds the array.
 */
static void qlab_view_push(struct qcore_band_view *v, u32 len, u64 now_ns)
{
	if (!v->backlog_pkts++) {
		v->head_len = len;
		v->head_arrival_ns = now_ns;
	}
	v->backlog_bytes += len;
}

static void qlab_view_pop(struct qcore_band_view *v, u32 len,
			  const struct sk_buff *next_head)
{
	v->backlog_pkts--;
	v->backlog_bytes -= len;
	if (next_head) {
		v->head_len = qlab_skb_cb(next_head)->len;
		v->head_arrival_ns = qlab_skb_cb(next_head)->arrival_ns;
	} else {
		v->head_len = 0;
		v->head_arrival_ns = 0;
	}
}

/* TCP without payload, ACK set, no SYN/FIN/RST (as the ns-3 adapter). */
static bool qlab_pure_ack(struct sk_buff *skb, unsigned int l4off, u32 ip_len)
{
	const struct tcphdr *th;
	struct tcphdr _th;

	if (skb_is_gso(skb))
		return false;
	th = skb_header_pointer(skb, l4off, sizeof(_th), &_th);
	if (!th)
		return false;
	return ip_len == l4off - skb_network_offset(skb) + th->doff * 4U &&
	       th->ack && !th->syn && !th->fin && !th->rst;
}

/*
 * The ports of the flow hash: TCP's and UDP's, host byte order (sport in
 * the high half); 0 for any other protocol (qcore_flow_hash()'s contract).
 */
static __always_inline u32 qlab_ports(struct sk_buff *skb, unsigned int l4off,
				      u8 proto)
{
	const __be16 *ports;
	__be16 _ports[2];

	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP)
		return 0;
	ports = skb_header_pointer(skb, l4off, sizeof(_ports), _ports);
	if (!ports)
		return 0;
	return (u32)ntohs(ports[0]) << 16 | ntohs(ports[1]);
}

/*
 * An IPv6 address as the 32 bits qcore_flow_hash() takes: the XOR of its
 * four words, host byte order (qlab_sched.h).
 */
static __always_inline u32 qlab_fold_in6(const struct in6_addr *a)
{
	return ntohl(a->s6_addr32[0] ^ a->s6_addr32[1] ^ a->s6_addr32[2] ^
		     a->s6_addr32[3]);
}

/*
 * The classification; flow_hash is 0 unless `hash` (the core ignores it:
 * QCORE_IGNORES_FLOW_HASH).  Any packet, through skb_header_pointer(): out
 * of line, since its header copies on the stack cost the caller a stack
 * canary and their zeroing (qlab_classify_inl() is the common case).
 */
static noinline void qlab_classify_any(struct sk_buff *skb, struct qcore_pkt *pkt,
				       u64 now_ns, bool hash)
{
	int nhoff = skb_network_offset(skb);
	unsigned int l4off;
	u32 ports;

	memset(pkt, 0, sizeof(*pkt));
	pkt->now_ns = now_ns;
	pkt->len = nhoff > 0 && nhoff < skb->len ? skb->len - nhoff : skb->len;

	/* Anything else (non-IP) has cls = prec = 0, no flags and flow 0. */
	switch (skb_protocol(skb, true)) {
	case htons(ETH_P_IP): {
		const struct iphdr *iph;
		struct iphdr _iph;

		iph = skb_header_pointer(skb, nhoff, sizeof(_iph), &_iph);
		if (!iph)
			break;
		qcore_pkt_set_tos(pkt, iph->tos);
		if (hash) {
			/* Non-first fragments carry no ports. */
			ports = iph->ihl >= 5 && !(iph->frag_off & htons(IP_OFFSET)) ?
				qlab_ports(skb, nhoff + iph->ihl * 4, iph->protocol) : 0;
			pkt->flow_hash = qcore_flow_hash(ntohl(iph->saddr), ntohl(iph->daddr),
							 ports >> 16, (u16)ports,
							 iph->protocol);
		}
		if (iph->protocol == IPPROTO_TCP && iph->ihl >= 5 &&
		    !(iph->frag_off & htons(IP_MF | IP_OFFSET)) &&
		    qlab_pure_ack(skb, nhoff + iph->ihl * 4, pkt->len))
			pkt->flags |= QCORE_PKT_PURE_ACK;
		break;
	}
	case htons(ETH_P_IPV6): {
		const struct ipv6hdr *ip6h;
		struct ipv6hdr _ip6h;

		ip6h = skb_header_pointer(skb, nhoff, sizeof(_ip6h), &_ip6h);
		if (!ip6h)
			break;
		qcore_pkt_set_tos(pkt, ipv6_get_dsfield(ip6h));
		l4off = nhoff + sizeof(*ip6h);
		/* The first next-header only: no extension header is walked. */
		if (hash) {
			ports = qlab_ports(skb, l4off, ip6h->nexthdr);
			pkt->flow_hash = qcore_flow_hash(qlab_fold_in6(&ip6h->saddr),
							 qlab_fold_in6(&ip6h->daddr),
							 ports >> 16, (u16)ports,
							 ip6h->nexthdr);
		}
		if (ip6h->nexthdr == IPPROTO_TCP &&
		    qlab_pure_ack(skb, l4off, pkt->len))
			pkt->flags |= QCORE_PKT_PURE_ACK;
		break;
	}
	default:
		break;
	}
}

/*
 * The common case inlined into the packet path: IPv4 without options
 * whose IP header and the first 20 bytes after it (the TCP header, the
 * ports) are in the linear data, read in place; anything else goes to
 * qlab_classify_any().  Both give the same pkt for the same packet.
 */
static __always_inline void qlab_classify_inl(struct sk_buff *skb,
					      struct qcore_pkt *pkt,
					      u64 now_ns, bool hash)
{
	int nhoff = skb_network_offset(skb);
	const struct iphdr *iph = (const struct iphdr *)(skb->data + nhoff);
	const struct tcphdr *th = (const struct tcphdr *)(iph + 1);
	u8 proto;

	if (unlikely(skb->protocol != htons(ETH_P_IP) || nhoff < 0 ||
		     skb_headlen(skb) < nhoff + sizeof(*iph) + sizeof(*th) ||
		     iph->ihl != 5)) {
		qlab_classify_any(skb, pkt, now_ns, hash);
		return;
	}
	memset(pkt, 0, sizeof(*pkt));
	pkt->now_ns = now_ns;
	/* nhoff < skb->len here: the IP length, as qlab_classify_any() finds it. */
	pkt->len = skb->len - nhoff;
	qcore_pkt_set_tos(pkt, iph->tos);
	proto = iph->protocol;
	if (hash) {
		const __be16 *ports = (const __be16 *)th;
		u32 p = (proto == IPPROTO_TCP || proto == IPPROTO_UDP) &&
			!(iph->frag_off & htons(IP_OFFSET)) ?
			(u32)ntohs(ports[0]) << 16 | ntohs(ports[1]) : 0;

		pkt->flow_hash = qcore_flow_hash(ntohl(iph->saddr), ntohl(iph->daddr),
						 p >> 16, (u16)p, proto);
	}
	if (proto == IPPROTO_TCP && !(iph->frag_off & htons(IP_MF | IP_OFFSET)) &&
	    !skb_is_gso(skb) && pkt->len == sizeof(*iph) + th->doff * 4U &&
	    th->ack && !th->syn && !th->fin && !th->rst)
		pkt->flags |= QCORE_PKT_PURE_ACK;
}

void qlab_classify(struct sk_buff *skb, struct qcore_pkt *pkt, u64 now_ns)
{
	qlab_classify_inl(skb, pkt, now_ns, true);
}
EXPORT_SYMBOL_GPL(qlab_classify);

void qlab_classify_general(struct sk_buff *skb, struct qcore_pkt *pkt, u64 now_ns)
{
	qlab_classify_any(skb, pkt, now_ns, true);
}
EXPORT_SYMBOL_GPL(qlab_classify_general);

/* Queue skb in band b (the core's QUEUE or MARK). */
static __always_inline int qlab_queue(struct qlab_sch *q, struct Qdisc *sch,
				      struct sk_buff *skb, const struct qcore_pkt *pkt,
				      u32 b)
{
	struct qlab_skb_cb *cb;

	qdisc_cb_private_validate(skb, sizeof(struct qlab_skb_cb));
	cb = qlab_skb_cb(skb);
	cb->arrival_ns = pkt->now_ns;
	cb->len = pkt->len;
	__qdisc_enqueue_tail(skb, &q->band[b].q);
	qlab_view_push(&q->views[b], pkt->len, pkt->now_ns);
	sch->q.qlen++;
	qdisc_qstats_backlog_inc(sch, skb);
	return NET_XMIT_SUCCESS;
}

/* Any decision but a plain QUEUE into a valid band: a mark, a drop, a bad answer. */
static noinline int qlab_enqueue_other(struct sk_buff *skb, struct Qdisc *sch,
				       struct sk_buff **to_free,
				       const struct qcore_pkt *pkt,
				       struct qcore_decision d)
{
	struct qlab_sch *q = qdisc_priv(sch);
	struct qlab_band *band;

	if (unlikely(d.band >= q->nbands || d.reason >= QCORE_REASON__COUNT)) {
		WARN_ONCE(1, "qlab %s: core chose band %u reason %u of %u bands\n",
			  q->ops->name, d.band, d.reason, q->nbands);
		return qdisc_drop(skb, sch, to_free);
	}
	band = &q->band[d.band];
	band->arrivals++;
	if (d.verdict == QCORE_MARK) {
		/* Not ECN-capable: the AQM's mark becomes its drop (every backend's rule). */
		d = qcore_mark_fallback(d, pkt);
		if (d.verdict == QCORE_MARK) {
			if (likely(INET_ECN_set_ce(skb))) {
				band->marked++;
			} else {
				/* ECT, but the IP header is not in the linear data to mark. */
				d.verdict = QCORE_DROP;
				d.reason = QCORE_REASON_AQM;
			}
		}
	}
	if (d.verdict != QCORE_QUEUE && d.verdict != QCORE_MARK) {
		band->drops[d.reason]++;
		return qdisc_drop(skb, sch, to_free);
	}
	return qlab_queue(q, sch, skb, pkt, d.band);
}

/*
 * The core's decision, acted on; the common answer (QUEUE into a valid
 * band) inline, everything else in qlab_enqueue_other().
 */
static __always_inline int qlab_enqueue_inl(struct sk_buff *skb, struct Qdisc *sch,
					    struct sk_buff **to_free,
					    const struct qcore_pkt *pkt)
{
	struct qlab_sch *q = qdisc_priv(sch);
	struct qcore_decision d;

	d = q->ops->enqueue(q->params, q->vars, q->stats, pkt, q->views, &q->rng);
	if (likely(d.verdict == QCORE_QUEUE && d.band < q->nbands &&
		   d.reason < QCORE_REASON__COUNT)) {
		q->band[d.band].arrivals++;
		return qlab_queue(q, sch, skb, pkt, d.band);
	}
	return qlab_enqueue_other(skb, sch, to_free, pkt, d);
}

int qlab_enqueue_pkt(struct sk_buff *skb, struct Qdisc *sch,
		     struct sk_buff **to_free, const struct qcore_pkt *pkt)
{
	return qlab_enqueue_inl(skb, sch, to_free, pkt);
}
EXPORT_SYMBOL_GPL(qlab_enqueue_pkt);

/*
 * The clock and the flow hash only when the core reads them
 * (qcore_ignores() of the configuration): NCQ and CQ-AQM read neither, so
 * their packet path makes no clock read and computes no hash (and NCQ's
 * no-op dequeued() is not called, qlab_take_head()); S-RD with both flow
 * counts fixed reads no arrival time and no hash, so only its dequeue
 * reads the clock.  The packet's facts go to q->pkt, not the stack (the
 * root lock serialises enqueues): a local whose address the core gets
 * would cost a stack canary and its zeroing on every packet.
 */
static int qlab_enqueue(struct sk_buff *skb, struct Qdisc *sch,
			struct sk_buff **to_free)
{
	struct qlab_sch *q = qdisc_priv(sch);
	u8 ignores = q->ignores;

	qlab_classify_inl(skb, &q->pkt,
			  ignores & (QCORE_IGNORES_TIME | QCORE_IGNORES_ARRIVAL_TIME) ?
			  0 : ktime_get_ns(),
			  !(ignores & QCORE_IGNORES_FLOW_HASH));
	return qlab_enqueue_inl(skb, sch, to_free, &q->pkt);
}

/* Take the head of band b and report it to the core (unless it ignores that). */
static __always_inline struct sk_buff *qlab_take_head(struct qlab_sch *q,
						     struct Qdisc *sch,
						     u32 b, u64 now_ns)
{
	struct qlab_band *band = &q->band[b];
	struct sk_buff *skb = __qdisc_dequeue_head(&band->q);
	u32 len = qlab_skb_cb(skb)->len;

	qlab_view_pop(&q->views[b], len, band->q.head);
	sch->q.qlen--;
	qdisc_qstats_backlog_dec(sch, skb);
	if (!(q->ignores & QCORE_IGNORES_DEQUEUED))
		q->ops->dequeued(q->params, q->vars, q->stats, b, len, now_ns, q->views);
	return skb;
}

static noinline void qlab_warn_deq(const struct qlab_sch *q, struct qcore_deq d)
{
	WARN_ONCE(1, "qlab %s: core chose action %u band %u reason %u (empty, absent or unknown)\n",
		  q->ops->name, d.action, d.band, d.reason);
}

/*
 * One dequeue: head drops (RD) as the core asks, then a packet or NULL.
 * Every head drop removes a packet, so qlen + 1 rounds bound the loop.
 * Head drops are reported to the parents with qdisc_tree_reduce_backlog()
 * only while packets remain (as sch_codel: HTB cannot take it at qlen 0).
 */
static __always_inline struct sk_buff *qlab_dequeue_inl(struct Qdisc *sch, u64 now_ns)
{
	struct qlab_sch *q = qdisc_priv(sch);
	struct sk_buff *skb = NULL;
	u32 round, rounds = sch->q.qlen + 1;
	struct qcore_deq d;

	for (round = 0; round < rounds; round++) {
		d = q->ops->dequeue(q->params, q->vars, q->views, now_ns);
		if (likely(d.action == QCORE_DEQ_SERVE)) {
			if (unlikely(d.band >= q->nbands || !q->band[d.band].q.qlen)) {
				qlab_warn_deq(q, d);
				break;
			}
			skb = qlab_take_head(q, sch, d.band, now_ns);
			q->band[d.band].sent++;
			qdisc_bstats_update(sch, skb);
			break;
		}
		if (d.action == QCORE_DEQ_EMPTY)
			break;
		if (unlikely(d.action != QCORE_DEQ_DROP_HEAD ||
			     d.band >= q->nbands || !q->band[d.band].q.qlen ||
			     d.reason == QCORE_REASON_NONE ||
			     d.reason >= QCORE_REASON__COUNT)) {
			qlab_warn_deq(q, d);
			break;
		}
		skb = qlab_take_head(q, sch, d.band, now_ns);
		q->band[d.band].drops[d.reason]++;
		q->pending_drops++;
		q->pending_drop_len += qdisc_pkt_len(skb);
		qdisc_qstats_drop(sch);
		kfree_skb(skb);
		skb = NULL;
	}
	if (q->pending_drops && sch->q.qlen) {
		qdisc_tree_reduce_backlog(sch, q->pending_drops, q->pending_drop_len);
		q->pending_drops = 0;
		q->pending_drop_len = 0;
	}
	return skb;
}

struct sk_buff *qlab_dequeue_at(struct Qdisc *sch, u64 now_ns)
{
	return qlab_dequeue_inl(sch, now_ns);
}
EXPORT_SYMBOL_GPL(qlab_dequeue_at);

static struct sk_buff *qlab_dequeue(struct Qdisc *sch)
{
	struct qlab_sch *q = qdisc_priv(sch);

	return qlab_dequeue_inl(sch, q->ignores & QCORE_IGNORES_TIME ? 0 : ktime_get_ns());
}

/* ---- control path ----------------------------------------------------- */

/*
 * Drop every queued packet; count: as drops (purged), told to the parents
 * with qdisc_tree_reduce_backlog() once our qlen is final.
 */
static void qlab_purge(struct Qdisc *sch, bool count)
{
	struct qlab_sch *q = qdisc_priv(sch);
	unsigned int n = 0, bytes = 0;
	u32 b;

	for (b = 0; b < QCORE_MAX_BANDS; b++) {
		struct qlab_band *band = &q->band[b];
		struct sk_buff *skb;

		while ((skb = __qdisc_dequeue_head(&band->q))) {
			n++;
			bytes += qdisc_pkt_len(skb);
			/* Not to 0 at once: a packet peeked by a parent counts too. */
			sch->q.qlen--;
			qdisc_qstats_backlog_dec(sch, skb);
			if (count) {
				band->purged++;
				qdisc_qstats_drop(sch);
			}
			rtnl_kfree_skbs(skb, skb);
		}
	}
	memset(q->views, 0, sizeof(q->views));
	if (count) {
		/* Head drops not yet reported to the parents go with them. */
		n += q->pending_drops;
		bytes += q->pending_drop_len;
		q->pending_drops = 0;
		q->pending_drop_len = 0;
		if (n)
			qdisc_tree_reduce_backlog(sch, n, bytes);
	}
}

static void qlab_reset(struct Qdisc *sch)
{
	struct qlab_sch *q = qdisc_priv(sch);

	qlab_purge(sch, false);
	q->pending_drops = 0;
	q->pending_drop_len = 0;
	if (q->ops)
		q->ops->reset(q->params, q->vars);
}

/* The default of every parameter, from the core's table (as qcore_configure). */
static int qlab_values_default(const struct qcore_disc_ops *ops,
			       struct qcore_param_value *values, char *err)
{
	u32 i;

	for (i = 0; i < ops->nparams; i++) {
		memset(&values[i], 0, sizeof(values[i]));
		values[i].index = i;
		if (qcore_param_parse(&ops->params[i], ops->params[i].dflt, &values[i],
				      err, QCORE_ERRLEN))
			return -1;
	}
	return 0;
}

/*
 * Parameter i of ops from its attribute, typed by the table (qlab_sched.h);
 * the value's range is qcore_configure()'s to check.
 */
static int qlab_nla_value(const struct qcore_disc_ops *ops, u32 i,
			  const struct nlattr *a, struct qcore_param_value *v,
			  struct netlink_ext_ack *extack)
{
	const struct qcore_param_desc *d = &ops->params[i];
	int len = nla_len(a), want;

	memset(v, 0, sizeof(*v));
	v->index = i;
	switch (d->kind) {
	case QCORE_PARAM_U32:
	case QCORE_PARAM_PPM:
		want = sizeof(u32);
		break;
	case QCORE_PARAM_U64:
		want = sizeof(u64);
		break;
	case QCORE_PARAM_ENUM:
	case QCORE_PARAM_BOOL:
		want = sizeof(u8);
		break;
	case QCORE_PARAM_U32_LIST:
		if (len < 4 || len % 4 || len > QLAB_LIST_MAX_BYTES) {
			qlab_err(extack, "%s: %s: expected 1 to %d u32 values (%s), got %d bytes",
				 ops->name, d->name, QCORE_MAX_BANDS, d->unit, len);
			NL_SET_BAD_ATTR(extack, a);
			return -EINVAL;
		}
		memcpy(v->list, nla_data(a), len);
		return 0;
	default:
		want = -1;
		break;
	}
	if (len != want) {
		qlab_err(extack, "%s: %s: expected a %d-byte attribute (%s), got %d bytes",
			 ops->name, d->name, want, d->unit, len);
		NL_SET_BAD_ATTR(extack, a);
		return -EINVAL;
	}
	if (want == sizeof(u32))
		v->value = nla_get_u32(a);
	else if (want == sizeof(u64))
		v->value = nla_get_u64(a);
	else
		v->value = nla_get_u8(a);
	return 0;
}

/* A parameter's value as its attribute: what qlab_nla_value() reads back. */
static int qlab_nla_put_value(struct sk_buff *skb, u16 attr,
			      const struct qcore_param_desc *d,
			      const struct qcore_param_value *v, u16 pad)
{
	int n;

	switch (d->kind) {
	case QCORE_PARAM_U32:
	case QCORE_PARAM_PPM:
		return nla_put_u32(skb, attr, (u32)v->value);
	case QCORE_PARAM_U64:
		return nla_put_u64_64bit(skb, attr, v->value, pad);
	case QCORE_PARAM_ENUM:
	case QCORE_PARAM_BOOL:
		return nla_put_u8(skb, attr, (u8)v->value);
	case QCORE_PARAM_U32_LIST:
		/* Up to the last non-zero (used) slot, as it was given. */
		for (n = QCORE_MAX_BANDS; n > 1 && !v->list[n - 1]; n--)
			;
		return nla_put(skb, attr, n * sizeof(u32), v->list);
	}
	return -EINVAL;
}

/* What a change asks for, before the core has checked it. */
struct qlab_conf {
	const struct qlab_variant *variant;	/* dedicated qdiscs */
	const struct qcore_disc_ops *ops;
	struct qcore_param_value *values;	/* ops->nparams */
	u64 seed;
	bool have_seed;
};

/*
 * The values a change starts from: the running ones when the discipline
 * stays (options not named keep their values), else the table's defaults.
 */
static int qlab_conf_values(struct qlab_sch *q, struct qlab_conf *c, bool init,
			    char *err, struct netlink_ext_ack *extack)
{
	const struct qcore_disc_ops *ops = c->ops;

	c->values = kcalloc(max_t(u32, ops->nparams, 1), sizeof(*c->values), GFP_KERNEL);
	if (!c->values)
		return -ENOMEM;
	if (!init && ops == q->ops) {
		memcpy(c->values, q->values, ops->nparams * sizeof(*c->values));
		return 0;
	}
	if (qlab_values_default(ops, c->values, err)) {
		qlab_err(extack, "%s: a default of the core's table: %s", ops->name, err);
		return -EINVAL;
	}
	return 0;
}

/* The disciplines of the core's registry, "a|b|c", for messages. */
static void qlab_disc_names(char *buf, size_t len)
{
	size_t used = 0;
	u32 i;

	buf[0] = '\0';
	for (i = 0; qcore_disciplines[i] && used < len; i++)
		used += scnprintf(buf + used, len - used, "%s%s", i ? "|" : "",
				  qcore_disciplines[i]->name);
}

static const struct nla_policy qlab_generic_policy[TCA_QLAB_MAX + 1] = {
	[TCA_QLAB_DISC] = { .type = NLA_NUL_STRING, .len = QLAB_DISC_NAMSIZ - 1 },
	[TCA_QLAB_SEED] = { .type = NLA_U64 },
	[TCA_QLAB_PARAMS] = { .type = NLA_NESTED },
};

/*
 * The discipline a qlab qdisc starts with when it is given none (init
 * without options: qdisc_create_dflt, net.core.default_qdisc).
 */
#define QLAB_DEFAULT_DISC "droptail"

/* The generic qdisc's options (TCA_QLAB_*), qlab_sched.h. */
static int qlab_parse_generic(struct qlab_sch *q, struct nlattr *opt, bool init,
			      struct qlab_conf *c, char *err,
			      struct netlink_ext_ack *extack)
{
	struct nlattr *tb[TCA_QLAB_MAX + 1] = {};
	const struct nlattr *a;
	int ret, rem;

	if (opt) {
		ret = nla_parse_nested_deprecated(tb, TCA_QLAB_MAX, opt,
						  qlab_generic_policy, extack);
		if (ret < 0)
			return ret;
	}
	if (tb[TCA_QLAB_DISC]) {
		c->ops = qcore_find(nla_data(tb[TCA_QLAB_DISC]));
		if (!c->ops) {
			qlab_disc_names(err, QCORE_ERRLEN);
			qlab_err(extack, "qlab: unknown discipline '%s' (one of %s)",
				 (const char *)nla_data(tb[TCA_QLAB_DISC]), err);
			NL_SET_BAD_ATTR(extack, tb[TCA_QLAB_DISC]);
			return -EINVAL;
		}
	} else if (init) {
		c->ops = qcore_find(QLAB_DEFAULT_DISC) ?: qcore_disciplines[0];
	} else {
		c->ops = q->ops;
	}
	ret = qlab_conf_values(q, c, init, err, extack);
	if (ret)
		return ret;
	if (tb[TCA_QLAB_PARAMS]) {
		nla_for_each_nested(a, tb[TCA_QLAB_PARAMS], rem) {
			u32 type = nla_type(a);

			if (type == TCA_QLAB_PARAM_PAD)
				continue;
			if (type > c->ops->nparams) {
				qlab_err(extack, "%s: no parameter %u (it has %u: attribute i + 1 is parameter i)",
					 c->ops->name, type, c->ops->nparams);
				NL_SET_BAD_ATTR(extack, a);
				return -EINVAL;
			}
			ret = qlab_nla_value(c->ops, type - 1, a, &c->values[type - 1], extack);
			if (ret)
				return ret;
		}
		if (rem > 0) {
			qlab_err(extack, "%s: %d bytes of TCA_QLAB_PARAMS are no attribute",
				 c->ops->name, rem);
			NL_SET_BAD_ATTR(extack, tb[TCA_QLAB_PARAMS]);
			return -EINVAL;
		}
	}
	if (tb[TCA_QLAB_SEED]) {
		c->seed = nla_get_u64(tb[TCA_QLAB_SEED]);
		c->have_seed = true;
	}
	return 0;
}

/* A dedicated qdisc's options: its variant and its attributes (qlab_sched.h). */
static int qlab_parse_dedicated(struct Qdisc *sch, struct nlattr *opt, bool init,
				struct qlab_conf *c, char *err,
				struct netlink_ext_ack *extack)
{
	const struct qlab_kind *kind = qlab_kind_of(sch);
	struct qlab_sch *q = qdisc_priv(sch);
	const struct qlab_variant *v = init ? &kind->variants[0] : q->variant;
	struct nlattr **tb;
	u32 i;
	int ret;

	tb = kcalloc(kind->maxattr + 1, sizeof(*tb), GFP_KERNEL);
	if (!tb)
		return -ENOMEM;
	if (opt) {
		ret = nla_parse_nested_deprecated(tb, kind->maxattr, opt,
						  kind->policy, extack);
		if (ret < 0)
			goto out;
	}
	if (kind->attr_variant && tb[kind->attr_variant])
		v = &kind->variants[nla_get_u8(tb[kind->attr_variant])];

	/* Attributes of a variant not running are an error, not ignored. */
	for (i = 1; i <= kind->maxattr; i++) {
		if (tb[i] && (i < v->attr_base || i >= v->attr_base + v->nattrs) &&
		    i != kind->attr_seed && i != kind->attr_variant &&
		    i != kind->attr_pad) {
			qlab_err(extack, "attribute %u belongs to another %s than the %s in use (give the %s)",
				 i, kind->variant_name ?: "variant", v->name,
				 kind->variant_name ?: "variant");
			NL_SET_BAD_ATTR(extack, tb[i]);
			ret = -EINVAL;
			goto out;
		}
	}
	c->variant = v;
	c->ops = v->ops;
	/* A new variant starts from its defaults (srd and rd share a table). */
	ret = qlab_conf_values(q, c, init || v != q->variant, err, extack);
	if (ret)
		goto out;
	for (i = 0; i < v->nattrs; i++) {
		if (!tb[v->attr_base + i])
			continue;
		ret = qlab_nla_value(v->ops, i, tb[v->attr_base + i], &c->values[i], extack);
		if (ret)
			goto out;
	}
	if (tb[kind->attr_seed]) {
		c->seed = nla_get_u64(tb[kind->attr_seed]);
		c->have_seed = true;
	}
	ret = 0;
out:
	kfree(tb);
	return ret;
}

/*
 * Parse opt (NULL: defaults) for init or change, configure the core's
 * params with qcore_configure(), and only then apply them under the tree
 * lock.  A new discipline gets fresh state and statistics (allocated here,
 * outside the lock); the old ones are freed after.
 */
static int qlab_configure(struct Qdisc *sch, struct nlattr *opt, bool init,
			  struct netlink_ext_ack *extack)
{
	const struct qlab_kind *kind = qlab_kind_of(sch);
	struct qlab_sch *q = qdisc_priv(sch);
	struct qlab_conf c = {};
	void *params = NULL, *vars = NULL, *stats = NULL;
	bool fresh;
	char *err;
	u64 seed;
	u32 nbands;
	int ret;

	err = kzalloc(QCORE_ERRLEN, GFP_KERNEL);
	if (!err)
		return -ENOMEM;
	if (kind->variants)
		ret = qlab_parse_dedicated(sch, opt, init, &c, err, extack);
	else
		ret = qlab_parse_generic(q, opt, init, &c, err, extack);
	if (ret)
		goto out;

	ret = -ENOMEM;
	fresh = init || c.ops != q->ops;
	params = kzalloc(max_t(u32, c.ops->params_size, 1), GFP_KERNEL);
	if (fresh) {
		vars = kvzalloc(max_t(u32, c.ops->vars_size, 1), GFP_KERNEL);
		stats = kzalloc(max_t(u32, c.ops->stats_size, 1), GFP_KERNEL);
	}
	if (!params || (fresh && (!vars || !stats)))
		goto out;
	if (qcore_configure(c.ops, params, c.values, c.ops->nparams, &nbands,
			    err, QCORE_ERRLEN)) {
		qlab_err(extack, "%s: %s", c.ops->name, err);
		ret = -EINVAL;
		goto out;
	}
	if (c.have_seed)
		seed = c.seed;
	else
		seed = init ? get_random_u64() : q->seed;

	sch_tree_lock(sch);
	if (!init)
		qlab_purge(sch, true);
	swap(q->params, params);
	swap(q->values, c.values);
	if (fresh) {
		swap(q->vars, vars);
		swap(q->stats, stats);
	}
	memset(q->views, 0, sizeof(q->views));
	q->variant = c.variant;
	q->ops = c.ops;
	q->ignores = qcore_ignores(c.ops, q->params);
	q->nbands = nbands;
	q->seed = seed;
	qcore_rng_seed(&q->rng, seed);
	q->ops->reset(q->params, q->vars);
	sch_tree_unlock(sch);
	ret = 0;
out:
	/* What was replaced, or what was not used. */
	kfree(params);
	kvfree(vars);
	kfree(stats);
	kfree(c.values);
	kfree(err);
	return ret;
}

static int qlab_init(struct Qdisc *sch, struct nlattr *opt,
		     struct netlink_ext_ack *extack)
{
	struct qlab_sch *q = qdisc_priv(sch);

	/* The band FIFOs start empty: zeroed with q (their lock is unused). */
	memset(q, 0, sizeof(*q));
	q->kind = qlab_kind_of(sch);
	return qlab_configure(sch, opt, true, extack);	/* on error destroy() frees */
}

static int qlab_change(struct Qdisc *sch, struct nlattr *opt,
		       struct netlink_ext_ack *extack)
{
	return qlab_configure(sch, opt, false, extack);
}

static void qlab_destroy(struct Qdisc *sch)
{
	struct qlab_sch *q = qdisc_priv(sch);

	qlab_purge(sch, false);
	kfree(q->params);
	kvfree(q->vars);
	kfree(q->stats);
	kfree(q->values);
	q->params = q->vars = q->stats = NULL;
	q->values = NULL;
	q->ops = NULL;
}

/* Every parameter of the running discipline, as change() takes it. */
static int qlab_dump(struct Qdisc *sch, struct sk_buff *skb)
{
	const struct qlab_kind *kind = qlab_kind_of(sch);
	struct qlab_sch *q = qdisc_priv(sch);
	const struct qcore_disc_ops *ops = q->ops;
	struct nlattr *opts, *params;
	u32 i;

	opts = nla_nest_start_noflag(skb, TCA_OPTIONS);
	if (!opts)
		goto nla_put_failure;
	if (!kind->variants) {
		if (nla_put_string(skb, TCA_QLAB_DISC, ops->name) ||
		    nla_put_u64_64bit(skb, TCA_QLAB_SEED, q->seed, TCA_QLAB_PAD))
			goto nla_put_failure;
		params = nla_nest_start_noflag(skb, TCA_QLAB_PARAMS);
		if (!params)
			goto nla_put_failure;
		for (i = 0; i < ops->nparams; i++)
			if (qlab_nla_put_value(skb, TCA_QLAB_PARAM(i), &ops->params[i],
					       &q->values[i], TCA_QLAB_PARAM_PAD))
				goto nla_put_failure;
		nla_nest_end(skb, params);
		return nla_nest_end(skb, opts);
	}
	if (nla_put_u64_64bit(skb, kind->attr_seed, q->seed, kind->attr_pad))
		goto nla_put_failure;
	if (kind->attr_variant &&
	    nla_put_u8(skb, kind->attr_variant, (u8)(q->variant - kind->variants)))
		goto nla_put_failure;
	for (i = 0; i < ops->nparams; i++)
		if (qlab_nla_put_value(skb, q->variant->attr_base + i, &ops->params[i],
				       &q->values[i], kind->attr_pad))
			goto nla_put_failure;
	return nla_nest_end(skb, opts);

nla_put_failure:
	nla_nest_cancel(skb, opts);
	return -EMSGSIZE;
}

static int qlab_dump_stats(struct Qdisc *sch, struct gnet_dump *d)
{
	const struct qlab_kind *kind = qlab_kind_of(sch);
	struct qlab_sch *q = qdisc_priv(sch);
	struct tc_qlab_xstats *xs;
	u32 b, r;
	int ret;

	/* Too big for the stack; dump_stats runs under a spinlock. */
	xs = kzalloc(sizeof(*xs), GFP_ATOMIC);
	if (!xs)
		return -ENOMEM;
	xs->nbands = q->nbands;
	xs->variant = kind->variants ? q->variant - kind->variants : 0;
	xs->seed = q->seed;
	for (b = 0; b < QCORE_MAX_BANDS; b++) {
		const struct qlab_band *band = &q->band[b];
		struct tc_qlab_band_xstats *x = &xs->band[b];

		x->backlog_pkts = band->q.qlen;
		x->backlog_bytes = q->views[b].backlog_bytes;
		x->arrivals = band->arrivals;
		x->marked = band->marked;
		x->sent = band->sent;
		x->purged = band->purged;
		for (r = 0; r < QCORE_REASON__COUNT && r < QLAB_MAX_REASONS; r++)
			x->drops[r] = band->drops[r];
	}
	if (kind->fill_xstats)
		kind->fill_xstats(q, xs);
	ret = gnet_stats_copy_app(d, xs, sizeof(*xs));
	kfree(xs);
	return ret;
}

/* ---- registration ----------------------------------------------------- */

static void qlab_policy_param(struct qlab_kind *kind, u16 attr,
			      const struct qcore_param_desc *d)
{
	struct nla_policy *pol = &kind->policy[attr];
	struct netlink_range_validation *range = &kind->ranges[attr];
	const char *c;

	memset(pol, 0, sizeof(*pol));
	range->min = d->min;
	range->max = d->max;
	switch (d->kind) {
	case QCORE_PARAM_U32:
	case QCORE_PARAM_PPM:
		pol->type = NLA_U32;
		break;
	case QCORE_PARAM_U64:
		pol->type = NLA_U64;
		break;
	case QCORE_PARAM_BOOL:
		pol->type = NLA_U8;
		range->min = 0;
		range->max = 1;
		break;
	case QCORE_PARAM_ENUM:
		pol->type = NLA_U8;
		range->min = 0;
		range->max = 0;
		for (c = d->choices; c && *c; c++)
			range->max += *c == '|';
		break;
	case QCORE_PARAM_U32_LIST:
		pol->type = NLA_BINARY;
		pol->len = QLAB_LIST_MAX_BYTES;
		return;
	}
	pol->validation_type = NLA_VALIDATE_RANGE_PTR;
	pol->range = range;
}

/* Registered kinds, for qlab_lookup_ops() (test and benchmark modules). */
static struct qlab_kind *qlab_kinds[8];
static DEFINE_MUTEX(qlab_kinds_lock);

const struct Qdisc_ops *qlab_lookup_ops(const char *id)
{
	const struct Qdisc_ops *ops = NULL;
	u32 i;

	mutex_lock(&qlab_kinds_lock);
	for (i = 0; i < ARRAY_SIZE(qlab_kinds); i++)
		if (qlab_kinds[i] && !strcmp(qlab_kinds[i]->qdisc_ops.id, id))
			ops = &qlab_kinds[i]->qdisc_ops;
	mutex_unlock(&qlab_kinds_lock);
	return ops;
}
EXPORT_SYMBOL_GPL(qlab_lookup_ops);

int qlab_register(struct qlab_kind *kind)
{
	struct Qdisc_ops *ops = &kind->qdisc_ops;
	u32 i, j;
	int ret;

	/* The generic qdisc: every discipline must be nameable. */
	for (i = 0; !kind->variants && qcore_disciplines[i]; i++) {
		if (strlen(qcore_disciplines[i]->name) >= QLAB_DISC_NAMSIZ) {
			pr_err("qlab %s: discipline name '%s' longer than QLAB_DISC_NAMSIZ - 1\n",
			       ops->id, qcore_disciplines[i]->name);
			return -EINVAL;
		}
	}
	for (i = 0; i < kind->nvariants; i++) {
		const struct qlab_variant *v = &kind->variants[i];

		if (v->nattrs != v->ops->nparams ||
		    v->attr_base + v->nattrs - 1 > kind->maxattr) {
			pr_err("qlab %s: %s has %u parameters, the uapi header %u\n",
			       ops->id, v->name, v->ops->nparams, v->nattrs);
			return -EINVAL;
		}
		for (j = 0; j < v->nattrs; j++) {
			if (!v->attr_names[j] ||
			    strcmp(v->attr_names[j], v->ops->params[j].name)) {
				pr_err("qlab %s: attribute %u is '%s' in the uapi header, '%s' in the core\n",
				       ops->id, v->attr_base + j,
				       v->attr_names[j] ? v->attr_names[j] : "(none)",
				       v->ops->params[j].name);
				return -EINVAL;
			}
			qlab_policy_param(kind, v->attr_base + j, &v->ops->params[j]);
		}
	}
	if (kind->variants) {
		memset(&kind->policy[kind->attr_pad], 0, sizeof(struct nla_policy));
		memset(&kind->policy[kind->attr_seed], 0, sizeof(struct nla_policy));
		kind->policy[kind->attr_seed].type = NLA_U64;
	}
	if (kind->attr_variant) {
		struct nla_policy *pol = &kind->policy[kind->attr_variant];

		memset(pol, 0, sizeof(*pol));
		pol->type = NLA_U8;
		kind->ranges[kind->attr_variant].min = 0;
		kind->ranges[kind->attr_variant].max = kind->nvariants - 1;
		pol->validation_type = NLA_VALIDATE_RANGE_PTR;
		pol->range = &kind->ranges[kind->attr_variant];
	}

	ops->priv_size = sizeof(struct qlab_sch);
	ops->enqueue = qlab_enqueue;
	ops->dequeue = qlab_dequeue;
	ops->peek = qdisc_peek_dequeued;
	ops->init = qlab_init;
	ops->reset = qlab_reset;
	ops->destroy = qlab_destroy;
	ops->change = qlab_change;
	ops->dump = qlab_dump;
	ops->dump_stats = qlab_dump_stats;
	ret = register_qdisc(ops);
	if (ret)
		return ret;
	mutex_lock(&qlab_kinds_lock);
	for (i = 0; i < ARRAY_SIZE(qlab_kinds) && qlab_kinds[i]; i++)
		;
	if (i < ARRAY_SIZE(qlab_kinds))
		qlab_kinds[i] = kind;
	mutex_unlock(&qlab_kinds_lock);
	return 0;
}
EXPORT_SYMBOL_GPL(qlab_register);

void qlab_unregister(struct qlab_kind *kind)
{
	u32 i;

	mutex_lock(&qlab_kinds_lock);
	for (i = 0; i < ARRAY_SIZE(qlab_kinds); i++)
		if (qlab_kinds[i] == kind)
			qlab_kinds[i] = NULL;
	mutex_unlock(&qlab_kinds_lock);
	unregister_qdisc(&kind->qdisc_ops);
}
EXPORT_SYMBOL_GPL(qlab_unregister);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("qlab discipline core and its Qdisc adapter");
