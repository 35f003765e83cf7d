// SPDX-License-Identifier: GPL-2.0
/*
 * qlab_sch.c - the Linux adapter of the qlab discipline core: one generic
 * Qdisc implementation (enqueue/dequeue/peek/init/change/reset/destroy/
 * dump/dump_stats) that every qlab qdisc module instantiates (qlab_sch.h).
 *
 * What the adapter does, and only that (the core decides everything else):
 *   - classify: len = IP length (skb->len without the link-layer header),
 *     cls/prec from the ToS byte or IPv6 traffic class (qlab_sched.h),
 *     flow = skb flow hash, PURE_ACK for TCP segments without payload;
 *   - keep one FIFO per band and show the core a view of them;
 *   - act on the core's decisions: queue, mark CE (drop when the packet is
 *     not ECN-capable, as the ns-3 adapter does), drop, serve, head-drop;
 *   - netlink <-> the core's params struct, attribute by attribute in the
 *     order of the core's parameter table; every semantic check is the
 *     core's check_params(), reported through extack.
 * No floating point; nothing in the packet path sleeps or allocates.
 *
 * change: the new parameters take effect as a fresh start: the core's
 * state is reset for them and the packets queued at that moment are
 * dropped (counted as `purged`).  The core has no notion of re-sizing live
 * state (e.g. DRR's active list, S-RD's sizes), so anything else would be
 * adapter logic.  Counters and the core's statistics are kept unless the
 * variant changes.
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
 * The classification; flow_hash is 0 unless `hash` (the core ignores it:
 * QCORE_IGNORES_FLOW_HASH).  Inlined into the packet path.
 */
static __always_inline void qlab_classify_inl(struct sk_buff *skb,
					      struct qcore_pkt *pkt,
					      u64 now_ns, bool hash)
{
	int nhoff = skb_network_offset(skb);
	u8 tos = 0;

	memset(pkt, 0, sizeof(*pkt));
	pkt->now_ns = now_ns;
	pkt->len = nhoff > 0 && nhoff < skb->len ? skb->len - nhoff : skb->len;
	if (hash)
		pkt->flow_hash = skb_get_hash(skb);

	switch (skb_protocol(skb, true)) {
	case htons(ETH_P_IP): {
		const struct iphdr *iph;
		struct iphdr _iph;

		iph = skb_header_pointer(skb, nhoff, sizeof(_iph), &_iph);
		if (!iph)
			break;
		tos = iph->tos;
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
		tos = ipv6_get_dsfield(ip6h);
		if (ip6h->nexthdr == IPPROTO_TCP &&
		    qlab_pure_ack(skb, nhoff + sizeof(*ip6h), pkt->len))
			pkt->flags |= QCORE_PKT_PURE_ACK;
		break;
	}
	default:
		break;
	}
	/* The mapping of qlab_sched.h and the ns-3 adapter. */
	pkt->cls = tos >> 5;
	pkt->prec = (tos >> 3) & 3;
}

void qlab_classify(struct sk_buff *skb, struct qcore_pkt *pkt, u64 now_ns)
{
	qlab_classify_inl(skb, pkt, now_ns, true);
}
EXPORT_SYMBOL_GPL(qlab_classify);

static __always_inline int qlab_enqueue_inl(struct sk_buff *skb, struct Qdisc *sch,
					    struct sk_buff **to_free,
					    const struct qcore_pkt *pkt)
{
	struct qlab_sch *q = qdisc_priv(sch);
	struct qcore_decision d;
	struct qlab_band *band;
	struct qlab_skb_cb *cb;

	d = q->ops->enqueue(q->params, q->vars, q->stats, pkt, q->views, &q->rng);
	if (unlikely(d.band >= q->nbands || d.reason >= QCORE_REASON__COUNT)) {
		WARN_ONCE(1, "qlab %s: core chose band %u reason %u of %u bands\n",
			  q->ops->name, d.band, d.reason, q->nbands);
		return qdisc_drop(skb, sch, to_free);
	}
	band = &q->band[d.band];
	band->arrivals++;
	if (d.verdict == QCORE_MARK) {
		if (INET_ECN_set_ce(skb)) {
			band->marked++;
		} else {
			/* Not ECN-capable: the AQM's mark becomes its drop. */
			d.verdict = QCORE_DROP;
			d.reason = QCORE_REASON_AQM;
		}
	}
	if (d.verdict != QCORE_QUEUE && d.verdict != QCORE_MARK) {
		band->drops[d.reason]++;
		return qdisc_drop(skb, sch, to_free);
	}
	qdisc_cb_private_validate(skb, sizeof(struct qlab_skb_cb));
	cb = qlab_skb_cb(skb);
	cb->arrival_ns = pkt->now_ns;
	cb->len = pkt->len;
	__qdisc_enqueue_tail(skb, &band->q);
	qlab_view_push(&q->views[d.band], pkt->len, pkt->now_ns);
	sch->q.qlen++;
	qdisc_qstats_backlog_inc(sch, skb);
	return NET_XMIT_SUCCESS;
}

int qlab_enqueue_pkt(struct sk_buff *skb, struct Qdisc *sch,
		     struct sk_buff **to_free, const struct qcore_pkt *pkt)
{
	return qlab_enqueue_inl(skb, sch, to_free, pkt);
}
EXPORT_SYMBOL_GPL(qlab_enqueue_pkt);

/*
 * The clock and the flow hash only when the core reads them
 * (ops->ignores): NCQ and CQ-AQM read neither, so their packet path makes
 * no clock read and computes no hash (and NCQ's no-op dequeued() is not
 * called, qlab_take_head()).
 */
static int qlab_enqueue(struct sk_buff *skb, struct Qdisc *sch,
			struct sk_buff **to_free)
{
	struct qlab_sch *q = qdisc_priv(sch);
	u8 ignores = q->ignores;
	struct qcore_pkt pkt;

	qlab_classify_inl(skb, &pkt,
			  ignores & QCORE_IGNORES_TIME ? 0 : ktime_get_ns(),
			  !(ignores & QCORE_IGNORES_FLOW_HASH));
	return qlab_enqueue_inl(skb, sch, to_free, &pkt);
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

/* One parameter from its attribute into the params struct. */
static int qlab_set_param(const struct qcore_param_desc *d, void *params,
			  const struct nlattr *a, struct netlink_ext_ack *extack)
{
	u8 *p = (u8 *)params + d->offset;
	int len;

	switch (d->kind) {
	case QCORE_PARAM_U32:
	case QCORE_PARAM_PPM:
		*(u32 *)p = nla_get_u32(a);
		return 0;
	case QCORE_PARAM_U64:
		*(u64 *)p = nla_get_u64(a);
		return 0;
	case QCORE_PARAM_ENUM:
	case QCORE_PARAM_BOOL:
		*p = nla_get_u8(a);
		return 0;
	case QCORE_PARAM_U32_LIST:
		len = nla_len(a);
		if (len == 0 || len % 4 || len > QLAB_LIST_MAX_BYTES) {
			NL_SET_ERR_MSG_ATTR(extack, a,
					    "list parameter: expected 1 to 8 u32 values");
			return -EINVAL;
		}
		memset(p, 0, QLAB_LIST_MAX_BYTES);
		memcpy(p, nla_data(a), len);
		return 0;
	}
	return -EINVAL;
}

static int qlab_put_param(struct sk_buff *skb, const struct qcore_param_desc *d,
			  const void *params, u16 attr, u16 pad)
{
	const u8 *p = (const u8 *)params + d->offset;
	const u32 *list;
	int n;

	switch (d->kind) {
	case QCORE_PARAM_U32:
	case QCORE_PARAM_PPM:
		return nla_put_u32(skb, attr, *(const u32 *)p);
	case QCORE_PARAM_U64:
		return nla_put_u64_64bit(skb, attr, *(const u64 *)p, pad);
	case QCORE_PARAM_ENUM:
	case QCORE_PARAM_BOOL:
		return nla_put_u8(skb, attr, *p);
	case QCORE_PARAM_U32_LIST:
		/* Up to the last non-zero (used) slot, as it was given. */
		list = (const u32 *)p;
		for (n = QCORE_MAX_BANDS; n > 1 && !list[n - 1]; n--)
			;
		return nla_put(skb, attr, n * 4, list);
	}
	return -EINVAL;
}

/*
 * Parse opt (NULL: defaults) for init or change, check it with the core,
 * and only then apply it under the tree lock.
 */
static int qlab_configure(struct Qdisc *sch, struct nlattr *opt, bool init,
			  struct netlink_ext_ack *extack)
{
	const struct qlab_kind *kind = qlab_kind_of(sch);
	struct qlab_sch *q = qdisc_priv(sch);
	const struct qlab_variant *v = init ? &kind->variants[0] : q->variant;
	struct nlattr **tb;
	char *err;
	void *params;
	u64 seed;
	u32 i, nbands;
	int ret;

	tb = kcalloc(kind->maxattr + 1, sizeof(*tb), GFP_KERNEL);
	params = kzalloc(q->params_size, GFP_KERNEL);
	err = kzalloc(QCORE_ERRLEN, GFP_KERNEL);
	ret = -ENOMEM;
	if (!tb || !params || !err)
		goto out;
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

	if (init || v != q->variant)
		v->params_init(params);	/* a new variant starts from its defaults */
	else
		memcpy(params, q->params, q->params_size);
	for (i = 0; i < v->nattrs; i++) {
		const struct nlattr *a = tb[v->attr_base + i];

		if (!a)
			continue;
		ret = qlab_set_param(&v->ops->params[i], params, a, extack);
		if (ret)
			goto out;
	}
	if (v->ops->check_params(params, err, QCORE_ERRLEN)) {
		qlab_err(extack, "%s: %s", v->ops->name, err);
		ret = -EINVAL;
		goto out;
	}
	nbands = v->ops->nbands(params);
	if (nbands < 1 || nbands > QCORE_MAX_BANDS) {
		qlab_err(extack, "%s: core reports %u bands", v->ops->name, nbands);
		ret = -EINVAL;
		goto out;
	}
	if (tb[kind->attr_seed])
		seed = nla_get_u64(tb[kind->attr_seed]);
	else
		seed = init ? get_random_u64() : q->seed;

	sch_tree_lock(sch);
	if (!init)
		qlab_purge(sch, true);
	if (init || v != q->variant) {
		memset(q->stats, 0, q->stats_size);
		memset(q->vars, 0, q->vars_size);
	}
	memcpy(q->params, params, q->params_size);
	memset(q->views, 0, sizeof(q->views));
	q->variant = v;
	q->ops = v->ops;
	q->ignores = v->ops->ignores;
	q->nbands = nbands;
	q->seed = seed;
	qcore_rng_seed(&q->rng, seed);
	q->ops->reset(q->params, q->vars);
	sch_tree_unlock(sch);
	ret = 0;
out:
	kfree(err);
	kfree(params);
	kfree(tb);
	return ret;
}

static int qlab_init(struct Qdisc *sch, struct nlattr *opt,
		     struct netlink_ext_ack *extack)
{
	const struct qlab_kind *kind = qlab_kind_of(sch);
	struct qlab_sch *q = qdisc_priv(sch);
	u32 i;

	memset(q, 0, sizeof(*q));
	q->kind = kind;
	for (i = 0; i < kind->nvariants; i++) {
		const struct qcore_disc_ops *ops = kind->variants[i].ops;

		q->params_size = max(q->params_size, ops->params_size);
		q->vars_size = max(q->vars_size, ops->vars_size);
		q->stats_size = max(q->stats_size, ops->stats_size);
	}
	/* The band FIFOs start empty: zeroed with q (their lock is unused). */
	q->params = kzalloc(q->params_size, GFP_KERNEL);
	q->vars = kvzalloc(q->vars_size, GFP_KERNEL);
	q->stats = kzalloc(q->stats_size, GFP_KERNEL);
	if (!q->params || !q->vars || !q->stats)
		return -ENOMEM;	/* destroy() frees what was allocated */
	return qlab_configure(sch, opt, true, extack);
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
	q->params = q->vars = q->stats = NULL;
	q->ops = NULL;
}

static int qlab_dump(struct Qdisc *sch, struct sk_buff *skb)
{
	const struct qlab_kind *kind = qlab_kind_of(sch);
	struct qlab_sch *q = qdisc_priv(sch);
	const struct qlab_variant *v = q->variant;
	struct nlattr *opts;
	u32 i;

	opts = nla_nest_start_noflag(skb, TCA_OPTIONS);
	if (!opts)
		goto nla_put_failure;
	if (nla_put_u64_64bit(skb, kind->attr_seed, q->seed, kind->attr_pad))
		goto nla_put_failure;
	if (kind->attr_variant &&
	    nla_put_u8(skb, kind->attr_variant, (u8)(v - kind->variants)))
		goto nla_put_failure;
	for (i = 0; i < v->nattrs; i++)
		if (qlab_put_param(skb, &v->ops->params[i], q->params,
				   v->attr_base + i, kind->attr_pad))
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
	xs->variant = q->variant - kind->variants;
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
	memset(&kind->policy[kind->attr_pad], 0, sizeof(struct nla_policy));
	memset(&kind->policy[kind->attr_seed], 0, sizeof(struct nla_policy));
	kind->policy[kind->attr_seed].type = NLA_U64;
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
