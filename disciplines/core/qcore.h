/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * qcore.h - the contract between a queue discipline and the adapter that
 * owns the packets (ns-3 QueueDisc, ns-2 Queue, Linux Qdisc, qlab-emu,
 * qcore-replay).
 *
 * The core decides; the adapter moves packets.  On enqueue the core sees the
 * packet's metadata and a read-only view of every band, and answers "queue in
 * band b", "mark" or "drop (reason)".  On dequeue it answers "serve band b",
 * "drop the head of band b first" (RD) or "empty".  After the adapter has
 * actually sent a packet it reports it with dequeued(), so disciplines whose
 * state depends on service (CQ-AQM, S-RD, WFQ credits) can update.
 *
 * Rules (docs: ../../docs/disciplines.md, design: DISCIPLINES.md):
 *   - no allocation, no clock, no globals: `now_ns` and the generator are
 *     passed in;
 *   - no floating point: fractions are ppm (u32, 10^-6) or Q0.32;
 *   - every loop in the packet path has a fixed bound;
 *   - params (configuration) / vars (state) / stats (counters) are separate;
 *     reset clears vars only.
 */
#ifndef QCORE_H
#define QCORE_H

#include "qcore_compat.h"

#ifdef __cplusplus
extern "C" {
#endif

#define QCORE_MAX_BANDS 8

enum qcore_verdict {
	QCORE_QUEUE = 0,	/* queue the packet in decision.band */
	QCORE_MARK = 1,		/* queue it with an ECN CE mark */
	QCORE_DROP = 2,		/* drop it; decision.reason says why */
};

/* One shared list of drop reasons; names are the replay/trace strings. */
enum qcore_reason {
	QCORE_REASON_NONE = 0,
	QCORE_REASON_OVERFLOW,		/* buffer full */
	QCORE_REASON_AQM,		/* early drop by an AQM */
	QCORE_REASON_PRECEDENCE_LOCAL,	/* CQ-AQM: own queue above threshold */
	QCORE_REASON_PRECEDENCE_CROSS,	/* CQ-AQM: low queue above non-local threshold */
	QCORE_REASON_DELAY,		/* RD: head packet waited longer than d */
	QCORE_REASON__COUNT
};
extern const char *const qcore_reason_names[QCORE_REASON__COUNT];

/* Packet flags the adapter may set. */
#define QCORE_PKT_PURE_ACK 0x01	/* TCP segment without payload */
#define QCORE_PKT_ECT	0x02	/* ECN-capable transport (ECT(0), ECT(1) or CE) */

struct qcore_pkt {
	u64 now_ns;	/* arrival time */
	u32 len;	/* IP total length in bytes, headers included, no L2 */
	u32 flow_hash;	/* any stable per-flow hash */
	u8 cls;		/* class / QoS queue index from the adapter's classifier */
	u8 prec;	/* precedence level (1 = high) */
	u8 flags;	/* QCORE_PKT_* */
};

/* Read-only view of one band, filled by the adapter before each call. */
struct qcore_band_view {
	u32 backlog_pkts;
	u32 head_len;		/* 0 when empty */
	u64 backlog_bytes;
	u64 head_arrival_ns;	/* arrival time of the head packet */
};

struct qcore_decision {
	u8 verdict;	/* enum qcore_verdict */
	u8 band;	/* band the packet was classified into (also when dropped) */
	u8 reason;	/* enum qcore_reason, NONE unless dropped */
};

enum qcore_deq_action {
	QCORE_DEQ_EMPTY = 0,	/* nothing to send */
	QCORE_DEQ_SERVE = 1,	/* send the head of .band */
	QCORE_DEQ_DROP_HEAD = 2,/* drop the head of .band (reason), then ask again */
};

struct qcore_deq {
	u8 action;	/* enum qcore_deq_action */
	u8 band;
	u8 reason;
};

/*
 * The core's generator: SplitMix64, advanced only when a probabilistic
 * decision is made.  A drop with probability P (Q0.32) happens when
 * qcore_rng_u32() < P.
 */
struct qcore_rng {
	u64 state;
};

static inline void qcore_rng_seed(struct qcore_rng *rng, u64 seed)
{
	rng->state = seed;
}

static inline u64 qcore_rng_u64(struct qcore_rng *rng)
{
	u64 z = (rng->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline u32 qcore_rng_u32(struct qcore_rng *rng)
{
	return (u32)(qcore_rng_u64(rng) >> 32);
}

/*
 * floor(num * 2^32 / den) for num < den, i.e. the Q0.32 value of num/den,
 * exact for any u64 operands.  Binary long division, one quotient bit per
 * step (32 steps), because num << 32 overflows u64 and the kernel has no
 * portable 128-bit type.  The remainder r stays < den, so testing
 * r >= den - r instead of 2r >= den never overflows.
 */
static inline u32 qcore_frac_q32(u64 num, u64 den)
{
	u64 r = num;
	u32 q = 0;
	int i;

	for (i = 0; i < 32; i++) {
		q <<= 1;
		if (r >= den - r) {
			r -= den - r;
			q |= 1;
		} else {
			r <<= 1;
		}
	}
	return q;
}

/*
 * What every adapter computes the same way from a packet's headers, so that
 * every backend feeds the core the same inputs for the same packet.
 */

/*
 * The IPv4 ToS byte (or IPv6 traffic class): class = the DSCP class
 * selector, bits 7..5; precedence = the AF drop precedence, bits 4..3; ECT
 * from the ECN field, bits 1..0.  qlab's plans set tos = cls << 5 | prec << 3.
 */
static inline void qcore_pkt_set_tos(struct qcore_pkt *pkt, u8 tos)
{
	pkt->cls = tos >> 5;
	pkt->prec = (tos >> 3) & 3;
	if (tos & 3)
		pkt->flags |= QCORE_PKT_ECT;
}

/* SplitMix64's finalizer: every input bit reaches every output bit. */
static inline u64 qcore_mix64(u64 z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * The flow hash (qcore_pkt.flow_hash) of an IPv4 5-tuple, in host byte
 * order; ports only for TCP and UDP (0 for other protocols and non-first
 * fragments).  IPv6: each address folded to 32 bits by XOR of its four
 * words, proto the first next header (no extension header is walked).  A
 * packet that is not IP hashes to 0.  Every adapter computes this one, so a
 * discipline that counts flows by hash (S-RD) sees the same flows in every
 * backend for the same packets.  Only computed for disciplines that read it
 * (QCORE_IGNORES_FLOW_HASH).
 */
static inline u32 qcore_flow_hash(u32 saddr, u32 daddr, u16 sport, u16 dport, u8 proto)
{
	u64 z = qcore_mix64((u64)saddr << 32 | daddr);

	z = qcore_mix64(z ^ ((u64)sport << 32 | (u64)dport << 16 | proto));
	return (u32)(z >> 32);
}

/*
 * An AQM's mark on a packet that cannot carry a CE mark (not ECT) becomes
 * its drop (as ns-3's RED and Linux's sch_red do); every adapter applies
 * this to the enqueue decision before acting on it.
 */
static inline struct qcore_decision qcore_mark_fallback(struct qcore_decision d,
							const struct qcore_pkt *pkt)
{
	if (d.verdict == QCORE_MARK && !(pkt->flags & QCORE_PKT_ECT)) {
		d.verdict = QCORE_DROP;
		d.reason = QCORE_REASON_AQM;
	}
	return d;
}

/* Total backlog over the first nbands views. */
static inline u32 qcore_total_pkts(const struct qcore_band_view *b, u32 nbands)
{
	u32 i, n = 0;

	for (i = 0; i < nbands && i < QCORE_MAX_BANDS; i++)
		n += b[i].backlog_pkts;
	return n;
}

/* Non-preemptive strict priority: serve the lowest-numbered non-empty band. */
static inline struct qcore_deq qcore_deq_strict(const struct qcore_band_view *b,
						u32 nbands)
{
	struct qcore_deq d = { QCORE_DEQ_EMPTY, 0, QCORE_REASON_NONE };
	u32 i;

	for (i = 0; i < nbands && i < QCORE_MAX_BANDS; i++) {
		if (b[i].backlog_pkts) {
			d.action = QCORE_DEQ_SERVE;
			d.band = (u8)i;
			break;
		}
	}
	return d;
}

/*
 * Parameters: each discipline describes its parameters once in a table; the
 * generic parser (qcore_params.c, userspace only) sets them from "name=value"
 * strings and every adapter reuses it.  The kernel adapter fills the same
 * struct from netlink and calls the same check_params().
 */
enum qcore_param_kind {
	QCORE_PARAM_U32,	/* unsigned integer in [min, max] */
	QCORE_PARAM_U64,	/* unsigned integer in [min, max] */
	QCORE_PARAM_PPM,	/* exact decimal with <= 6 places, stored x10^6 as u32, in [min, max] ppm */
	QCORE_PARAM_ENUM,	/* one of choices ("a|b|c"), stored as u8 index */
	QCORE_PARAM_BOOL,	/* 0 or 1, stored as u8 */
	QCORE_PARAM_U32_LIST,	/* comma-free list "a:b:c" of u32, stored as u32[QCORE_MAX_BANDS] */
};

struct qcore_param_desc {
	const char *name;	/* exact replay/scenario name */
	enum qcore_param_kind kind;
	u32 offset;		/* offsetof() in the discipline's params struct */
	u64 min, max;		/* range (ppm for PPM) */
	const char *dflt;	/* default, as text */
	const char *unit;	/* "packets", "bytes", "ns", "fraction", ... */
	const char *choices;	/* ENUM: "journal|conf-literal" */
	const char *help;
};

#define QCORE_ERRLEN 256	/* fits every qcore_params_set() message */

struct qcore_disc_ops;

/*
 * One parameter's value, typed as its table entry says: what an adapter
 * hands qcore_configure().  Text in the core's syntax becomes one through
 * qcore_param_parse(); a netlink attribute or an ns-3 attribute is one
 * already.
 */
struct qcore_param_value {
	u32 index;			/* the parameter: ops->params[index] */
	u64 value;			/* U32, U64, PPM (in ppm), ENUM (choice index), BOOL */
	u32 list[QCORE_MAX_BANDS];	/* U32_LIST; unused slots 0 */
};

/*
 * The configure sequence of every adapter: the table's defaults, then each
 * value (range-checked against its table entry), then the discipline's
 * check_params(), then its band count (1..QCORE_MAX_BANDS).  params is
 * ops->params_size bytes; on error -1 with a message naming the parameter.
 */
int qcore_configure(const struct qcore_disc_ops *ops, void *params,
		    const struct qcore_param_value *values, u32 nvalues,
		    u32 *nbands, char *err, size_t errlen);

/*
 * Parse one value in the core's text syntax (the one parser of every
 * adapter, kernel included): U32/U64 decimal digits; PPM an exact decimal
 * with at most 6 places ("0.05", "1"; not "1e-3", "-0.1"); ENUM a choice's
 * name; BOOL 0 or 1; U32_LIST "a:b:c".  Sets v->value / v->list (not index).
 */
int qcore_param_parse(const struct qcore_param_desc *d, const char *text,
		      struct qcore_param_value *v, char *err, size_t errlen);

/* Index of the parameter `name` in ops->params, or -1 (message lists the valid names). */
int qcore_param_index(const struct qcore_disc_ops *ops, const char *name,
		      char *err, size_t errlen);

/* Zero *params, then set every parameter from its table default. */
int qcore_params_defaults(const struct qcore_disc_ops *ops, void *params,
			  char *err, size_t errlen);

/*
 * Set one parameter from text.  Unknown name: the message lists the valid
 * names.  Bad value: the message names the parameter, the expected form and
 * the range or choices.  Forms: U32/U64 decimal digits; PPM an exact decimal
 * with at most 6 places ("0.05", "1", "0.000001"; not "1e-3", "-0.1",
 * "0.0000001"); ENUM one of the choices; BOOL 0 or 1; U32_LIST "a:b:c".
 * Cross-parameter checks are left to ops->check_params().
 */
int qcore_params_set(const struct qcore_disc_ops *ops, void *params,
		     const char *name, const char *value,
		     char *err, size_t errlen);

/*
 * Write parameter `name`'s value as text that qcore_params_set() accepts
 * (e.g. "0.05", "journal").  Returns 0, or -1 for an unknown name or when
 * out is too small.
 */
int qcore_params_format(const struct qcore_disc_ops *ops, const void *params,
			const char *name, char *out, size_t outlen);

/* The table entry for `name`, or NULL. */
const struct qcore_param_desc *qcore_params_find(const struct qcore_disc_ops *ops,
						 const char *name);

/* "an integer between 1 and 1000000" etc.: the form a parameter takes. */
void qcore_param_describe(const struct qcore_param_desc *d, char *buf, size_t len);

/* Store a typed value into a params struct (no checks; qcore_configure checks). */
void qcore_param_store(const struct qcore_param_desc *d, void *params,
		       const struct qcore_param_value *v);

/*
 * Range check of every parameter against its table entry (min/max, enum
 * choices, bool), with a message naming the parameter, e.g.
 * "thresh: must be between 0 and 1, got 1.5".  Disciplines call it first
 * in check_params(), then check what relates parameters to each other.
 */
int qcore_check_param_ranges(const struct qcore_param_desc *descs, u32 n,
			     const void *params, char *err, size_t errlen);
/*
 * The class check every multi-band discipline's check_pkt makes: cls must
 * name one of `limit` bands (`what` names the parameter, e.g. "bands").
 */
int qcore_check_cls(u32 cls, u32 limit, const char *what, char *err, size_t errlen);

/* A ppm value as an exact decimal ("0.05", "1"); returns snprintf's result. */
int qcore_fmt_ppm(char *buf, size_t len, u32 ppm);

/*
 * A discipline, as adapters see it.  All state lives in memory the adapter
 * provides (params_size, vars_size, stats_size bytes).
 */
struct qcore_disc_ops {
	const char *name;
	const char *summary;
	u32 params_size, vars_size, stats_size;
	const struct qcore_param_desc *params;
	u32 nparams;

	/* Number of bands for these params (<= QCORE_MAX_BANDS). */
	u32 (*nbands)(const void *params);
	/* Every semantic check; returns 0 or -1 with a message in err. */
	int (*check_params)(const void *params, char *err, size_t errlen);
	/* Clear state (vars) for these params. */
	void (*reset)(const void *params, void *vars);
	struct qcore_decision (*enqueue)(const void *params, void *vars, void *stats,
					 const struct qcore_pkt *pkt,
					 const struct qcore_band_view *bands,
					 struct qcore_rng *rng);
	struct qcore_deq (*dequeue)(const void *params, void *vars,
				    const struct qcore_band_view *bands, u64 now_ns);
	/* The adapter sent the head of `band` (len bytes) or dropped it (head drop). */
	void (*dequeued)(const void *params, void *vars, void *stats,
			 u32 band, u32 len, u64 now_ns,
			 const struct qcore_band_view *bands_after);

	/*
	 * Optional (NULL: every cls/prec in 0..255 is accepted and ignored).
	 * Rejects packet metadata these params cannot classify, e.g. prio's
	 * cls >= bands; adapters call it before enqueue (replay: exit 2).
	 * enqueue() itself stays memory-safe for any input.
	 */
	int (*check_pkt)(const void *params, const struct qcore_pkt *pkt,
			 char *err, size_t errlen);
	/* One line for --help: how cls/prec map to bands, service order. */
	const char *bands_help;
	/*
	 * Inputs this discipline never reads (QCORE_IGNORES_*), whatever its
	 * params: an adapter may skip producing them and pass 0 instead
	 * (the Linux qdisc then reads no clock or computes no flow hash).
	 * 0, the default, claims nothing: every input is produced.  Adapters
	 * that always fill everything (ns-3, the replay) may ignore it.
	 * tests/test_core.c replays every golden vector with the ignored
	 * inputs zeroed and scrambled (and dequeued() skipped) and requires
	 * identical decisions, vars and stats.
	 */
	u8 ignores;
	/*
	 * Optional (NULL: nothing more): what these params add to `ignores`
	 * (QCORE_IGNORES_*), e.g. S-RD with both flow counts fixed never reads
	 * the flow hash or an arrival time.  Adapters take qcore_ignores() once
	 * per configuration; tests/test_core.c proves it per golden case.
	 */
	u8 (*ignores_for)(const void *params);
};

/* Every input these params never read: ops->ignores | ops->ignores_for(params). */
static inline u8 qcore_ignores(const struct qcore_disc_ops *ops, const void *params)
{
	return ops->ignores | (ops->ignores_for ? ops->ignores_for(params) : 0);
}

/*
 * Time: pkt->now_ns, the now_ns of dequeue() and dequeued(), and the
 * bands' head_arrival_ns (the adapter's arrival stamps).
 */
#define QCORE_IGNORES_TIME	0x01
/* pkt->flow_hash. */
#define QCORE_IGNORES_FLOW_HASH	0x02
/* The dequeued() report: it changes nothing (an adapter may skip the call). */
#define QCORE_IGNORES_DEQUEUED	0x04
/*
 * Arrival times only: pkt->now_ns and the bands' head_arrival_ns (the
 * now_ns of dequeue() and dequeued() is still read).  QCORE_IGNORES_TIME
 * includes it.
 */
#define QCORE_IGNORES_ARRIVAL_TIME 0x08
#define QCORE_IGNORES__ALL	0x0f

/* Registry (userspace adapters): NULL-terminated list of every discipline. */
extern const struct qcore_disc_ops *const qcore_disciplines[];
const struct qcore_disc_ops *qcore_find(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* QCORE_H */
