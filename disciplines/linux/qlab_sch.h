/* SPDX-License-Identifier: GPL-2.0 */
/*
 * qlab_sch.h - the Linux adapter of the qlab discipline core (qlab_core.ko).
 *
 * The core decides, this adapter moves packets (disciplines/core/README.md).
 * One generic Qdisc implementation serves every qlab qdisc: the generic
 * `qlab` (sch_qlab.c: any discipline of the core's registry, parameters
 * numbered by the core's table) and the dedicated ones (sch_ncq.c, ...),
 * which only name their disciplines, their netlink attributes and how the
 * core's counters map onto struct tc_qlab_xstats.
 *
 * Per qdisc: one FIFO (qdisc_skb_head) per band with the core's view of
 * it, the configuration as typed values (one per parameter of the
 * discipline's table), the core's params, vars and stats, its generator,
 * and per-band counters.  Each queued skb carries its arrival time and
 * core length in qdisc_skb_cb()->data.
 */
#ifndef QLAB_SCH_H
#define QLAB_SCH_H

#include <linux/netlink.h>
#include <net/netlink.h>
#include <net/pkt_sched.h>
#include <net/sch_generic.h>

#include "qcore.h"
#include "qlab_sched.h"

/* One discipline a dedicated qdisc can run (srd and rd are two of sch_srd). */
struct qlab_variant {
	const char *name;
	const struct qcore_disc_ops *ops;
	u16 attr_base;		/* netlink attribute of ops->params[0] */
	/* The uapi names of the attributes, in order; checked at registration. */
	const char *const *attr_names;
	u32 nattrs;
};

struct qlab_sch;

/*
 * A qlab qdisc: the generic one (variants NULL: TCA_QLAB_* attributes,
 * every discipline of the core's registry) or a dedicated one (its
 * variants and their attributes).
 */
struct qlab_kind {
	struct Qdisc_ops qdisc_ops;		/* id, owner; the rest filled in */
	const struct qlab_variant *variants;
	u32 nvariants;
	u16 attr_pad, attr_seed;
	u16 attr_variant;	/* 0: one variant only */
	const char *variant_name;	/* "variant", "aqm": for messages */
	u16 maxattr;
	/* [maxattr + 1] each, filled by qlab_register() from the core's tables. */
	struct nla_policy *policy;
	struct netlink_range_validation *ranges;
	/* The discipline-specific part of the statistics (may be NULL). */
	void (*fill_xstats)(const struct qlab_sch *q, struct tc_qlab_xstats *xs);
};

struct qlab_band {
	struct qdisc_skb_head q;
	u64 arrivals, marked, sent, purged;
	u64 drops[QCORE_REASON__COUNT];
};

struct qlab_sch {
	const struct qlab_kind *kind;
	const struct qlab_variant *variant;	/* dedicated qdiscs: the one running */
	const struct qcore_disc_ops *ops;
	/* The configuration: values[i] is ops->params[i], defaults filled in. */
	struct qcore_param_value *values;
	void *params, *vars, *stats;	/* sized for ops */
	u32 nbands;
	u8 ignores;		/* qcore_ignores(): inputs not produced (0 instead) */
	u64 seed;
	struct qcore_rng rng;
	/* Head drops not yet reported to the parents (see qlab_dequeue_at). */
	u32 pending_drops, pending_drop_len;
	struct qlab_band band[QCORE_MAX_BANDS];
	/* What the core sees of the bands, kept current (qlab_sch.c). */
	struct qcore_band_view views[QCORE_MAX_BANDS];
	/* The packet being enqueued (under the root lock; see qlab_enqueue). */
	struct qcore_pkt pkt;
};

/* What the adapter keeps per queued skb. */
struct qlab_skb_cb {
	u64 arrival_ns;
	u32 len;		/* the core's len (IP bytes) */
};

static inline struct qlab_skb_cb *qlab_skb_cb(const struct sk_buff *skb)
{
	return (struct qlab_skb_cb *)qdisc_skb_cb(skb)->data;
}

int qlab_register(struct qlab_kind *kind);
/* The Qdisc_ops of a registered qlab qdisc ("qlab", "ncq", ...), or NULL. */
const struct Qdisc_ops *qlab_lookup_ops(const char *id);
void qlab_unregister(struct qlab_kind *kind);

/*
 * The packet path, split where the test module (tests/kunit) needs a seam:
 * Qdisc_ops.enqueue is qlab_classify() + qlab_enqueue_pkt() at
 * ktime_get_ns(), Qdisc_ops.dequeue is qlab_dequeue_at(ktime_get_ns()),
 * except that what the core ignores with this configuration
 * (qcore_ignores()) is 0: no clock read (now and arrival times 0, or the
 * arrival times only), no flow hash.  qlab_classify() always
 * computes the flow hash (qcore_flow_hash() of the 5-tuple, qlab_sched.h).
 */
void qlab_classify(struct sk_buff *skb, struct qcore_pkt *pkt, u64 now_ns);
/* The general path alone (skb_header_pointer), which qlab_classify() must equal. */
void qlab_classify_general(struct sk_buff *skb, struct qcore_pkt *pkt, u64 now_ns);
int qlab_enqueue_pkt(struct sk_buff *skb, struct Qdisc *sch,
		     struct sk_buff **to_free, const struct qcore_pkt *pkt);
struct sk_buff *qlab_dequeue_at(struct Qdisc *sch, u64 now_ns);

#endif /* QLAB_SCH_H */
