// SPDX-License-Identifier: GPL-2.0
/*
 * qlab_golden_main.c - test-only module: the core's golden vectors
 * (disciplines/core/golden, as C from gen_golden.py) replayed through the
 * qlab qdiscs' own code, every decision checked, at insmod time.
 *
 * Per case: a standalone qdisc of the case's kind (qdisc_create_dflt on the
 * loopback device's queue, never attached), configured through its real
 * change() with the TCA_OPTIONS nest `tc` would send for the case's
 * --param/--seed arguments.  Per event row:
 *   enq: a synthetic skb (Ethernet header + IPv4 header with ToS =
 *        cls << 5 | prec << 3 | ECT(0), total length = the row's len, the
 *        row's flow as the skb hash; a non-IP frame when len < 20) goes
 *        through qlab_classify(), which must recover len, cls, prec and
 *        flow, then qlab_enqueue_pkt() at the row's time;
 *   deq: qlab_dequeue_at() at the row's time.
 * These are Qdisc_ops.enqueue/dequeue minus the clock read (qlab_sch.h).
 * The decision rows are rebuilt from what the qdisc did (return code, the
 * band counters, the CE mark, which skb came out, which heads were dropped)
 * in qcore-replay's format and compared with the golden rows one by one.
 * Cases marked expect_fail (mutated copies) must mismatch.
 *
 * Output, one line per case, then
 *	qlab-golden: summary cases=N pass=P fail=F
 */
#include <linux/module.h>
#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <net/inet_ecn.h>
#include <net/net_namespace.h>
#include <net/sch_generic.h>

#include "qlab_sch.h"
#include "qlab_golden.h"

#define ROWLEN 128
#define MAX_HEADS 64	/* head drops remembered per band per dequeue */

struct snapshot {
	u64 arrivals[QCORE_MAX_BANDS], marked[QCORE_MAX_BANDS], sent[QCORE_MAX_BANDS];
	u64 drops[QCORE_MAX_BANDS][QCORE_REASON__COUNT];
	u32 heads[QCORE_MAX_BANDS][MAX_HEADS];	/* packet numbers at the band heads */
};

static void take_snapshot(const struct qlab_sch *q, struct snapshot *s, bool heads)
{
	u32 b, r, i;

	for (b = 0; b < QCORE_MAX_BANDS; b++) {
		const struct sk_buff *skb = q->band[b].q.head;

		s->arrivals[b] = q->band[b].arrivals;
		s->marked[b] = q->band[b].marked;
		s->sent[b] = q->band[b].sent;
		for (r = 0; r < QCORE_REASON__COUNT; r++)
			s->drops[b][r] = q->band[b].drops[r];
		for (i = 0; heads && i < MAX_HEADS && skb; i++, skb = skb->next)
			s->heads[b][i] = skb->mark;
	}
}

static struct sk_buff *make_skb(const struct qlab_golden_event *ev, u32 id)
{
	struct sk_buff *skb = alloc_skb(ev->len + ETH_HLEN + 64, GFP_KERNEL);
	struct ethhdr *eth;

	if (!skb)
		return NULL;
	skb_reserve(skb, 64);
	skb_put_zero(skb, ev->len);
	skb_reset_network_header(skb);
	if (ev->len >= sizeof(struct iphdr)) {
		struct iphdr *iph = ip_hdr(skb);

		iph->version = 4;
		iph->ihl = 5;
		iph->tos = (ev->cls << 5) | ((ev->prec & 3) << 3) | INET_ECN_ECT_0;
		iph->tot_len = htons(ev->len);
		iph->ttl = 64;
		iph->protocol = IPPROTO_UDP;
		iph->saddr = htonl(0x0a000001);
		iph->daddr = htonl(0x0a000002);
		iph->check = ip_fast_csum((u8 *)iph, iph->ihl);
		skb->protocol = htons(ETH_P_IP);
	} else {
		skb->protocol = htons(ETH_P_802_3);	/* too short for IP */
	}
	eth = skb_push(skb, ETH_HLEN);
	skb_reset_mac_header(skb);
	memset(eth, 0, ETH_HLEN);
	eth->h_proto = skb->protocol;
	qdisc_skb_cb(skb)->pkt_len = skb->len;	/* as __dev_xmit_skb() sets it */
	__skb_set_sw_hash(skb, ev->flow, false);
	skb->mark = id;
	return skb;
}

struct replay {
	const struct qlab_golden_case *c;
	const char *expect;	/* next expected row */
	u32 row;		/* decision rows produced */
	bool mismatch;
	char got[ROWLEN], want[ROWLEN];
};

/* Compare one produced row with the next golden row. */
static void emit(struct replay *r, const char *row)
{
	const char *nl;
	size_t n;

	if (r->mismatch)
		return;
	r->row++;
	nl = strchr(r->expect, '\n');
	n = nl ? (size_t)(nl - r->expect) : strlen(r->expect);
	if (n != strlen(row) || memcmp(r->expect, row, n)) {
		r->mismatch = true;
		strscpy(r->got, row, ROWLEN);
		memcpy(r->want, r->expect, min_t(size_t, n, ROWLEN - 1));
		r->want[min_t(size_t, n, ROWLEN - 1)] = '\0';
		return;
	}
	r->expect += nl ? n + 1 : n;
}

static void mismatch_text(struct replay *r, const char *what)
{
	if (r->mismatch)
		return;
	r->mismatch = true;
	r->row++;
	snprintf(r->got, ROWLEN, "%s", what);
	r->want[0] = '\0';
}

static int do_enq(struct replay *r, struct Qdisc *sch, const struct qlab_golden_event *ev,
		  u32 id, struct snapshot *s)
{
	struct qlab_sch *q = qdisc_priv(sch);
	struct sk_buff *skb = make_skb(ev, id), *to_free = NULL;
	const char *verdict = "queued", *reason = "";
	char row[ROWLEN];
	struct qcore_pkt pkt;
	int ret, band = -1;
	u32 b, k;

	if (!skb)
		return -ENOMEM;
	qlab_classify(skb, &pkt, ev->t_ns);
	if (ev->len >= sizeof(struct iphdr) &&
	    (pkt.len != ev->len || pkt.cls != ev->cls || pkt.prec != ev->prec ||
	     pkt.flow_hash != ev->flow)) {
		snprintf(row, ROWLEN, "classify: len %u cls %u prec %u flow %u, want %u %u %u %u",
			 pkt.len, pkt.cls, pkt.prec, pkt.flow_hash, ev->len, ev->cls,
			 ev->prec, ev->flow);
		mismatch_text(r, row);
	}
	if (ev->len < sizeof(struct iphdr)) {
		/* Not IP: the metadata the classifier cannot carry (as ns-3's RawItem). */
		if (pkt.len != ev->len)
			mismatch_text(r, "classify: wrong len of a non-IP frame");
		pkt.cls = ev->cls;
		pkt.prec = ev->prec;
	}
	take_snapshot(q, s, false);
	spin_lock_bh(qdisc_lock(sch));
	ret = qlab_enqueue_pkt(skb, sch, &to_free, &pkt);
	spin_unlock_bh(qdisc_lock(sch));
	for (b = 0; b < QCORE_MAX_BANDS; b++)
		if (q->band[b].arrivals != s->arrivals[b])
			band = b;
	if (band < 0) {
		mismatch_text(r, "enqueue counted no arrival in any band");
	} else if (ret == NET_XMIT_SUCCESS) {
		if (q->band[band].marked != s->marked[band])
			verdict = "marked";
		if (q->band[band].q.tail != skb)
			mismatch_text(r, "queued packet is not at its band's tail");
		if (!strcmp(verdict, "marked") &&
		    !INET_ECN_is_ce(ip_hdr(skb)->tos))
			mismatch_text(r, "marked packet without CE");
	} else {
		verdict = "dropped";
		for (k = 1; k < QCORE_REASON__COUNT; k++)
			if (q->band[band].drops[k] != s->drops[band][k])
				reason = qcore_reason_names[k];
		if (!to_free)
			mismatch_text(r, "dropped packet not handed back to free");
	}
	kfree_skb_list(to_free);
	snprintf(row, ROWLEN, "%llu,enq,%u,%s,%d,%s", ev->t_ns, id, verdict, band, reason);
	emit(r, row);
	return 0;
}

static void do_deq(struct replay *r, struct Qdisc *sch, const struct qlab_golden_event *ev,
		   struct snapshot *s)
{
	struct qlab_sch *q = qdisc_priv(sch);
	struct sk_buff *skb;
	char row[ROWLEN];
	u32 b, k, i;
	int sent_band = -1;

	take_snapshot(q, s, true);
	spin_lock_bh(qdisc_lock(sch));
	skb = qlab_dequeue_at(sch, ev->t_ns);
	spin_unlock_bh(qdisc_lock(sch));
	/* Head drops first, in the order they left their band. */
	for (b = 0; b < QCORE_MAX_BANDS; b++) {
		for (k = 1; k < QCORE_REASON__COUNT; k++) {
			u64 n = q->band[b].drops[k] - s->drops[b][k];

			for (i = 0; i < n && i < MAX_HEADS; i++) {
				snprintf(row, ROWLEN, "%llu,drop_head,%u,dropped,%u,%s",
					 ev->t_ns, s->heads[b][i], b, qcore_reason_names[k]);
				emit(r, row);
			}
		}
		if (q->band[b].sent != s->sent[b])
			sent_band = b;
	}
	if (!skb) {
		snprintf(row, ROWLEN, "%llu,deq,-1,empty,,", ev->t_ns);
	} else {
		snprintf(row, ROWLEN, "%llu,deq,%u,sent,%d,", ev->t_ns, skb->mark, sent_band);
		kfree_skb(skb);
	}
	emit(r, row);
}

/* 0: rows match; 1: mismatch (r->got/want); < 0: could not run. */
static int run_case(const struct qlab_golden_case *c, struct replay *r)
{
	struct netdev_queue *txq = netdev_get_tx_queue(init_net.loopback_dev, 0);
	struct netlink_ext_ack extack = {};
	const struct Qdisc_ops *ops = qlab_lookup_ops(c->qdisc);
	struct snapshot *s = kzalloc(sizeof(*s), GFP_KERNEL);
	struct nlattr *opts = kmemdup(c->opts, c->opts_len, GFP_KERNEL);
	struct Qdisc *sch;
	u32 i, id = 0;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	r->c = c;
	r->expect = c->decisions;
	if (!ops || !s || !opts) {
		ret = ops ? -ENOMEM : -ENOENT;
		goto out;
	}
	rtnl_lock();
	sch = qdisc_create_dflt(txq, ops, TC_H_ROOT, &extack);
	if (sch) {
		ret = ops->change(sch, opts, &extack);
		if (ret) {
			pr_err("qlab-golden: %s: change: %s\n", c->name,
			       extack._msg ? extack._msg : "(no message)");
			qdisc_put(sch);
		}
	} else {
		ret = -ENOMEM;
	}
	rtnl_unlock();
	if (ret)
		goto out;

	for (i = 0; i < c->nevents && !r->mismatch; i++) {
		const struct qlab_golden_event *ev = &c->events[i];

		if (ev->op == 0)
			ret = do_enq(r, sch, ev, id++, s);
		else
			do_deq(r, sch, ev, s);
		if (ret)
			break;
	}
	if (!ret && !r->mismatch && *r->expect)
		mismatch_text(r, "(end of output, golden rows remain)");

	rtnl_lock();
	qdisc_put(sch);
	rtnl_unlock();
	if (!ret)
		ret = r->mismatch ? 1 : 0;
out:
	kfree(opts);
	kfree(s);
	return ret;
}

static int __init qlab_golden_init(void)
{
	struct replay *r = kzalloc(sizeof(*r), GFP_KERNEL);
	u32 i, pass = 0, fail = 0;

	if (!r)
		return -ENOMEM;
	for (i = 0; i < qlab_golden_ncases; i++) {
		const struct qlab_golden_case *c = &qlab_golden_cases[i];
		int ret = run_case(c, r);

		if (ret < 0) {
			pr_info("qlab-golden: FAIL %s: could not run (%d)\n", c->name, ret);
			fail++;
		} else if (!c->expect_fail && ret == 0) {
			pr_info("qlab-golden: ok %s (%u rows)\n", c->name, r->row);
			pass++;
		} else if (c->expect_fail && ret == 1) {
			pr_info("qlab-golden: ok %s: mismatch at row %u as expected (want '%s', got '%s')\n",
				c->name, r->row, r->want, r->got);
			pass++;
		} else if (c->expect_fail) {
			pr_info("qlab-golden: FAIL %s: a mutated case matched, drift would go unseen\n",
				c->name);
			fail++;
		} else {
			pr_info("qlab-golden: FAIL %s row %u: want '%s', got '%s'\n",
				c->name, r->row, r->want, r->got);
			fail++;
		}
		cond_resched();
	}
	pr_info("qlab-golden: summary cases=%u pass=%u fail=%u\n",
		qlab_golden_ncases, pass, fail);
	kfree(r);
	return 0;
}

static void __exit qlab_golden_exit(void)
{
}

module_init(qlab_golden_init);
module_exit(qlab_golden_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("qlab qdiscs: golden-vector conformance test (test only)");
