// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* rbaqm.c - rate-based AQM per class in the low-jitter WFQ (see rbaqm.h). */
#include "rbaqm.h"
#include "red.h"

#define RBAQM_ONE RED_ONE_Q32
#define RBAQM_PPM 1000000U
#define RBAQM_NS_PER_S 1000000000ULL
#define RBAQM_MAX_LEN_BYTES (1U << 30)	/* 8 len 10^9 stays below 2^64 */
#define RBAQM_EXP_ZERO_FROM 23		/* e^-23 < 2^-33: rounds to 0 in Q0.32 */
#define RBAQM_MAX_RATIO_INT (1ULL << 16)	/* |err| / S cap */
#define RBAQM_EWMA_SHIFT 16		/* capacity EWMA: Q48.16 bytes */

/* round(e^-n * 2^32), n = 0..22 */
static const u64 exp_neg_int_q32[RBAQM_EXP_ZERO_FROM] = {
	4294967296ULL, 1580030169, 581260615, 213833830, 78665070, 28939262,
	10646160, 3916503, 1440801, 530041, 194991, 71733, 26389, 9708, 3571,
	1314, 483, 178, 65, 24, 9, 3, 1,
};

/* round(e^(-2^-k) * 2^32), k = 1..16 */
static const u32 exp_neg_pow2_q32[16] = {
	2605029347U, 3344923893U, 3790295335U, 4034748382U, 4162825044U,
	4228380000U, 4261543595U, 4278222805U, 4286586875U, 4290775039U,
	4292870656U, 4293918848U, 4294443040U, 4294705160U, 4294836226U,
	4294901760U,
};

static const struct qcore_param_desc rbaqm_param_descs[] = {
	{
		.name = "classes", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct rbaqm_params, classes),
		.min = 1, .max = QCORE_MAX_BANDS, .dflt = "4", .unit = "classes",
		.help = "number of classes; band = class = cls, WFQ scans 0 first (rbaqm Table 1: 4)",
	},
	{
		.name = "rate_bps", .kind = QCORE_PARAM_U64,
		.offset = offsetof(struct rbaqm_params, rate_bps),
		.min = 1, .max = 1000000000000ULL, .dflt = "1000000", .unit = "bit/s",
		.help = "link capacity S(t) (rbaqm Scenarios 1-2: 1 Mb/s)",
	},
	{
		.name = "weights_bytes", .kind = QCORE_PARAM_U32_LIST,
		.offset = offsetof(struct rbaqm_params, weights_bytes),
		.min = 1, .max = WFQ_MAX_QUANTUM_BYTES, .dflt = "1001:501:251:126", .unit = "bytes",
		.help = "WFQ quantum W per class (list, or one value for all); rbaqm's 8001:4001:2001:1001 bits in bytes",
	},
	{
		.name = "maxs_bytes", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct rbaqm_params, maxs_bytes),
		.min = 1, .max = WFQ_MAX_MAXS_BYTES, .dflt = "3000", .unit = "bytes",
		.help = "WFQ credit cap MaxS: refills only while a credit is below it (not in rbaqm)",
	},
	{
		.name = "u_ppm", .kind = QCORE_PARAM_U32_LIST,
		.offset = offsetof(struct rbaqm_params, u_ppm),
		.min = 1, .max = 1000000, .dflt = "930000", .unit = "ppm",
		.help = "target utilisation u_i per class in millionths (list, or one value for all) (rbaqm Table 1: 0.93)",
	},
	{
		.name = "k", .kind = QCORE_PARAM_PPM,
		.offset = offsetof(struct rbaqm_params, k_ppm),
		.min = 0, .max = 1000000, .dflt = "0.0005", .unit = "fraction",
		.help = "minimum step of P per arrival (eq. 6.3; value not in rbaqm)",
	},
	{
		.name = "gain", .kind = QCORE_PARAM_PPM,
		.offset = offsetof(struct rbaqm_params, gain_ppm),
		.min = 0, .max = 1000000000, .dflt = "1", .unit = "fraction",
		.help = "step of P per arrival = max(gain * |x_i - u_i c_i| / S, k) (normalisation by S not in rbaqm)",
	},
	{
		.name = "tau_ns", .kind = QCORE_PARAM_U64,
		.offset = offsetof(struct rbaqm_params, tau_ns),
		.min = 1, .max = 1000000000000ULL, .dflt = "40000000", .unit = "ns",
		.help = "time constant of GREEN's arrival-rate estimator (not in rbaqm; one 40 ms RTT of its scenarios)",
	},
	{
		.name = "rate_estimate", .kind = QCORE_PARAM_ENUM,
		.offset = offsetof(struct rbaqm_params, rate_estimate),
		.dflt = "offered", .unit = "choice", .choices = "admitted|offered",
		.help = "x_i counts every arrival (GREEN) or only packets entering the queue (rbaqm §1.3's x; throttles unresponsive sources to u c instead of P -> 1)",
	},
	{
		.name = "capacity_estimator", .kind = QCORE_PARAM_ENUM,
		.offset = offsetof(struct rbaqm_params, capacity_estimator),
		.dflt = "window", .unit = "choice", .choices = "window|ewma",
		.help = "class capacity S_i from the last window_pkts served packets (eq. 2.2) or an EWMA of served bytes",
	},
	{
		.name = "window_pkts", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct rbaqm_params, window_pkts),
		.min = 1, .max = RBAQM_MAX_WINDOW_PKTS, .dflt = "100", .unit = "packets",
		.help = "H, served packets in the capacity window (not in rbaqm)",
	},
	{
		.name = "capacity_weight", .kind = QCORE_PARAM_PPM,
		.offset = offsetof(struct rbaqm_params, capacity_weight_ppm),
		.min = 1, .max = 1000000, .dflt = "0.01", .unit = "fraction",
		.help = "capacity_estimator=ewma: weight of each served packet in the byte EWMAs (~1/window_pkts)",
	},
	{
		.name = "fair_share", .kind = QCORE_PARAM_BOOL,
		.offset = offsetof(struct rbaqm_params, fair_share),
		.min = 0, .max = 1, .dflt = "1", .unit = "bool",
		.help = "bottlenecked classes get c_i = F_i, the W-proportional share of what the others leave (§2.2, Scenario 1A)",
	},
	{
		.name = "ecn", .kind = QCORE_PARAM_BOOL,
		.offset = offsetof(struct rbaqm_params, ecn),
		.min = 0, .max = 1, .dflt = "0", .unit = "bool",
		.help = "CE-mark instead of the probabilistic (aqm) drop; the hard limit still drops",
	},
	{
		.name = "limit_pkts", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct rbaqm_params, limit_pkts),
		.min = 1, .max = 1000000, .dflt = "100", .unit = "packets",
		.help = "per-class hard limit: packets the AQM admits are dropped (overflow) when their class holds this many",
	},
};

void rbaqm_params_init(struct rbaqm_params *p)
{
	static const u32 paper_weights_bytes[] = { 1001, 501, 251, 126 };

	memset(p, 0, sizeof(*p));
	p->classes = 4;
	p->rate_bps = 1000000;
	memcpy(p->weights_bytes, paper_weights_bytes, sizeof(paper_weights_bytes));
	p->maxs_bytes = 3000;
	p->u_ppm[0] = 930000;
	p->k_ppm = 500;
	p->gain_ppm = 1000000;
	p->tau_ns = 40000000;
	p->rate_estimate = RBAQM_RATE_OFFERED;
	p->capacity_estimator = RBAQM_CAPACITY_WINDOW;
	p->window_pkts = 100;
	p->capacity_weight_ppm = 10000;
	p->fair_share = 1;
	p->ecn = 0;
	p->limit_pkts = 100;
}

/* S * part / total (bit/s), 0 when part = 0, S when part >= total. */
static inline u64 rbaqm_share_bps(u64 s_bps, u64 part, u64 total)
{
	if (!part || !total)
		return 0;
	if (part >= total)
		return s_bps;
	return red_mul_q32(s_bps, red_frac_q32(part, total));
}

void rbaqm_vars_init(struct rbaqm_vars *v, const struct rbaqm_params *p)
{
	u64 sum_w = 0;
	u32 i, n = p->classes < QCORE_MAX_BANDS ? p->classes : QCORE_MAX_BANDS;

	memset(v, 0, sizeof(*v));
	wfq_vars_init(&v->wfq);
	for (i = 0; i < QCORE_MAX_BANDS; i++) {
		v->quantum_bytes[i] = wfq_list_at(p->weights_bytes, i);
		v->u_q32[i] = red_ppm_to_q32(wfq_list_at(p->u_ppm, i));
	}
	for (i = 0; i < n; i++)
		sum_w += v->quantum_bytes[i];
	for (i = 0; i < n; i++)
		v->min_bps[i] = rbaqm_share_bps(p->rate_bps, v->quantum_bytes[i], sum_w);
	v->k_q32 = red_ppm_to_q32(p->k_ppm);
	v->gain_q32 = ((u64)(p->gain_ppm / RBAQM_PPM) << 32) +
		      qcore_frac_q32(p->gain_ppm % RBAQM_PPM, RBAQM_PPM);
	v->capacity_w_q32 = red_ppm_to_q32(p->capacity_weight_ppm);
	/* ceil(2^32 / tau); tau = 0 only without check_params. */
	v->tau_recip_q32 = p->tau_ns ? qcore_div64(RBAQM_ONE + p->tau_ns - 1, p->tau_ns) :
				       RBAQM_ONE;
	v->decay_q32 = RBAQM_ONE;	/* = rbaqm_decay_q32(decay_delta_ns = 0, tau) */
}

void rbaqm_stats_init(struct rbaqm_stats *s)
{
	memset(s, 0, sizeof(*s));
}

/* a * b / 2^32 rounded, for a, b <= 2^32 (Q0.32 in u64). */
static u64 rbaqm_mul_round(u64 a, u64 b)
{
	if (a >= RBAQM_ONE)
		return b;
	if (b >= RBAQM_ONE)
		return a;
	return (a * b + (1ULL << 31)) >> 32;
}

u64 rbaqm_exp_neg_q32(u64 z_q32)
{
	u64 n = z_q32 >> 32;
	u32 f = (u32)z_q32;
	u32 bits = f & 0xffff0000U;
	u64 r;
	u32 k = 0;

	if (n >= RBAQM_EXP_ZERO_FROM)
		return 0;
	r = exp_neg_int_q32[n];
	/*
	 * e^-f as the product of e^-2^-(k+1) over the set bits 31 - k among
	 * the top 16 of f, highest first (the rounding depends on the
	 * order) ...  Small z, the common case (arrivals much closer than
	 * tau), has only low ones set: skip the leading zeros a byte, then a
	 * nibble at a time (bits != 0 bounds both loops).
	 */
	if (bits) {
		while (!(bits & 0xff000000U)) {
			bits <<= 8;
			k += 8;
		}
		while (!(bits & 0xf0000000U)) {
			bits <<= 4;
			k += 4;
		}
	}
	for (; bits; bits <<= 1, k++)	/* k < 16: bits has 16 bits */
		if (bits & 0x80000000U)
			r = rbaqm_mul_round(r, exp_neg_pow2_q32[k]);
	/* ... and 1 - rest for the rest < 2^-16 (error < 2^-33). */
	return rbaqm_mul_round(r, RBAQM_ONE - (f & 0xffffU));
}

/*
 * a / b in Q32.32, floor(2^32 a / b), capped at max_int 2^32 (max_int <=
 * 2^31): n 2^32 + frac(a - n b, b) with n = floor(a / b) < max_int, which
 * is the single division floor((a << 32) / b) while a < 2^32 (its top
 * 32 bits are n).
 */
static u64 rbaqm_ratio_q32(u64 a, u64 b, u64 max_int)
{
	u64 n;

	if (a <= 0xffffffffULL) {
		n = qcore_div64(a << 32, b);
		return n < max_int << 32 ? n : max_int << 32;
	}
	n = qcore_div64(a, b);
	if (n >= max_int)
		return max_int << 32;
	return (n << 32) | red_frac_q32(a - n * b, b);
}

u64 rbaqm_decay_q32(u64 delta_ns, u64 tau_ns)
{
	if (delta_ns == 0)
		return RBAQM_ONE;
	if (delta_ns >= RBAQM_EXP_ZERO_FROM * tau_ns)	/* tau_ns <= 10^12 */
		return 0;
	return rbaqm_exp_neg_q32(rbaqm_ratio_q32(delta_ns, tau_ns,
						 RBAQM_EXP_ZERO_FROM));
}

static u64 rbaqm_sat_add(u64 a, u64 b)
{
	return a + b < a ? ~0ULL : a + b;
}

/*
 * rbaqm_decay_q32(delta_ns, tau_ns), remembering the last delta: arrivals
 * at a fixed spacing (constant-rate sources, back-to-back packets from a
 * faster link) repeat it, and then the exp is not evaluated again.
 */
static u64 rbaqm_decay_cached(const struct rbaqm_params *p, struct rbaqm_vars *v,
			      u64 delta_ns)
{
	if (delta_ns != v->decay_delta_ns) {
		v->decay_delta_ns = delta_ns;
		v->decay_q32 = rbaqm_decay_q32(delta_ns, p->tau_ns);
	}
	return v->decay_q32;
}

/* x_j decayed to now: GREEN's estimator read between its arrivals. */
static u64 rbaqm_rate_now(const struct rbaqm_params *p, struct rbaqm_vars *v,
			  u32 j, u64 now_ns)
{
	if (!v->x_bps[j] || now_ns <= v->last_arrival_ns[j])
		return v->x_bps[j];
	return red_mul_q32(v->x_bps[j],
			   rbaqm_decay_cached(p, v, now_ns - v->last_arrival_ns[j]));
}

/* Step 1 of rbaqm.h: x_i once GREEN's estimator has counted len bytes. */
static u64 rbaqm_rate_with(const struct rbaqm_params *p, struct rbaqm_vars *v,
			   u32 i, u32 len, u64 now_ns)
{
	u64 bits = (u64)(len < RBAQM_MAX_LEN_BYTES ? len : RBAQM_MAX_LEN_BYTES) * 8;
	u64 delta = v->seen[i] && now_ns > v->last_arrival_ns[i] ?
		    now_ns - v->last_arrival_ns[i] : 0;
	u64 e;

	if (delta == 0)
		return rbaqm_sat_add(v->x_bps[i],
				     qcore_div64(bits * RBAQM_NS_PER_S, p->tau_ns));
	e = rbaqm_decay_cached(p, v, delta);
	return red_mul_q32(qcore_div64(bits * RBAQM_NS_PER_S, delta), RBAQM_ONE - e) +
	       red_mul_q32(v->x_bps[i], e);
}

static void rbaqm_store_rate(struct rbaqm_vars *v, u32 i, u64 x_bps, u64 now_ns)
{
	v->x_bps[i] = x_bps;
	v->last_arrival_ns[i] = now_ns;
	v->seen[i] = 1;
}

/* S_j: class j's share of recent service (eq. 2.2 or its EWMA). */
static u64 rbaqm_served_bps(const struct rbaqm_params *p,
			    const struct rbaqm_vars *v, u32 j)
{
	if (p->capacity_estimator == RBAQM_CAPACITY_EWMA)
		return rbaqm_share_bps(p->rate_bps, v->ewma_bytes[j],
				       v->ewma_total_bytes);
	return rbaqm_share_bps(p->rate_bps, v->win_bytes[j], v->win_total_bytes);
}

/*
 * max(M_j, S_j), eq. 4.  S_j changes only with service, so the value is
 * kept until the next dequeued(): arrivals in between (every other class's
 * c_j with fair_share) reuse it.
 */
static inline void rbaqm_refresh_basic(const struct rbaqm_params *p,
				       struct rbaqm_vars *v, u32 j)
{
	u64 s_j = rbaqm_served_bps(p, v, j);

	v->basic_bps[j] = s_j > v->min_bps[j] ? s_j : v->min_bps[j];
	v->basic_valid |= 1U << j;
}

static inline u64 rbaqm_basic_capacity_bps(const struct rbaqm_params *p,
					   struct rbaqm_vars *v, u32 j)
{
	if (!(v->basic_valid & (1U << j)))
		rbaqm_refresh_basic(p, v, j);
	return v->basic_bps[j];
}

/*
 * Whether class j (j != the arriving class) is bottlenecked at now, x_j
 * read at now >= c_j; if not, *x_now is that rate.  The same answer as
 * comparing rbaqm_rate_now() with c_j, mostly without its exp:
 *  - x_j < c_j: the decayed rate is below it too (e <= 1), but eq. 5
 *    needs its value, so it is computed;
 *  - otherwise a lower bound of the decayed rate decides when it already
 *    reaches c_j.  For z = delta / tau (Q32.32, as rbaqm_decay_q32 forms
 *    it), e^-z >= 1 - z, and rbaqm_exp_neg_q32(z) is within 18 units
 *    (2^-32) of 2^32 e^-z: the integer-part entry is off by <= 1/2, each
 *    of the <= 16 rounded products by a multiplier within 1/2 of its
 *    exact value adds <= 1 (1/2 table, 1/2 rounding; the running value
 *    stays <= 2^32), the last one 1/2 for rounding and 1/2 for 1 - rest
 *    in place of e^-rest (rest < 2^-16).  With z_hi = delta ceil(2^32 /
 *    tau) >= z (no division; delta < 2^32 keeps it in a u64),
 *	rbaqm_decay_q32 >= 2^32 - z_hi - RBAQM_EXP_SLACK,
 *    red_mul_q32 is monotonic in its factor, and x_j times that bound
 *    reaching c_j implies x_j read at now does (tests/test_disc_aqm.c
 *    checks the bound).
 */
static bool rbaqm_other_bottlenecked(const struct rbaqm_params *p,
				     struct rbaqm_vars *v, u32 j,
				     u64 c_j, u64 now_ns, u64 *x_now)
{
	u64 x = v->x_bps[j], delta = now_ns - v->last_arrival_ns[j], z_hi;

	if (x >= c_j && now_ns > v->last_arrival_ns[j] &&
	    delta <= 0xffffffffULL) {
		z_hi = delta * v->tau_recip_q32;
		if (z_hi < RBAQM_ONE - RBAQM_EXP_SLACK &&
		    red_mul_q32(x, RBAQM_ONE - RBAQM_EXP_SLACK - z_hi) >= c_j)
			return true;
	}
	*x_now = rbaqm_rate_now(p, v, j, now_ns);
	return *x_now >= c_j;
}

/*
 * F_i (eq. 5) for class i, bottlenecked (x_i >= c_i).  Out of line: the
 * common arrival (x_i < c_i) then pays neither this loop nor the
 * registers it needs.
 */
static qcore_noinline u64 rbaqm_fair_share_bps(const struct rbaqm_params *p,
					       struct rbaqm_vars *v, u32 i,
					       u64 now_ns)
{
	u64 sum_w_bottlenecked, sum_x_free = 0, x_j;
	u32 j, n = p->classes < QCORE_MAX_BANDS ? p->classes : QCORE_MAX_BANDS;

	/* Class i itself is bottlenecked (x_i >= c_i). */
	sum_w_bottlenecked = v->quantum_bytes[i];
	for (j = 0; j < n; j++) {
		if (j == i)
			continue;
		if (rbaqm_other_bottlenecked(p, v, j, rbaqm_basic_capacity_bps(p, v, j),
					     now_ns, &x_j))
			sum_w_bottlenecked += v->quantum_bytes[j];
		else
			sum_x_free = rbaqm_sat_add(sum_x_free, x_j);
	}
	return rbaqm_share_bps(p->rate_bps > sum_x_free ? p->rate_bps - sum_x_free : 0,
			       v->quantum_bytes[i], sum_w_bottlenecked);
}

static inline u64 rbaqm_capacity(const struct rbaqm_params *p,
				 struct rbaqm_vars *v, u32 i, u64 x_i_bps,
				 u64 now_ns)
{
	u64 c_i = rbaqm_basic_capacity_bps(p, v, i);

	if (!p->fair_share || x_i_bps < c_i)
		return c_i;
	return rbaqm_fair_share_bps(p, v, i, now_ns);
}

u64 rbaqm_capacity_bps(const struct rbaqm_params *p, struct rbaqm_vars *v,
		       u32 i, u64 x_i_bps, u64 now_ns)
{
	return rbaqm_capacity(p, v, i, x_i_bps, now_ns);
}

/* (a * b) >> 32 for a <= 2^48, b < 2^42 (no overflow below 2^59). */
static u64 rbaqm_mul_q32_wide(u64 a, u64 b)
{
	u64 ah = a >> 32, al = a & 0xffffffffULL;
	u64 bh = b >> 32, bl = b & 0xffffffffULL;

	return ((ah * bh) << 32) + ah * bl + al * bh + ((al * bl) >> 32);
}

/* ΔP = min(1, max(gain |err| / S, k)) in Q0.32 (u64). */
static u64 rbaqm_step_q32(const struct rbaqm_params *p,
			  const struct rbaqm_vars *v, u64 err_bps)
{
	u64 ratio = rbaqm_ratio_q32(err_bps, p->rate_bps, RBAQM_MAX_RATIO_INT);
	u64 step;

	step = rbaqm_mul_q32_wide(ratio, v->gain_q32);
	if (step < v->k_q32)
		step = v->k_q32;
	return step < RBAQM_ONE ? step : RBAQM_ONE;
}

static u32 rbaqm_nbands(const void *params)
{
	const struct rbaqm_params *p = params;

	return p->classes;
}

static int rbaqm_check_params(const void *params, char *err, size_t errlen)
{
	const struct rbaqm_params *p = params;

	if (qcore_check_param_ranges(rbaqm_param_descs, ARRAY_SIZE(rbaqm_param_descs),
				     params, err, errlen) ||
	    wfq_check_list("weights_bytes", p->weights_bytes, p->classes, err, errlen) ||
	    wfq_check_list("u_ppm", p->u_ppm, p->classes, err, errlen))
		return -1;
	return 0;
}

static int rbaqm_check_pkt(const void *params, const struct qcore_pkt *pkt,
			   char *err, size_t errlen)
{
	const struct rbaqm_params *p = params;

	return qcore_check_cls(pkt->cls, p->classes, "classes", err, errlen);
}

static void rbaqm_reset(const void *params, void *vars)
{
	rbaqm_vars_init(vars, params);
}

static struct qcore_decision rbaqm_enqueue(const void *params, void *vars,
					   void *stats,
					   const struct qcore_pkt *pkt,
					   const struct qcore_band_view *bands,
					   struct qcore_rng *rng)
{
	const struct rbaqm_params *p = params;
	struct rbaqm_vars *v = vars;
	struct rbaqm_stats *st = stats;
	struct qcore_decision d = { QCORE_QUEUE, 0, QCORE_REASON_NONE };
	u32 i = pkt->cls < p->classes ? pkt->cls : p->classes - 1;
	u64 target, step, prob, x;
	bool hit;

	d.band = (u8)i;
	x = rbaqm_rate_with(p, v, i, pkt->len, pkt->now_ns);
	if (p->rate_estimate == RBAQM_RATE_OFFERED)
		rbaqm_store_rate(v, i, x, pkt->now_ns);
	v->c_bps[i] = rbaqm_capacity(p, v, i, x, pkt->now_ns);
	target = red_mul_q32(v->c_bps[i], v->u_q32[i]);
	/* A step cannot move P beyond the bound it already sits at. */
	if (x >= target) {	/* U(0) = +1 (eq. 6.2) */
		if (v->p_q32[i] < RBAQM_ONE) {
			step = rbaqm_step_q32(p, v, x - target);
			prob = v->p_q32[i] + step;
			v->p_q32[i] = prob < RBAQM_ONE ? prob : RBAQM_ONE;
		}
	} else if (v->p_q32[i]) {
		step = rbaqm_step_q32(p, v, target - x);
		v->p_q32[i] = v->p_q32[i] > step ? v->p_q32[i] - step : 0;
	}

	prob = v->p_q32[i];
	if (prob >= RBAQM_ONE)
		hit = true;
	else if (prob)		/* only a genuinely random decision draws */
		hit = qcore_rng_u32(rng) < prob;
	else
		hit = false;
	if (hit) {
		if (p->ecn) {
			d.verdict = QCORE_MARK;
		} else {
			d.verdict = QCORE_DROP;
			d.reason = QCORE_REASON_AQM;
		}
	}
	if (d.verdict != QCORE_DROP && bands[i].backlog_pkts >= p->limit_pkts) {
		d.verdict = QCORE_DROP;
		d.reason = QCORE_REASON_OVERFLOW;
	}
	if (d.verdict == QCORE_DROP) {
		st->dropped[i]++;
		st->drops[d.reason]++;
		return d;
	}
	if (p->rate_estimate == RBAQM_RATE_ADMITTED)
		rbaqm_store_rate(v, i, x, pkt->now_ns);
	if (d.verdict == QCORE_MARK)
		st->marked[i]++;
	else
		st->queued[i]++;
	return d;
}

static struct qcore_deq rbaqm_dequeue(const void *params, void *vars,
				      const struct qcore_band_view *bands,
				      u64 now_ns)
{
	const struct rbaqm_params *p = params;
	struct rbaqm_vars *v = vars;

	(void)now_ns;
	return wfq_select(&v->wfq, v->quantum_bytes, p->classes, p->maxs_bytes,
			  bands);
}

/* The window of the last H served packets (eq. 2.2): O(1) per packet. */
static void rbaqm_window_add(const struct rbaqm_params *p, struct rbaqm_vars *v,
			     u32 band, u32 len)
{
	u32 h = p->window_pkts < RBAQM_MAX_WINDOW_PKTS ? p->window_pkts :
							  RBAQM_MAX_WINDOW_PKTS;
	u32 at = v->ring_head;

	if (at >= h)		/* window_pkts changed without a reset */
		at = 0;
	if (v->ring_count >= h) {	/* full: the oldest packet leaves */
		v->win_bytes[v->ring_cls[at]] -= v->ring_len[at];
		v->win_total_bytes -= v->ring_len[at];
	} else {
		v->ring_count++;
	}
	v->ring_len[at] = len;
	v->ring_cls[at] = (u8)band;
	v->win_bytes[band] += len;
	v->win_total_bytes += len;
	v->ring_head = at + 1 < h ? at + 1 : 0;
}

static void rbaqm_ewma_add(const struct rbaqm_params *p, struct rbaqm_vars *v,
			   u32 band, u32 len)
{
	u64 sample = (u64)len << RBAQM_EWMA_SHIFT;
	u32 j, n = p->classes < QCORE_MAX_BANDS ? p->classes : QCORE_MAX_BANDS;

	for (j = 0; j < n; j++)
		v->ewma_bytes[j] = red_ewma(v->ewma_bytes[j], j == band ? sample : 0,
					    v->capacity_w_q32);
	v->ewma_total_bytes = red_ewma(v->ewma_total_bytes, sample,
				       v->capacity_w_q32);
}

static void rbaqm_dequeued(const void *params, void *vars, void *stats,
			   u32 band, u32 len, u64 now_ns,
			   const struct qcore_band_view *bands_after)
{
	const struct rbaqm_params *p = params;
	struct rbaqm_vars *v = vars;

	(void)stats;
	(void)now_ns;
	(void)bands_after;
	if (band >= p->classes || band >= QCORE_MAX_BANDS)
		return;
	wfq_charge(&v->wfq, band, len);
	if (p->capacity_estimator == RBAQM_CAPACITY_EWMA)
		rbaqm_ewma_add(p, v, band, len);
	else
		rbaqm_window_add(p, v, band, len);
	v->basic_valid = 0;	/* every S_j moved */
}

const struct qcore_disc_ops rbaqm_ops = {
	.name = "rbaqm",
	.summary = "rate-based (GREEN-style) AQM per class in the low-jitter WFQ, with class capacity and fair share (rbaqm)",
	.params_size = sizeof(struct rbaqm_params),
	.vars_size = sizeof(struct rbaqm_vars),
	.stats_size = sizeof(struct rbaqm_stats),
	.params = rbaqm_param_descs,
	.nparams = ARRAY_SIZE(rbaqm_param_descs),
	.nbands = rbaqm_nbands,
	.check_params = rbaqm_check_params,
	.reset = rbaqm_reset,
	.enqueue = rbaqm_enqueue,
	.dequeue = rbaqm_dequeue,
	.dequeued = rbaqm_dequeued,
	.check_pkt = rbaqm_check_pkt,
	.bands_help = "bands: `classes` (band = class = cls, must be < classes); low-jitter WFQ scans class 0 first; prec is accepted (0..255) and ignored",
	.ignores = QCORE_IGNORES_FLOW_HASH,
};
