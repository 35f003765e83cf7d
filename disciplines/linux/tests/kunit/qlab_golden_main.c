// SPDX-License-Identifier: GPL-2.0
/*
 * qlab_golden_main.c - test-only module: the core's golden vectors
 * (disciplines/core/golden, as C from gen_golden.py) replayed through the
 * qlab qdiscs' own code, every decision checked, at insmod time.
 *
 * Per case: a standalone qdisc of the case's kind (qdisc_create_dflt on the
 * loopback device's queue, never attached), configured through its real
 * change(): for the generic qdisc `qlab`, the case's --param NAME=VALUE
 * texts become typed values with the core's parser (qcore_param_index,
 * qcore_param_parse) and the options `tc qdisc change ... qlab disc NAME`
 * sends; for a dedicated qdisc, the TCA_OPTIONS nest `tc` would send to it.
 * Per event row:
 *   enq: a synthetic skb (Ethernet header + IPv4 header with ToS =
 *        cls << 5 | prec << 3 | ECT(0), total length = the row's len, a UDP
 *        header whose 5-tuple derives from the row's flow, or protocol 253
 *        without ports when the packet is too short for UDP; a non-IP frame
 *        when len < 20) goes through qlab_classify(), which must recover
 *        len, cls, prec, ECT and qcore_flow_hash() of that 5-tuple; then
 *        the row's flow replaces the hash (the vectors' flows are abstract)
 *        and qlab_enqueue_pkt() runs at the row's time;
 *   deq: qlab_dequeue_at() at the row's time.
 * These are Qdisc_ops.enqueue/dequeue minus the clock read (qlab_sch.h).
 * The decision rows are rebuilt from what the qdisc did (return code, the
 * band counters, the CE mark, which skb came out, which heads were dropped)
 * in qcore-replay's format and compared with the golden rows one by one.
 * Cases marked expect_fail (mutated copies) must mismatch.  Every
 * discipline of the core's registry must have passed cases through `qlab`.
 *
 * Then the flow hash and the classification of hand-made packets (IPv4
 * TCP/UDP/ICMP, fragments, IPv6, non-IP) against qcore_flow_hash() of
 * their 5-tuples, written here as constants.
 *
 * Output, one line per case and check, then
 *	qlab-golden: summary cases=N pass=P fail=F
 */
#include <linux/module.h>
#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/sch_generic.h>
#include <net/tcp.h>

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

/* The 5-tuple a row's packet carries (UDP when there is room for its header). */
struct tuple {
	u32 saddr, daddr;
	u16 sport, dport;
	u8 proto;
};

static void row_tuple(const struct qlab_golden_event *ev, struct tuple *t)
{
	bool udp = ev->len >= sizeof(struct iphdr) + sizeof(struct udphdr);

	t->saddr = 0x0a000000 | (ev->flow >> 16);
	t->daddr = 0x0a800001;
	t->sport = udp ? (u16)ev->flow : 0;
	t->dport = udp ? 9 : 0;
	t->proto = udp ? IPPROTO_UDP : 253;	/* 253: experimental, no ports */
}

static struct sk_buff *make_skb(const struct qlab_golden_event *ev, u32 id,
				const struct tuple *t)
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
		iph->protocol = t->proto;
		iph->saddr = htonl(t->saddr);
		iph->daddr = htonl(t->daddr);
		iph->check = ip_fast_csum((u8 *)iph, iph->ihl);
		if (t->proto == IPPROTO_UDP) {
			struct udphdr *uh = (struct udphdr *)(iph + 1);

			uh->source = htons(t->sport);
			uh->dest = htons(t->dport);
			uh->len = htons(ev->len - sizeof(*iph));
		}
		skb->protocol = htons(ETH_P_IP);
	} else {
		skb->protocol = htons(ETH_P_802_3);	/* too short for IP */
	}
	eth = skb_push(skb, ETH_HLEN);
	skb_reset_mac_header(skb);
	memset(eth, 0, ETH_HLEN);
	eth->h_proto = skb->protocol;
	qdisc_skb_cb(skb)->pkt_len = skb->len;	/* as __dev_xmit_skb() sets it */
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
	const char *verdict = "queued", *reason = "";
	struct sk_buff *skb, *to_free = NULL;
	char row[ROWLEN];
	struct qcore_pkt pkt;
	struct tuple t;
	int ret, band = -1;
	u32 b, k, hash;

	row_tuple(ev, &t);
	skb = make_skb(ev, id, &t);
	if (!skb)
		return -ENOMEM;
	qlab_classify(skb, &pkt, ev->t_ns);
	hash = qcore_flow_hash(t.saddr, t.daddr, t.sport, t.dport, t.proto);
	if (ev->len >= sizeof(struct iphdr) &&
	    (pkt.len != ev->len || pkt.cls != ev->cls || pkt.prec != ev->prec ||
	     !(pkt.flags & QCORE_PKT_ECT) || pkt.flow_hash != hash)) {
		snprintf(row, ROWLEN, "classify: len %u cls %u prec %u flags %#x flow %#x, want %u %u %u ECT %#x",
			 pkt.len, pkt.cls, pkt.prec, pkt.flags, pkt.flow_hash, ev->len,
			 ev->cls, ev->prec, hash);
		mismatch_text(r, row);
	}
	if (ev->len < sizeof(struct iphdr)) {
		/* Not IP: the metadata the classifier cannot carry (as ns-3's RawItem). */
		if (pkt.len != ev->len || pkt.flow_hash)
			mismatch_text(r, "classify: wrong len or a flow hash for a non-IP frame");
		pkt.cls = ev->cls;
		pkt.prec = ev->prec;
	}
	pkt.flow_hash = ev->flow;
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

/*
 * The options `tc qdisc change ... qlab disc NAME [seed N] [NAME VALUE]...`
 * sends, from the case's "NAME=VALUE" texts: typed by the core's parser,
 * one attribute per value in TCA_QLAB_PARAMS (qlab_sched.h).  In msg;
 * returns the TCA_OPTIONS attribute, or NULL with a message in err.
 */
static struct nlattr *generic_opts(const struct qlab_golden_case *c,
				   struct sk_buff *msg, char *err)
{
	const struct qcore_disc_ops *ops = qcore_find(c->disc);
	struct nlattr *opts, *params;
	const char *const *p;
	int idx, n, ret = 0;

	if (!ops) {
		snprintf(err, QCORE_ERRLEN, "no discipline %s in the core's registry", c->disc);
		return NULL;
	}
	opts = nla_nest_start_noflag(msg, TCA_OPTIONS);
	if (!opts || nla_put_string(msg, TCA_QLAB_DISC, c->disc) ||
	    nla_put_u64_64bit(msg, TCA_QLAB_SEED, c->seed, TCA_QLAB_PAD))
		goto too_big;
	params = nla_nest_start_noflag(msg, TCA_QLAB_PARAMS);
	if (!params)
		goto too_big;
	for (p = c->params; *p; p++) {
		struct qcore_param_value v = {};
		char name[64];
		const char *eq = strchr(*p, '=');
		const struct qcore_param_desc *d;

		if (!eq || eq - *p >= (int)sizeof(name)) {
			snprintf(err, QCORE_ERRLEN, "bad parameter text '%s'", *p);
			return NULL;
		}
		memcpy(name, *p, eq - *p);
		name[eq - *p] = '\0';
		idx = qcore_param_index(ops, name, err, QCORE_ERRLEN);
		if (idx < 0)
			return NULL;
		d = &ops->params[idx];
		if (qcore_param_parse(d, eq + 1, &v, err, QCORE_ERRLEN))
			return NULL;
		switch (d->kind) {
		case QCORE_PARAM_U32:
		case QCORE_PARAM_PPM:
			ret = nla_put_u32(msg, TCA_QLAB_PARAM(idx), (u32)v.value);
			break;
		case QCORE_PARAM_U64:
			/* aligned with TCA_QLAB_PARAM_PAD, which the qdisc must skip */
			ret = nla_put_u64_64bit(msg, TCA_QLAB_PARAM(idx), v.value,
						TCA_QLAB_PARAM_PAD);
			break;
		case QCORE_PARAM_ENUM:
		case QCORE_PARAM_BOOL:
			ret = nla_put_u8(msg, TCA_QLAB_PARAM(idx), (u8)v.value);
			break;
		case QCORE_PARAM_U32_LIST:
			for (n = QCORE_MAX_BANDS; n > 1 && !v.list[n - 1]; n--)
				;
			ret = nla_put(msg, TCA_QLAB_PARAM(idx), n * sizeof(u32), v.list);
			break;
		}
		if (ret)
			goto too_big;
	}
	nla_nest_end(msg, params);
	nla_nest_end(msg, opts);
	return opts;
too_big:
	snprintf(err, QCORE_ERRLEN, "options do not fit the message");
	return NULL;
}

/* 0: rows match; 1: mismatch (r->got/want); < 0: could not run. */
static int run_case(const struct qlab_golden_case *c, struct replay *r)
{
	struct netdev_queue *txq = netdev_get_tx_queue(init_net.loopback_dev, 0);
	struct netlink_ext_ack extack = {};
	const struct Qdisc_ops *ops = qlab_lookup_ops(c->qdisc);
	struct snapshot *s = kzalloc(sizeof(*s), GFP_KERNEL);
	struct sk_buff *msg = alloc_skb(NLMSG_GOODSIZE, GFP_KERNEL);
	char *err = kzalloc(QCORE_ERRLEN, GFP_KERNEL);
	struct nlattr *opts = NULL;
	struct Qdisc *sch;
	u32 i, id = 0;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	r->c = c;
	r->expect = c->decisions;
	if (!ops || !s || !msg || !err) {
		ret = ops ? -ENOMEM : -ENOENT;
		goto out;
	}
	if (c->params) {
		opts = generic_opts(c, msg, err);
		if (!opts) {
			pr_err("qlab-golden: %s: %s\n", c->name, err);
			ret = -EINVAL;
			goto out;
		}
	} else {
		opts = skb_put_data(msg, c->opts, c->opts_len);
	}
	/* A qlab qdisc made with no options (qlab: droptail), then changed. */
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
	kfree_skb(msg);
	kfree(err);
	kfree(s);
	return ret;
}

/* ---- the flow hash and the classification of hand-made packets --------- */

struct hand_pkt {
	const char *name;
	bool v6;		/* IPv6, else IPv4 (or non-IP: proto_eth) */
	__be16 proto_eth;	/* non-IP frames: their EtherType; else 0 */
	u8 tos, proto;
	u16 frag;		/* IPv4 frag_off, host order (IP_MF | offset) */
	u32 saddr, daddr;	/* IPv4 */
	u32 saddr6[4], daddr6[4];	/* IPv6, host order words */
	u16 sport, dport;
	u8 tcp_flags;		/* TCP: e.g. TCPHDR_ACK; no payload */
	u16 payload;
	/* what the classifier must give */
	u32 want_sport, want_dport;	/* the ports the hash must use */
	u8 want_cls, want_prec, want_flags;
	bool want_no_hash;	/* non-IP: flow 0 */
};

static const struct hand_pkt hand_pkts[] = {
	{ .name = "IPv4 UDP", .proto = IPPROTO_UDP, .saddr = 0x0a010203, .daddr = 0x0a040506,
	  .sport = 5000, .dport = 53, .payload = 100, .want_sport = 5000, .want_dport = 53 },
	{ .name = "IPv4 UDP, other source port", .proto = IPPROTO_UDP, .saddr = 0x0a010203,
	  .daddr = 0x0a040506, .sport = 5001, .dport = 53, .payload = 100,
	  .want_sport = 5001, .want_dport = 53 },
	{ .name = "IPv4 TCP pure ACK, ToS 0x28", .tos = 0x28, .proto = IPPROTO_TCP,
	  .saddr = 0xc0a80001, .daddr = 0xc0a80002, .sport = 40000, .dport = 80,
	  .tcp_flags = TCPHDR_ACK, .want_sport = 40000, .want_dport = 80,
	  .want_cls = 1, .want_prec = 1, .want_flags = QCORE_PKT_PURE_ACK },
	{ .name = "IPv4 TCP with payload, ToS 0x6a (ECT(0))", .tos = 0x6a, .proto = IPPROTO_TCP,
	  .saddr = 0xc0a80002, .daddr = 0xc0a80001, .sport = 80, .dport = 40000,
	  .tcp_flags = TCPHDR_ACK | TCPHDR_PSH, .payload = 1000, .want_sport = 80,
	  .want_dport = 40000, .want_cls = 3, .want_prec = 1, .want_flags = QCORE_PKT_ECT },
	{ .name = "IPv4 ICMP (no ports)", .proto = IPPROTO_ICMP, .saddr = 0x0a000001,
	  .daddr = 0x0a000002, .sport = 0x0800, .dport = 0x1234, .payload = 56 },
	{ .name = "IPv4 UDP first fragment", .proto = IPPROTO_UDP, .frag = IP_MF,
	  .saddr = 0x0a010203, .daddr = 0x0a040506, .sport = 5000, .dport = 53,
	  .payload = 1400, .want_sport = 5000, .want_dport = 53 },
	{ .name = "IPv4 UDP non-first fragment (no ports)", .proto = IPPROTO_UDP, .frag = 185,
	  .saddr = 0x0a010203, .daddr = 0x0a040506, .sport = 5000, .dport = 53, .payload = 400 },
	{ .name = "IPv6 UDP, traffic class 0x23 (CE)", .v6 = true, .tos = 0x23, .proto = IPPROTO_UDP,
	  .saddr6 = { 0x20010db8, 0, 0, 1 }, .daddr6 = { 0x20010db8, 0, 0x10000, 2 },
	  .sport = 5000, .dport = 53, .payload = 100, .want_sport = 5000, .want_dport = 53,
	  .want_cls = 1, .want_flags = QCORE_PKT_ECT },
	{ .name = "IPv6 TCP pure ACK", .v6 = true, .proto = IPPROTO_TCP,
	  .saddr6 = { 0xfd000000, 0x11, 0x22, 0x33 }, .daddr6 = { 0xfd000000, 0x44, 0x55, 0x66 },
	  .sport = 22, .dport = 50000, .tcp_flags = TCPHDR_ACK, .want_sport = 22,
	  .want_dport = 50000, .want_flags = QCORE_PKT_PURE_ACK },
	{ .name = "IPv4 UDP without payload (28 bytes: the general path)", .proto = IPPROTO_UDP,
	  .saddr = 0x0a010203, .daddr = 0x0a040506, .sport = 7, .dport = 9,
	  .want_sport = 7, .want_dport = 9 },
	{ .name = "non-IP (ARP)", .proto_eth = htons(ETH_P_ARP), .payload = 28, .want_no_hash = true },
};

static struct sk_buff *hand_skb(const struct hand_pkt *h, u32 *len)
{
	u32 l4len = h->proto == IPPROTO_TCP ? sizeof(struct tcphdr) :
		    h->proto == IPPROTO_UDP ? sizeof(struct udphdr) : 8;
	u32 l3len = h->proto_eth ? 0 : h->v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	struct sk_buff *skb;
	u8 *l4;
	int i;

	*len = h->proto_eth ? h->payload : l3len + l4len + h->payload;
	skb = alloc_skb(*len + ETH_HLEN + 64, GFP_KERNEL);
	if (!skb)
		return NULL;
	skb_reserve(skb, 64);
	skb_put_zero(skb, *len);
	skb_reset_network_header(skb);
	if (h->proto_eth) {
		skb->protocol = h->proto_eth;
	} else if (h->v6) {
		struct ipv6hdr *ip6h = ipv6_hdr(skb);

		ip6_flow_hdr(ip6h, h->tos, 0);
		ip6h->payload_len = htons(l4len + h->payload);
		ip6h->nexthdr = h->proto;
		ip6h->hop_limit = 64;
		for (i = 0; i < 4; i++) {
			ip6h->saddr.s6_addr32[i] = htonl(h->saddr6[i]);
			ip6h->daddr.s6_addr32[i] = htonl(h->daddr6[i]);
		}
		skb->protocol = htons(ETH_P_IPV6);
	} else {
		struct iphdr *iph = ip_hdr(skb);

		iph->version = 4;
		iph->ihl = 5;
		iph->tos = h->tos;
		iph->tot_len = htons(*len);
		iph->frag_off = htons(h->frag);
		iph->ttl = 64;
		iph->protocol = h->proto;
		iph->saddr = htonl(h->saddr);
		iph->daddr = htonl(h->daddr);
		iph->check = ip_fast_csum((u8 *)iph, iph->ihl);
		skb->protocol = htons(ETH_P_IP);
	}
	l4 = skb_network_header(skb) + l3len;
	if (h->proto == IPPROTO_TCP) {
		struct tcphdr *th = (struct tcphdr *)l4;

		th->source = htons(h->sport);
		th->dest = htons(h->dport);
		th->doff = sizeof(*th) / 4;
		tcp_flag_byte(th) = h->tcp_flags;
	} else if (!h->proto_eth) {
		/* UDP's ports, or the first bytes of ICMP (not ports) */
		((__be16 *)l4)[0] = htons(h->sport);
		((__be16 *)l4)[1] = htons(h->dport);
	}
	skb_push(skb, ETH_HLEN);
	skb_reset_mac_header(skb);
	eth_hdr(skb)->h_proto = skb->protocol;
	return skb;
}

/* Each hand-made packet through qlab_classify(); returns the failures. */
static u32 hand_checks(u32 *pass)
{
	u32 i, fail = 0;

	for (i = 0; i < ARRAY_SIZE(hand_pkts); i++) {
		const struct hand_pkt *h = &hand_pkts[i];
		struct qcore_pkt pkt, gen;
		struct sk_buff *skb;
		u32 len, want;

		skb = hand_skb(h, &len);
		if (!skb) {
			pr_info("qlab-golden: FAIL flow-hash %s: no memory\n", h->name);
			fail++;
			continue;
		}
		qlab_classify(skb, &pkt, 7);
		/* The inlined fast path and the general one: the same facts. */
		qlab_classify_general(skb, &gen, 7);
		kfree_skb(skb);
		if (pkt.now_ns != 7 || gen.now_ns != pkt.now_ns || gen.len != pkt.len ||
		    gen.flow_hash != pkt.flow_hash || gen.cls != pkt.cls ||
		    gen.prec != pkt.prec || gen.flags != pkt.flags) {
			pr_info("qlab-golden: FAIL classify-paths %s: flow %#x/%#x len %u/%u cls %u/%u prec %u/%u flags %#x/%#x now %llu/%llu (qlab_classify/general)\n",
				h->name, pkt.flow_hash, gen.flow_hash, pkt.len, gen.len, pkt.cls,
				gen.cls, pkt.prec, gen.prec, pkt.flags, gen.flags, pkt.now_ns, gen.now_ns);
			fail++;
		} else {
			(*pass)++;
		}
		if (h->want_no_hash)
			want = 0;
		else if (h->v6)
			want = qcore_flow_hash(h->saddr6[0] ^ h->saddr6[1] ^ h->saddr6[2] ^ h->saddr6[3],
					       h->daddr6[0] ^ h->daddr6[1] ^ h->daddr6[2] ^ h->daddr6[3],
					       h->want_sport, h->want_dport, h->proto);
		else
			want = qcore_flow_hash(h->saddr, h->daddr, h->want_sport, h->want_dport,
					       h->proto);
		if (pkt.flow_hash != want || pkt.len != len || pkt.cls != h->want_cls ||
		    pkt.prec != h->want_prec || pkt.flags != h->want_flags) {
			pr_info("qlab-golden: FAIL flow-hash %s: flow %#x len %u cls %u prec %u flags %#x, want %#x %u %u %u %#x\n",
				h->name, pkt.flow_hash, pkt.len, pkt.cls, pkt.prec, pkt.flags,
				want, len, h->want_cls, h->want_prec, h->want_flags);
			fail++;
		} else {
			pr_info("qlab-golden: ok flow-hash %s: flow %#x%s\n", h->name, want,
				h->want_no_hash ? " (not IP)" : " = qcore_flow_hash of its 5-tuple");
			(*pass)++;
		}
	}
	return fail;
}

/* Every discipline of the core's registry passed golden cases through qlab. */
static u32 registry_checks(const u32 *passed, u32 *pass)
{
	u32 i, fail = 0;

	for (i = 0; qcore_disciplines[i]; i++) {
		if (passed[i]) {
			pr_info("qlab-golden: ok registry %s: %u golden cases through qlab\n",
				qcore_disciplines[i]->name, passed[i]);
			(*pass)++;
		} else {
			pr_info("qlab-golden: FAIL registry %s: no golden case passed through qlab\n",
				qcore_disciplines[i]->name);
			fail++;
		}
	}
	return fail;
}

static int __init qlab_golden_init(void)
{
	struct replay *r = kzalloc(sizeof(*r), GFP_KERNEL);
	u32 passed[32] = {};	/* per registry entry: generic cases passed */
	u32 i, j, pass = 0, fail = 0, checks;

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
			for (j = 0; c->params && qcore_disciplines[j] && j < ARRAY_SIZE(passed); j++)
				if (!strcmp(qcore_disciplines[j]->name, c->disc))
					passed[j]++;
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
	checks = pass + fail;
	fail += hand_checks(&pass);
	fail += registry_checks(passed, &pass);
	checks = pass + fail - checks;
	pr_info("qlab-golden: summary cases=%u checks=%u pass=%u fail=%u\n",
		qlab_golden_ncases, checks, pass, fail);
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
