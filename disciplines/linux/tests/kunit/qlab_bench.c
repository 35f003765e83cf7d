// SPDX-License-Identifier: GPL-2.0
/*
 * qlab_bench.c - test-only module: the per-packet cost of whatever qdisc
 * is the root of a device, measured at insmod time by calling its own
 * enqueue and dequeue (no device, no stack around it).
 *
 *	tc qdisc replace dev d0 root ncq
 *	insmod qlab_bench.ko dev=d0 label=ncq [rounds=2000] [batch=64]
 *	-> "qlab-bench: ncq pkts=128000 drops=0 ns=... ns_per_pkt=..."
 *
 * Each round enqueues `batch` prepared skbs (Ethernet + IPv4 + UDP, sizes
 * 64..1500 bytes, ToS 0x00/0x08/0x28 in turn, so every class and band of
 * the qlab qdiscs is used) and dequeues until empty.  The skbs are reused:
 * dropped ones are taken back from to_free.  Run under QEMU -icount the
 * guest clock counts instructions, so the result is deterministic.
 */
#include <linux/module.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <linux/etherdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <net/inet_ecn.h>
#include <net/net_namespace.h>
#include <net/sch_generic.h>

#include "qlab_sch.h"

static char *dev = "d0";
static char *label = "qdisc";
static int rounds = 2000;
static int batch = 64;
module_param(dev, charp, 0444);
module_param(label, charp, 0444);
module_param(rounds, int, 0444);
module_param(batch, int, 0444);

static struct sk_buff *make_skb(struct net_device *nd, u32 len, u8 tos, u32 i)
{
	struct sk_buff *skb = alloc_skb(len + ETH_HLEN + 64, GFP_KERNEL);
	struct iphdr *iph;

	if (!skb)
		return NULL;
	skb_reserve(skb, 64);
	skb_put_zero(skb, len);
	skb_reset_network_header(skb);
	iph = ip_hdr(skb);
	iph->version = 4;
	iph->ihl = 5;
	iph->tos = tos;
	iph->tot_len = htons(len);
	iph->ttl = 64;
	iph->protocol = IPPROTO_UDP;
	iph->saddr = htonl(0x0a000001);
	iph->daddr = htonl(0x0a000002 + (i % 4));
	iph->check = ip_fast_csum((u8 *)iph, iph->ihl);
	skb_set_transport_header(skb, sizeof(*iph));
	skb->protocol = htons(ETH_P_IP);
	skb_push(skb, ETH_HLEN);
	skb_reset_mac_header(skb);
	eth_hdr(skb)->h_proto = htons(ETH_P_IP);
	skb->dev = nd;
	qdisc_skb_cb(skb)->pkt_len = skb->len;
	return skb;
}

static int __init qlab_bench_init(void)
{
	static const u32 lens[] = { 64, 1500, 576, 1500, 40, 1500, 200, 1000 };
	static const u8 toses[] = { 0x00, 0x08, 0x28 };
	struct sk_buff **skbs;
	struct net_device *nd;
	struct Qdisc *q;
	u64 t0, t1, pkts = 0, drops = 0;
	int i, r, ret = 0;

	if (batch < 1 || batch > 1024 || rounds < 1)
		return -EINVAL;
	skbs = kcalloc(batch, sizeof(*skbs), GFP_KERNEL);
	if (!skbs)
		return -ENOMEM;
	rtnl_lock();
	nd = __dev_get_by_name(&init_net, dev);
	q = nd ? rtnl_dereference(nd->qdisc) : NULL;
	if (!q || !q->enqueue) {
		pr_err("qlab-bench: %s has no root qdisc with an enqueue\n", dev);
		ret = -ENODEV;
		goto out;
	}
	for (i = 0; i < batch; i++) {
		skbs[i] = make_skb(nd, lens[i % ARRAY_SIZE(lens)], toses[i % ARRAY_SIZE(toses)], i);
		if (!skbs[i]) {
			ret = -ENOMEM;
			goto out;
		}
	}
	if (!strcmp(label, "parts")) {	/* where an adapter's time goes */
		struct qcore_pkt pkt;
		u64 sum = 0;

		t0 = ktime_get_ns();
		for (i = 0; i < 10000; i++)
			sum += ktime_get_ns();
		t1 = ktime_get_ns();
		pr_info("qlab-bench: part ktime_get_ns %llu ns\n", div64_u64(t1 - t0, 10000));
		t0 = ktime_get_ns();
		for (i = 0; i < 10000; i++) {
			qlab_classify(skbs[i % batch], &pkt, 0);
			sum += pkt.len;
		}
		t1 = ktime_get_ns();
		pr_info("qlab-bench: part qlab_classify %llu ns (%llu)\n", div64_u64(t1 - t0, 10000), sum & 1);
		t0 = ktime_get_ns();
		for (r = 0; r < 100; r++) {
			struct sk_buff *to_free = NULL;

			spin_lock_bh(qdisc_lock(q));
			for (i = 0; i < batch; i++)
				qlab_enqueue_pkt(skbs[i], q, &to_free, &pkt);
			while (qlab_dequeue_at(q, 0))
				;
			spin_unlock_bh(qdisc_lock(q));
		}
		t1 = ktime_get_ns();
		pr_info("qlab-bench: part enqueue_pkt+dequeue_at %llu ns\n",
			div64_u64(t1 - t0, 100 * batch));
		{
			/* The core alone: its three calls per packet, views as the adapter keeps them. */
			struct qlab_sch *qs = qdisc_priv(q);
			struct qcore_band_view v[QCORE_MAX_BANDS] = {};
			struct qcore_decision d;
			struct qcore_deq dq;

			t0 = ktime_get_ns();
			for (r = 0; r < 100; r++) {
				for (i = 0; i < batch; i++) {
					d = qs->ops->enqueue(qs->params, qs->vars, qs->stats, &pkt, v, &qs->rng);
					v[d.band].backlog_pkts++;
				}
				for (i = 0; i < batch; i++) {
					dq = qs->ops->dequeue(qs->params, qs->vars, v, 0);
					v[dq.band].backlog_pkts--;
					qs->ops->dequeued(qs->params, qs->vars, qs->stats, dq.band, pkt.len, 0, v);
				}
			}
			t1 = ktime_get_ns();
			pr_info("qlab-bench: part core enqueue+dequeue+dequeued %llu ns\n",
				div64_u64(t1 - t0, 100 * batch));
		}
		goto out;
	}
	t0 = ktime_get_ns();
	for (r = 0; r < rounds; r++) {
		struct sk_buff *to_free = NULL, *skb;

		spin_lock_bh(qdisc_lock(q));
		for (i = 0; i < batch; i++) {
			skbs[i]->next = NULL;
			q->enqueue(skbs[i], q, &to_free);
		}
		while ((skb = q->dequeue(q)))
			;
		spin_unlock_bh(qdisc_lock(q));
		for (skb = to_free; skb; skb = skb->next)
			drops++;
		pkts += batch;
		if (q->q.qlen) {
			pr_err("qlab-bench: %s kept %u packets queued\n", label, q->q.qlen);
			ret = -EIO;
			goto out;
		}
	}
	t1 = ktime_get_ns();
	pr_info("qlab-bench: %s qdisc=%s pkts=%llu drops=%llu ns=%llu ns_per_pkt=%llu.%02llu\n",
		label, q->ops->id, pkts, drops, t1 - t0, div64_u64(t1 - t0, pkts),
		div64_u64((t1 - t0) * 100, pkts) % 100);
out:
	rtnl_unlock();
	for (i = 0; i < batch; i++)
		kfree_skb(skbs[i]);
	kfree(skbs);
	return ret;
}

static void __exit qlab_bench_exit(void)
{
}

module_init(qlab_bench_init);
module_exit(qlab_bench_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("qlab: per-packet cost of a root qdisc (test only)");
