// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* srd.c - RD and S-RD (see srd.h for the exact rules and bounds). */
#include "srd.h"

#define SRD_PPM 1000000ULL
#define SRD_MAX_FLOWS 100000

/* ---- portable 128-bit arithmetic (no __int128 in portable kernel code) -- */

struct srd_u128 {
	u64 hi, lo;
};

static struct srd_u128 srd_mul64(u64 a, u64 b)
{
	u64 a_lo = (u32)a, a_hi = a >> 32, b_lo = (u32)b, b_hi = b >> 32;
	u64 p0 = a_lo * b_lo, p1 = a_lo * b_hi, p2 = a_hi * b_lo;
	u64 mid = (p0 >> 32) + (u32)p1 + (u32)p2;
	struct srd_u128 r;

	r.lo = (mid << 32) | (u32)p0;
	r.hi = a_hi * b_hi + (p1 >> 32) + (p2 >> 32) + (mid >> 32);
	return r;
}

/* x * b; the callers' operand bounds (srd.h) keep the product < 2^128. */
static struct srd_u128 srd_mul128(struct srd_u128 x, u64 b)
{
	struct srd_u128 r = srd_mul64(x.lo, b);

	r.hi += x.hi * b;
	return r;
}

static bool srd_le128(struct srd_u128 a, struct srd_u128 b)
{
	return a.hi != b.hi ? a.hi < b.hi : a.lo <= b.lo;
}

/* a - b for b <= a. */
static struct srd_u128 srd_sub128(struct srd_u128 a, struct srd_u128 b)
{
	struct srd_u128 r;

	r.lo = a.lo - b.lo;
	r.hi = a.hi - b.hi - (a.lo < b.lo);
	return r;
}

/*
 * floor(n / d) for d > 0, by binary long division (a fixed 64 steps).
 * The quotient must fit in 64 bits (n.hi < d); otherwise it saturates.
 */
static u64 srd_div128(struct srd_u128 n, u64 d)
{
	u64 r = n.hi, q = 0, top;
	int i;

	if (n.hi >= d)
		return ~(u64)0;
	for (i = 63; i >= 0; i--) {
		top = r >> 63;
		r = (r << 1) | ((n.lo >> i) & 1);
		q <<= 1;
		/* The true remainder is 2^64 * top + r < 2d. */
		if (top || r >= d) {
			r -= d;
			q |= 1;
		}
	}
	return q;
}

/* ---- parameters -------------------------------------------------------- */

static const struct qcore_param_desc srd_param_descs[] = {
	{
		.name = "rate_bps", .kind = QCORE_PARAM_U64,
		.offset = offsetof(struct srd_params, rate_bps),
		.min = 1000, .max = 100000000000ULL, .dflt = "100000000", .unit = "bit/s",
		.help = "link capacity C (srd §4: 100 Mbit/s); the adapter's link must drain at this rate",
	},
	{
		.name = "d_ns", .kind = QCORE_PARAM_U64,
		.offset = offsetof(struct srd_params, d_ns),
		.min = 1, .max = 10000000000ULL, .dflt = "50000000", .unit = "ns",
		.help = "delay bound d of the D queue (srd §5-6: 50 ms)",
	},
	{
		.name = "k", .kind = QCORE_PARAM_PPM,
		.offset = offsetof(struct srd_params, k_ppm),
		.min = 1, .max = 1000000000, .dflt = "2", .unit = "ratio",
		.help = "per-flow rate ratio R:D, exact decimal with at most 6 places (not stated in srd; our default 2)",
	},
	{
		.name = "buffer_bytes", .kind = QCORE_PARAM_U64,
		.offset = offsetof(struct srd_params, buffer_bytes),
		.min = 0, .max = 1000000000000ULL, .dflt = "0", .unit = "bytes",
		.help = "total buffer B; 0 = rate_bps * 250 ms / 8 (srd §4: B = B_max = C * 250 ms)",
	},
	{
		.name = "bmax_bytes", .kind = QCORE_PARAM_U64,
		.offset = offsetof(struct srd_params, bmax_bytes),
		.min = 0, .max = 1000000000000ULL, .dflt = "0", .unit = "bytes",
		.help = "R buffer cap B_max; 0 = rate_bps * 250 ms / 8 (srd §4)",
	},
	{
		.name = "sd_max_bytes", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct srd_params, sd_max_bytes),
		.min = 1, .max = 65535, .dflt = "1500", .unit = "bytes",
		.help = "S_D_max, largest D packet (IP bytes), used in the S-RD sizing only",
	},
	{
		.name = "sr_max_bytes", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct srd_params, sr_max_bytes),
		.min = 1, .max = 65535, .dflt = "1500", .unit = "bytes",
		.help = "S_R_max, largest R packet (IP bytes), used in the S-RD sizing only",
	},
	{
		.name = "n_d", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct srd_params, n_d),
		.min = 0, .max = SRD_MAX_FLOWS, .dflt = "0", .unit = "flows",
		.help = "D flow count n_D; 0 = estimated per period with a time-stamp vector over flow hashes",
	},
	{
		.name = "n_r", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct srd_params, n_r),
		.min = 0, .max = SRD_MAX_FLOWS, .dflt = "0", .unit = "flows",
		.help = "R flow count n_R; 0 = estimated per period with a time-stamp vector over flow hashes",
	},
	{
		.name = "period_ns", .kind = QCORE_PARAM_U64,
		.offset = offsetof(struct srd_params, period_ns),
		.min = 1, .max = 100000000000ULL, .dflt = "100000000", .unit = "ns",
		.help = "L_D/L_R reset and flow-count period; keep it > d_ns + one packet time for the S-RD bound (see srd.h)",
	},
};

void srd_params_init(struct srd_params *p)
{
	memset(p, 0, sizeof(*p));
	p->rate_bps = 100000000ULL;
	p->d_ns = 50000000ULL;
	p->k_ppm = 2000000;
	p->buffer_bytes = 0;
	p->bmax_bytes = 0;
	p->sd_max_bytes = 1500;
	p->sr_max_bytes = 1500;
	p->n_d = 0;
	p->n_r = 0;
	p->period_ns = 100000000ULL;
}

void srd_vars_init(struct srd_vars *v)
{
	memset(v, 0, sizeof(*v));
	v->n_d = 1;
	v->n_r = 1;
}

void srd_stats_init(struct srd_stats *s)
{
	memset(s, 0, sizeof(*s));
}

/* ---- sizing ------------------------------------------------------------ */

/* rate * 250 ms / 8 bytes = rate / 32. */
static u64 srd_auto_bytes(const struct srd_params *p, u64 value)
{
	return value ? value : p->rate_bps / 32;
}

u64 srd_size_d_bytes(const struct srd_params *p, bool stateless, u32 n_d, u32 n_r)
{
	u64 den = (u64)n_d * SRD_PPM + (u64)p->k_ppm * n_r;
	struct srd_u128 num = srd_mul128(srd_mul64(p->d_ns, n_d), p->rate_bps);

	if (stateless) {
		/* w n_D C = 16000 (S_D k_ppm n_R + 10^6 S_R n_D), see srd.h. */
		u64 adj = (u64)p->sd_max_bytes * p->k_ppm * n_r +
			  (u64)p->sr_max_bytes * n_d * SRD_PPM;
		struct srd_u128 w = srd_mul64(adj, 16000);

		if (srd_le128(num, w))
			return 0;
		num = srd_sub128(num, w);
	}
	return srd_div128(num, den * 8000);
}

static void srd_size(const struct srd_params *p, bool stateless, u32 n_d,
		     u32 n_r, u64 *b_d, u64 *b_r)
{
	u64 b = srd_auto_bytes(p, p->buffer_bytes);
	u64 bmax = srd_auto_bytes(p, p->bmax_bytes);

	*b_d = srd_size_d_bytes(p, stateless, n_d, n_r);
	if (*b_d >= b) {
		*b_d = b;
		*b_r = 0;
	} else {
		*b_r = b - *b_d < bmax ? b - *b_d : bmax;
	}
}

static u32 srd_nbands(const void *params)
{
	(void)params;
	return SRD_NBANDS;
}

static int srd_check_common(const void *params, bool stateless, char *err,
			    size_t errlen)
{
	const struct srd_params *p = params;
	u32 n_d = p->n_d ? p->n_d : 1, n_r = p->n_r ? p->n_r : 1;
	u64 b_d, b_r;

	if (qcore_check_param_ranges(srd_param_descs, ARRAY_SIZE(srd_param_descs),
				     params, err, errlen))
		return -1;
	srd_size(p, stateless, n_d, n_r, &b_d, &b_r);
	if (b_r == 0) {
		snprintf(err, errlen,
			 "buffer_bytes: B_R = min(B_max, B - B_D) must be > 0, but B = %llu bytes and B_D = %llu bytes (n_D = %u, n_R = %u)",
			 (unsigned long long)srd_auto_bytes(p, p->buffer_bytes),
			 (unsigned long long)b_d, n_d, n_r);
		return -1;
	}
	return 0;
}

static int srd_check_params(const void *params, char *err, size_t errlen)
{
	return srd_check_common(params, true, err, errlen);
}

static int rd_check_params(const void *params, char *err, size_t errlen)
{
	return srd_check_common(params, false, err, errlen);
}

static int srd_check_pkt(const void *params, const struct qcore_pkt *pkt,
			 char *err, size_t errlen)
{
	(void)params;
	if (pkt->cls > 1) {
		snprintf(err, errlen, "cls: must be 0 (D) or 1 (R), got %u", pkt->cls);
		return -1;
	}
	return 0;
}

/*
 * Counts in use and everything derived from them: the scheduler's weights
 * and the buffer sizes.  Only here (reset, and a period whose estimate
 * changed), so the packet path does no sizing arithmetic.
 */
static void srd_set_counts(const struct srd_params *p, struct srd_vars *v,
			   bool stateless, u32 n_d, u32 n_r)
{
	v->n_d = n_d;
	v->n_r = n_r;
	v->k_n_r = (u64)p->k_ppm * n_r;
	v->n_d_ppm = (u64)n_d * SRD_PPM;
	srd_size(p, stateless, n_d, n_r, &v->b_d_bytes, &v->b_r_bytes);
}

static void srd_reset_common(const void *params, void *vars, bool stateless)
{
	const struct srd_params *p = params;
	struct srd_vars *v = vars;

	srd_vars_init(v);
	v->estimated[SRD_BAND_D] = !p->n_d;
	v->estimated[SRD_BAND_R] = !p->n_r;
	srd_set_counts(p, v, stateless, p->n_d ? p->n_d : 1, p->n_r ? p->n_r : 1);
}

static void srd_reset(const void *params, void *vars)
{
	srd_reset_common(params, vars, true);
}

static void rd_reset(const void *params, void *vars)
{
	srd_reset_common(params, vars, false);
}

/* ---- packet path ------------------------------------------------------- */

/*
 * The drop and the RD head drop leave the common paths through a tail call:
 * a decision whose reason is not NONE costs gcc a longer packing of the
 * returned struct, which would otherwise be paid by every admission.
 */
static qcore_noinline struct qcore_decision srd_drop_overflow(struct srd_stats *st,
							      u32 band)
{
	st->drops[band][QCORE_REASON_OVERFLOW]++;
	return (struct qcore_decision){ QCORE_DROP, (u8)band, QCORE_REASON_OVERFLOW };
}

static qcore_noinline struct qcore_deq rd_drop_head(struct srd_vars *v)
{
	v->head_drop_pending = 1;
	return (struct qcore_deq){ QCORE_DEQ_DROP_HEAD, SRD_BAND_D, QCORE_REASON_DELAY };
}

/* Stamp the flow's slot when the count is estimated; does the packet fit? */
static inline bool srd_fits(struct srd_vars *v, const struct qcore_pkt *pkt,
			    const struct qcore_band_view *bands, u32 band,
			    u64 limit)
{
	if (v->estimated[band])
		v->seen_ns[band][pkt->flow_hash % SRD_FLOW_SLOTS] = pkt->now_ns + 1;
	return bands[band].backlog_bytes + pkt->len <= limit;
}

/*
 * band is a constant in each srd_fits() so that every per-band field is at
 * a fixed offset; the drop is returned directly (a jump), and one return
 * for both bands keeps gcc's packing of the struct short.
 */
static struct qcore_decision srd_enqueue(const void *params, void *vars,
					 void *stats,
					 const struct qcore_pkt *pkt,
					 const struct qcore_band_view *bands,
					 struct qcore_rng *rng)
{
	struct srd_vars *v = vars;
	struct srd_stats *st = stats;
	u32 band;
	bool fits;

	(void)params;
	(void)rng;
	if (pkt->cls == 0) {
		band = SRD_BAND_D;
		fits = srd_fits(v, pkt, bands, SRD_BAND_D, v->b_d_bytes);
	} else {	/* any cls != 0 is R */
		band = SRD_BAND_R;
		fits = srd_fits(v, pkt, bands, SRD_BAND_R, v->b_r_bytes);
	}
	if (!fits)
		return srd_drop_overflow(st, band);
	st->queued[band]++;
	return (struct qcore_decision){ QCORE_QUEUE, (u8)band, QCORE_REASON_NONE };
}

/* Slots of band seen at or after since_ns (stored t + 1 > since_ns). */
static u32 srd_count_flows(const struct srd_vars *v, u32 band, u64 since_ns)
{
	u32 i, n = 0;

	for (i = 0; i < SRD_FLOW_SLOTS; i++)
		n += v->seen_ns[band][i] > since_ns;
	return n ? n : 1;
}

/*
 * Start a new period (the caller found one due): zero the counters,
 * re-estimate.
 */
static void srd_new_period(const struct srd_params *p, struct srd_vars *v,
			   u64 now_ns, bool stateless)
{
	/* Before the first period period_start_ns is 0: count every slot ever seen. */
	u64 since = v->period_start_ns;
	u32 n_d, n_r;

	v->started = 1;
	v->cur_period_ns = p->period_ns;
	v->period_start_ns = now_ns;
	v->l_d_bytes = 0;
	v->l_r_bytes = 0;
	if (p->n_d && p->n_r)
		return;
	n_d = p->n_d ? p->n_d : srd_count_flows(v, SRD_BAND_D, since);
	n_r = p->n_r ? p->n_r : srd_count_flows(v, SRD_BAND_R, since);
	if (n_d != v->n_d || n_r != v->n_r)
		srd_set_counts(p, v, stateless, n_d, n_r);
}

/*
 * Serve D iff L_D k n_R <= n_D 10^6 L_R (srd §2.1, alpha = n_D/(k n_R)),
 * with k_n_r = k_ppm n_R and n_d_ppm = n_D 10^6 precomputed (< 2^64 by the
 * bounds in srd.h).  Each side is one 64 x 64 -> 128-bit product: a single
 * multiply where the compiler has a 128-bit type (gcc and clang on 64-bit
 * targets, the Linux kernel included), else the portable helpers above;
 * both are exact, so the choice is the same.  -DQCORE_NO_INT128 forces
 * the portable path (check-nofloat compiles it).
 */
#if defined(__SIZEOF_INT128__) && !defined(QCORE_NO_INT128)
static inline bool srd_d_turn(const struct srd_vars *v)
{
	return (unsigned __int128)v->l_d_bytes * v->k_n_r <=
	       (unsigned __int128)v->l_r_bytes * v->n_d_ppm;
}
#else
static inline bool srd_d_turn(const struct srd_vars *v)
{
	return srd_le128(srd_mul64(v->l_d_bytes, v->k_n_r),
			 srd_mul64(v->l_r_bytes, v->n_d_ppm));
}
#endif

/* RD: the D head has waited longer than d (checked before the choice). */
static inline bool rd_head_late(const struct srd_params *p,
				const struct qcore_band_view *bands, u64 now_ns)
{
	return bands[SRD_BAND_D].backlog_pkts &&
	       now_ns - bands[SRD_BAND_D].head_arrival_ns > p->d_ns;
}

/* The choice within a period, after RD's head drop: L_D vs alpha L_R. */
static inline struct qcore_deq srd_choose(const struct srd_vars *v,
					  const struct qcore_band_view *bands)
{
	bool has_d = bands[SRD_BAND_D].backlog_pkts != 0;
	bool has_r = bands[SRD_BAND_R].backlog_pkts != 0;

	if (!has_d && !has_r)
		return (struct qcore_deq){ QCORE_DEQ_EMPTY, SRD_BAND_D, QCORE_REASON_NONE };
	if (!has_d || (has_r && !srd_d_turn(v)))
		return (struct qcore_deq){ QCORE_DEQ_SERVE, SRD_BAND_R, QCORE_REASON_NONE };
	return (struct qcore_deq){ QCORE_DEQ_SERVE, SRD_BAND_D, QCORE_REASON_NONE };
}

/* A dequeue that starts a period: rare, so out of line. */
static qcore_noinline struct qcore_deq srd_dequeue_new_period(const struct srd_params *p,
							      struct srd_vars *v,
							      const struct qcore_band_view *bands,
							      u64 now_ns, bool stateless)
{
	srd_new_period(p, v, now_ns, stateless);
	if (!stateless && rd_head_late(p, bands, now_ns))
		return rd_drop_head(v);
	return srd_choose(v, bands);
}

/* Due, or the first dequeue ever (cur_period_ns is 0 until then). */
static inline bool srd_period_due(const struct srd_vars *v, u64 now_ns)
{
	return now_ns - v->period_start_ns >= v->cur_period_ns;
}

/*
 * Order (srd.h): a due period reset, then RD's head drop, then the choice;
 * an empty D band is never late, so the head drop may come before the
 * empty check.  The rare paths are tail calls (returned directly, never
 * from an inlined helper, which would stop gcc from making them jumps), so
 * the common path needs no stack frame.
 */
static struct qcore_deq srd_dequeue(const void *params, void *vars,
				    const struct qcore_band_view *bands,
				    u64 now_ns)
{
	if (srd_period_due(vars, now_ns))
		return srd_dequeue_new_period(params, vars, bands, now_ns, true);
	return srd_choose(vars, bands);
}

static struct qcore_deq rd_dequeue(const void *params, void *vars,
				   const struct qcore_band_view *bands,
				   u64 now_ns)
{
	struct srd_vars *v = vars;

	v->head_drop_pending = 0;	/* S-RD never sets it */
	if (srd_period_due(v, now_ns))
		return srd_dequeue_new_period(params, v, bands, now_ns, false);
	if (rd_head_late(params, bands, now_ns))
		return rd_drop_head(v);
	return srd_choose(v, bands);
}

/* band is a compile-time constant at both call sites; l_bytes is its L_D or L_R. */
static inline void srd_account(struct srd_vars *v, struct srd_stats *st,
			       u32 band, u32 len, u64 *l_bytes)
{
	if (v->head_drop_pending) {
		/* RD head drop: counted, but not service (L_D unchanged). */
		v->head_drop_pending = 0;
		st->drops[band][QCORE_REASON_DELAY]++;
		return;
	}
	*l_bytes += len;
	st->sent_pkts[band]++;
	st->sent_bytes[band] += len;
}

static void srd_dequeued(const void *params, void *vars, void *stats,
			 u32 band, u32 len, u64 now_ns,
			 const struct qcore_band_view *bands_after)
{
	struct srd_vars *v = vars;

	(void)params;
	(void)now_ns;
	(void)bands_after;
	if (band == SRD_BAND_D)
		srd_account(v, stats, SRD_BAND_D, len, &v->l_d_bytes);
	else if (band == SRD_BAND_R)
		srd_account(v, stats, SRD_BAND_R, len, &v->l_r_bytes);
	/* any other band: ignored */
}

/*
 * With both flow counts fixed nothing reads the flow hash, nor (S-RD) an
 * arrival time: srd_fits() stamps seen_ns only for an estimated count, and
 * only RD reads the head's arrival time (rd_head_late).
 */
static u8 srd_ignores_for(const void *params)
{
	const struct srd_params *p = params;

	return p->n_d && p->n_r ? QCORE_IGNORES_FLOW_HASH | QCORE_IGNORES_ARRIVAL_TIME : 0;
}

static u8 rd_ignores_for(const void *params)
{
	const struct srd_params *p = params;

	return p->n_d && p->n_r ? QCORE_IGNORES_FLOW_HASH : 0;
}

const struct qcore_disc_ops srd_ops = {
	.name = "srd",
	.summary = "Stateless RD: D/R queues, D buffer sized for delay bound d, L_D <= alpha L_R scheduling",
	.params_size = sizeof(struct srd_params),
	.vars_size = sizeof(struct srd_vars),
	.stats_size = sizeof(struct srd_stats),
	.params = srd_param_descs,
	.nparams = ARRAY_SIZE(srd_param_descs),
	.nbands = srd_nbands,
	.check_params = srd_check_params,
	.reset = srd_reset,
	.enqueue = srd_enqueue,
	.dequeue = srd_dequeue,
	.dequeued = srd_dequeued,
	.check_pkt = srd_check_pkt,
	.bands_help = "bands: 2 (cls 0 -> band 0 D, cls 1 -> band 1 R; cls must be 0 or 1); prec is accepted (0..255) and ignored; flow is the flow hash for estimated counts",
	.ignores_for = srd_ignores_for,
};

const struct qcore_disc_ops rd_ops = {
	.name = "rd",
	.summary = "RD: D/R queues, D head packets older than d dropped at dequeue, L_D <= alpha L_R scheduling",
	.params_size = sizeof(struct srd_params),
	.vars_size = sizeof(struct srd_vars),
	.stats_size = sizeof(struct srd_stats),
	.params = srd_param_descs,
	.nparams = ARRAY_SIZE(srd_param_descs),
	.nbands = srd_nbands,
	.check_params = rd_check_params,
	.reset = rd_reset,
	.enqueue = srd_enqueue,
	.dequeue = rd_dequeue,
	.dequeued = srd_dequeued,
	.check_pkt = srd_check_pkt,
	.bands_help = "bands: 2 (cls 0 -> band 0 D, cls 1 -> band 1 R; cls must be 0 or 1); prec is accepted (0..255) and ignored; flow is the flow hash for estimated counts",
	.ignores_for = rd_ignores_for,
};
