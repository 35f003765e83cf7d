// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* cqaqm.c - Cross-Queue AQM (see cqaqm.h for the exact rules). */
#include "cqaqm.h"

#define CQAQM_MAX_PKTS 1000000
/* Above any u32 occupancy: a rule that never switches on. */
#define CQAQM_NEVER (1ULL << 32)

static const struct qcore_param_desc cqaqm_param_descs[] = {
	{
		.name = "b_high", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct cqaqm_params, b_high_pkts),
		.min = 1, .max = CQAQM_MAX_PKTS, .dflt = "50", .unit = "packets",
		.help = "high queue (q=1, band 0) size B_high; our split of the paper's 750-packet buffer",
	},
	{
		.name = "b_low", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct cqaqm_params, b_low_pkts),
		.min = 1, .max = CQAQM_MAX_PKTS, .dflt = "700", .unit = "packets",
		.help = "low queue (q=0, band 1) size B_low; our split of the paper's 750-packet buffer",
	},
	{
		.name = "t_high_local", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct cqaqm_params, t_high_local_pkts),
		.min = 0, .max = CQAQM_MAX_PKTS, .dflt = "7", .unit = "packets",
		.help = "p=0 arrivals to the high queue are dropped at occ_high >= this (<= b_high; paper 7)",
	},
	{
		.name = "t_low_local", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct cqaqm_params, t_low_local_pkts),
		.min = 0, .max = CQAQM_MAX_PKTS, .dflt = "500", .unit = "packets",
		.help = "p=0 arrivals to the low queue are dropped at occ_low >= this; also clears the cross rule below it when hysteresis=0 (paper 500)",
	},
	{
		.name = "t_low_nonlocal", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct cqaqm_params, t_low_nonlocal_pkts),
		.min = 0, .max = CQAQM_MAX_PKTS, .dflt = "650", .unit = "packets",
		.help = "occ_low >= this makes the high queue drop p=0 arrivals (t_low_local <= this <= b_low; = b_low disables; paper 650)",
	},
	{
		.name = "scheduler", .kind = QCORE_PARAM_ENUM,
		.offset = offsetof(struct cqaqm_params, scheduler),
		.dflt = "strict", .unit = "choice", .choices = "strict|wrr|drr",
		.help = "strict: high queue first (paper); wrr: weights packets per turn; drr: Linux sch_drr with quantum_bytes",
	},
	{
		.name = "weights", .kind = QCORE_PARAM_U32_LIST,
		.offset = offsetof(struct cqaqm_params, weights_pkts),
		.min = 1, .max = 1000000, .dflt = "1:1", .unit = "packets",
		.help = "wrr only: packets per turn, high:low (one value: both)",
	},
	{
		.name = "quantum_bytes", .kind = QCORE_PARAM_U32_LIST,
		.offset = offsetof(struct cqaqm_params, quantum_bytes),
		.min = 1, .max = 1000000, .dflt = "1500", .unit = "bytes",
		.help = "drr only: quantum added per turn, high:low (one value: both)",
	},
	{
		.name = "hysteresis", .kind = QCORE_PARAM_BOOL,
		.offset = offsetof(struct cqaqm_params, hysteresis),
		.min = 0, .max = 1, .dflt = "0", .unit = "bool",
		.help = "1: separate off-thresholds t_*_off against thrashing (paper footnote 1)",
	},
	{
		.name = "t_low_off", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct cqaqm_params, t_low_off_pkts),
		.min = 0, .max = CQAQM_MAX_PKTS, .dflt = "450", .unit = "packets",
		.help = "hysteresis=1: the cross rule clears when occ_low < this (<= t_low_nonlocal)",
	},
	{
		.name = "t_high_local_off", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct cqaqm_params, t_high_local_off_pkts),
		.min = 0, .max = CQAQM_MAX_PKTS, .dflt = "5", .unit = "packets",
		.help = "hysteresis=1: the high local rule clears when occ_high < this (<= t_high_local)",
	},
	{
		.name = "t_low_local_off", .kind = QCORE_PARAM_U32,
		.offset = offsetof(struct cqaqm_params, t_low_local_off_pkts),
		.min = 0, .max = CQAQM_MAX_PKTS, .dflt = "450", .unit = "packets",
		.help = "hysteresis=1: the low local rule clears when occ_low < this (<= t_low_local)",
	},
};

void cqaqm_params_init(struct cqaqm_params *p)
{
	memset(p, 0, sizeof(*p));
	p->b_high_pkts = 50;
	p->b_low_pkts = 700;
	p->t_high_local_pkts = 7;
	p->t_low_local_pkts = 500;
	p->t_low_nonlocal_pkts = 650;
	p->t_low_off_pkts = 450;
	p->t_high_local_off_pkts = 5;
	p->t_low_local_off_pkts = 450;
	p->weights_pkts[0] = 1;
	p->weights_pkts[1] = 1;
	p->quantum_bytes[0] = 1500;
	p->scheduler = CQAQM_SCHED_STRICT;
	p->hysteresis = 0;
}

void cqaqm_vars_init(struct cqaqm_vars *v)
{
	memset(v, 0, sizeof(*v));
}

void cqaqm_stats_init(struct cqaqm_stats *s)
{
	memset(s, 0, sizeof(*s));
}

/* A "high:low" list value; a single value applies to both bands. */
static u32 cqaqm_list_get(const u32 *list, u32 band)
{
	return band && list[1] ? list[1] : list[0];
}

static u32 cqaqm_nbands(const void *params)
{
	(void)params;
	return CQAQM_NBANDS;
}

static int cqaqm_check_list(const char *name, const u32 *list, char *err,
			    size_t errlen)
{
	u32 i;

	for (i = 2; i < QCORE_MAX_BANDS; i++) {
		if (list[i]) {
			snprintf(err, errlen,
				 "%s: expected one value or two (high:low), got %u or more",
				 name, i + 1);
			return -1;
		}
	}
	if (!list[0]) {
		snprintf(err, errlen, "%s: must be at least 1", name);
		return -1;
	}
	return 0;
}

static int cqaqm_check_params(const void *params, char *err, size_t errlen)
{
	const struct cqaqm_params *p = params;

	if (qcore_check_param_ranges(cqaqm_param_descs,
				     ARRAY_SIZE(cqaqm_param_descs),
				     params, err, errlen))
		return -1;
	if (p->t_high_local_pkts > p->b_high_pkts) {
		snprintf(err, errlen, "t_high_local: must be <= b_high (%u), got %u",
			 p->b_high_pkts, p->t_high_local_pkts);
		return -1;
	}
	if (p->t_low_local_pkts > p->t_low_nonlocal_pkts) {
		snprintf(err, errlen, "t_low_local: must be <= t_low_nonlocal (%u), got %u",
			 p->t_low_nonlocal_pkts, p->t_low_local_pkts);
		return -1;
	}
	if (p->t_low_nonlocal_pkts > p->b_low_pkts) {
		snprintf(err, errlen, "t_low_nonlocal: must be <= b_low (%u), got %u",
			 p->b_low_pkts, p->t_low_nonlocal_pkts);
		return -1;
	}
	if (cqaqm_check_list("weights", p->weights_pkts, err, errlen) ||
	    cqaqm_check_list("quantum_bytes", p->quantum_bytes, err, errlen))
		return -1;
	if (!p->hysteresis)
		return 0;
	if (p->t_low_off_pkts > p->t_low_nonlocal_pkts) {
		snprintf(err, errlen, "t_low_off: must be <= t_low_nonlocal (%u) with hysteresis=1, got %u",
			 p->t_low_nonlocal_pkts, p->t_low_off_pkts);
		return -1;
	}
	if (p->t_high_local_off_pkts > p->t_high_local_pkts) {
		snprintf(err, errlen, "t_high_local_off: must be <= t_high_local (%u) with hysteresis=1, got %u",
			 p->t_high_local_pkts, p->t_high_local_off_pkts);
		return -1;
	}
	if (p->t_low_local_off_pkts > p->t_low_local_pkts) {
		snprintf(err, errlen, "t_low_local_off: must be <= t_low_local (%u) with hysteresis=1, got %u",
			 p->t_low_local_pkts, p->t_low_local_off_pkts);
		return -1;
	}
	return 0;
}

static int cqaqm_check_pkt(const void *params, const struct qcore_pkt *pkt,
			   char *err, size_t errlen)
{
	(void)params;
	if (pkt->cls > 1) {
		snprintf(err, errlen, "cls: must be 0 (low queue) or 1 (high queue), got %u",
			 pkt->cls);
		return -1;
	}
	if (pkt->prec > 1) {
		snprintf(err, errlen, "prec: must be 0 (low) or 1 (high precedence), got %u",
			 pkt->prec);
		return -1;
	}
	return 0;
}

static void cqaqm_reset(const void *params, void *vars)
{
	const struct cqaqm_params *p = params;
	struct cqaqm_vars *v = vars;

	cqaqm_vars_init(v);
	/* t_low_nonlocal = b_low disables the cross rule (the paper's identity). */
	v->nonlocal_on_pkts = p->t_low_nonlocal_pkts < p->b_low_pkts ?
			      p->t_low_nonlocal_pkts : CQAQM_NEVER;
	v->nonlocal_off_pkts = p->hysteresis ? p->t_low_off_pkts : p->t_low_local_pkts;
	/* Always true after check_params() (t_low_local <= t_low_nonlocal). */
	v->plain = !p->hysteresis && p->scheduler == CQAQM_SCHED_STRICT &&
		   v->nonlocal_off_pkts <= v->nonlocal_on_pkts;
	v->wrr_band = CQAQM_BAND_HIGH;
	v->wrr_left_pkts = cqaqm_list_get(p->weights_pkts, CQAQM_BAND_HIGH);
}

/* nonlocal_active from occ_low (see cqaqm.h), thresholds precomputed at reset. */
static inline void cqaqm_nonlocal(struct cqaqm_vars *v, struct cqaqm_stats *st,
				  u32 occ_low)
{
	if (occ_low >= v->nonlocal_on_pkts) {
		if (!v->nonlocal_active)
			st->nonlocal_on++;
		v->nonlocal_active = 1;
	} else if (occ_low < v->nonlocal_off_pkts) {
		v->nonlocal_active = 0;
	}
}

/* hysteresis=1: the local rules' flags. */
static void cqaqm_local_flags(const struct cqaqm_params *p, struct cqaqm_vars *v,
			      u32 occ_high, u32 occ_low)
{
	if (occ_high >= p->t_high_local_pkts)
		v->high_local_active = 1;
	else if (occ_high < p->t_high_local_off_pkts)
		v->high_local_active = 0;
	if (occ_low >= p->t_low_local_pkts)
		v->low_local_active = 1;
	else if (occ_low < p->t_low_local_off_pkts)
		v->low_local_active = 0;
}

/*
 * The flags as a function of the occupancy trajectory (see cqaqm.h).
 * general = false (the caller knows hysteresis is 0) compiles the
 * hysteresis flags away; the functions below take it for the same reason.
 */
static inline void cqaqm_update(const struct cqaqm_params *p, struct cqaqm_vars *v,
				struct cqaqm_stats *st, u32 occ_high, u32 occ_low,
				bool general)
{
	cqaqm_nonlocal(v, st, occ_low);
	if (general && p->hysteresis)
		cqaqm_local_flags(p, v, occ_high, occ_low);
}

static inline bool cqaqm_local(const struct cqaqm_params *p,
			       const struct cqaqm_vars *v, u32 band, u32 occ,
			       bool general)
{
	if (band == CQAQM_BAND_HIGH)
		return general && p->hysteresis ? v->high_local_active
						: occ >= p->t_high_local_pkts;
	return general && p->hysteresis ? v->low_local_active
					: occ >= p->t_low_local_pkts;
}

static bool cqaqm_drr_listed(const struct cqaqm_vars *v, u32 band)
{
	u32 i;

	for (i = 0; i < v->drr_nactive && i < CQAQM_NBANDS; i++)
		if (v->drr_active[i] == band)
			return true;
	return false;
}

/* sch_drr: a class that becomes backlogged joins the tail with deficit = quantum. */
static void cqaqm_drr_activate(const struct cqaqm_params *p,
			       struct cqaqm_vars *v, u32 band)
{
	if (v->drr_nactive >= CQAQM_NBANDS || cqaqm_drr_listed(v, band))
		return;
	v->drr_active[v->drr_nactive++] = (u8)band;
	v->drr_deficit_bytes[band] = cqaqm_list_get(p->quantum_bytes, band);
}

static void cqaqm_drr_deactivate(struct cqaqm_vars *v, u32 band)
{
	if (v->drr_nactive == 2 && v->drr_active[0] == band) {
		v->drr_active[0] = v->drr_active[1];
		v->drr_nactive = 1;
	} else if (v->drr_nactive && v->drr_active[v->drr_nactive - 1] == band) {
		v->drr_nactive--;
	}
}

/*
 * Why an arrival to band (a compile-time constant at each call site) with
 * occupancy occ is refused, or QCORE_REASON_NONE: the rules of cqaqm.h in
 * their order.
 */
static inline u32 cqaqm_refusal(const struct cqaqm_params *p,
				const struct cqaqm_vars *v, u32 band, u32 occ,
				bool low_prec, bool general)
{
	u32 limit = band == CQAQM_BAND_HIGH ? p->b_high_pkts : p->b_low_pkts;

	if (occ >= limit)
		return QCORE_REASON_OVERFLOW;
	if (low_prec && cqaqm_local(p, v, band, occ, general))
		return QCORE_REASON_PRECEDENCE_LOCAL;
	if (low_prec && band == CQAQM_BAND_HIGH && v->nonlocal_active)
		return QCORE_REASON_PRECEDENCE_CROSS;
	return QCORE_REASON_NONE;
}

static inline void cqaqm_admitted(const struct cqaqm_params *p,
				  struct cqaqm_vars *v, struct cqaqm_stats *st,
				  u32 band, u32 occ, bool low_prec, bool general)
{
	st->admitted[low_prec ? 0 : 1]++;
	/* The DRR list is only read by the DRR scheduler (never plain). */
	if (general && p->scheduler == CQAQM_SCHED_DRR && occ == 0)
		cqaqm_drr_activate(p, v, band);
}

/*
 * One arrival to band: the flags with the occupancies it finds, the
 * decision, and (when admitted) the flags again with the occupancies it
 * leaves.  Returns the refusal reason, QCORE_REASON_NONE when admitted.
 */
static qcore_always_inline u32 cqaqm_admit(const struct cqaqm_params *p,
					   struct cqaqm_vars *v,
					   struct cqaqm_stats *st,
					   const struct qcore_pkt *pkt,
					   const struct qcore_band_view *bands,
					   u32 band, bool general)
{
	u32 occ_high = bands[CQAQM_BAND_HIGH].backlog_pkts;
	u32 occ_low = bands[CQAQM_BAND_LOW].backlog_pkts;
	u32 occ = band == CQAQM_BAND_HIGH ? occ_high : occ_low;
	bool low_prec = pkt->prec == 0;
	u32 reason;

	cqaqm_update(p, v, st, occ_high, occ_low, general);
	reason = cqaqm_refusal(p, v, band, occ, low_prec, general);
	if (reason != QCORE_REASON_NONE)
		return reason;
	cqaqm_admitted(p, v, st, band, occ, low_prec, general);
	if (band == CQAQM_BAND_HIGH) {
		/*
		 * occ_low is unchanged and the update is idempotent for equal
		 * occupancies, so only the high local flag can move.
		 */
		if (general && p->hysteresis)
			cqaqm_local_flags(p, v, occ_high + 1, occ_low);
	} else if (general) {
		cqaqm_update(p, v, st, occ_high, occ_low + 1, true);	/* < b_low: no wrap */
	} else if (occ_low + 1 >= v->nonlocal_on_pkts) {
		/*
		 * The same update, shortened: plain implies off <= on, so
		 * occ_low + 1 < off would mean occ_low < off, already cleared
		 * by the update above.  Only the set can still happen.
		 */
		cqaqm_nonlocal(v, st, occ_low + 1);
	}
	return QCORE_REASON_NONE;
}

/*
 * Drops leave enqueue through a tail call: a decision whose reason is not
 * NONE costs gcc a longer packing of the returned struct, which would
 * otherwise be paid by every admission.
 */
static qcore_noinline struct qcore_decision cqaqm_drop(struct cqaqm_stats *st,
						       u32 band, u32 reason)
{
	st->drops[band][reason]++;
	return (struct qcore_decision){ QCORE_DROP, (u8)band, (u8)reason };
}

/* Hysteresis or DRR: the general path, out of line. */
static qcore_noinline struct qcore_decision cqaqm_enqueue_general(const struct cqaqm_params *p,
								  struct cqaqm_vars *v,
								  struct cqaqm_stats *st,
								  const struct qcore_pkt *pkt,
								  const struct qcore_band_view *bands)
{
	u32 band = pkt->cls == 1 ? CQAQM_BAND_HIGH : CQAQM_BAND_LOW;	/* cls != 1: q = 0 */
	u32 reason = cqaqm_admit(p, v, st, pkt, bands, band, true);

	if (reason != QCORE_REASON_NONE)
		return cqaqm_drop(st, band, reason);
	return (struct qcore_decision){ QCORE_QUEUE, (u8)band, QCORE_REASON_NONE };
}

/*
 * Strict priority without hysteresis (the defaults) inline, with band a
 * constant in each admission so that every per-band field is at a fixed
 * offset.  The other paths are returned directly (never from an inlined
 * helper, and with no local whose address is taken), so gcc makes them
 * jumps; one return for both bands keeps gcc's packing of the struct short.
 */
static struct qcore_decision cqaqm_enqueue(const void *params, void *vars,
					   void *stats,
					   const struct qcore_pkt *pkt,
					   const struct qcore_band_view *bands,
					   struct qcore_rng *rng)
{
	struct cqaqm_vars *v = vars;
	u32 band, reason;

	(void)rng;
	if (!v->plain)
		return cqaqm_enqueue_general(params, v, stats, pkt, bands);
	if (pkt->cls == 1) {
		band = CQAQM_BAND_HIGH;
		reason = cqaqm_admit(params, v, stats, pkt, bands, CQAQM_BAND_HIGH, false);
	} else {
		band = CQAQM_BAND_LOW;
		reason = cqaqm_admit(params, v, stats, pkt, bands, CQAQM_BAND_LOW, false);
	}
	if (reason != QCORE_REASON_NONE)
		return cqaqm_drop(stats, band, reason);
	return (struct qcore_decision){ QCORE_QUEUE, (u8)band, QCORE_REASON_NONE };
}

/* ceil((len - deficit) / quantum) quantum additions before len fits. */
static u64 cqaqm_drr_rounds(u64 deficit, u32 len, u32 quantum)
{
	if (len <= deficit)
		return 0;
	return qcore_div64(len - deficit + quantum - 1, quantum);
}

/*
 * sch_drr's dequeue loop in closed form.  With the list c0, c1 it checks
 * c0, c1, c0, c1, ...; a failed check adds a quantum and moves the class to
 * the tail.  c0 fits at check 2*r0, c1 at check 2*r1 + 1, so c0 wins when
 * r0 <= r1 (both got r0 quanta, order unchanged); otherwise c1 wins (c0 got
 * r1 + 1 quanta, c1 r1, and c1 is now at the head).
 */
static struct qcore_deq cqaqm_drr_dequeue(const struct cqaqm_params *p,
					  struct cqaqm_vars *v,
					  const struct qcore_band_view *bands)
{
	struct qcore_deq d = { QCORE_DEQ_EMPTY, 0, QCORE_REASON_NONE };
	u32 b, c0, c1, q0, q1;
	u64 r0, r1;

	/* Keep the list consistent with the views, whatever the adapter did. */
	for (b = 0; b < CQAQM_NBANDS; b++) {
		if (!bands[b].backlog_pkts)
			cqaqm_drr_deactivate(v, b);
		else
			cqaqm_drr_activate(p, v, b);
	}
	if (!v->drr_nactive)
		return d;
	c0 = v->drr_active[0];
	q0 = cqaqm_list_get(p->quantum_bytes, c0);
	r0 = cqaqm_drr_rounds(v->drr_deficit_bytes[c0], bands[c0].head_len, q0);
	d.action = QCORE_DEQ_SERVE;
	if (v->drr_nactive == 1) {
		v->drr_deficit_bytes[c0] += r0 * q0;
		d.band = (u8)c0;
		return d;
	}
	c1 = v->drr_active[1];
	q1 = cqaqm_list_get(p->quantum_bytes, c1);
	r1 = cqaqm_drr_rounds(v->drr_deficit_bytes[c1], bands[c1].head_len, q1);
	if (r0 <= r1) {
		v->drr_deficit_bytes[c0] += r0 * q0;
		v->drr_deficit_bytes[c1] += r0 * q1;
		d.band = (u8)c0;
	} else {
		v->drr_deficit_bytes[c0] += (r1 + 1) * q0;
		v->drr_deficit_bytes[c1] += r1 * q1;
		v->drr_active[0] = (u8)c1;
		v->drr_active[1] = (u8)c0;
		d.band = (u8)c1;
	}
	return d;
}

/* WRR: finish the current turn, else give the other band a turn. */
static struct qcore_deq cqaqm_wrr_dequeue(const struct cqaqm_vars *v,
					  const struct qcore_band_view *bands)
{
	struct qcore_deq d = { QCORE_DEQ_SERVE, 0, QCORE_REASON_NONE };
	u32 cur = v->wrr_band < CQAQM_NBANDS ? v->wrr_band : 0;
	u32 other = 1 - cur;

	if (bands[cur].backlog_pkts && v->wrr_left_pkts)
		d.band = (u8)cur;
	else if (bands[other].backlog_pkts)
		d.band = (u8)other;
	else if (bands[cur].backlog_pkts)
		d.band = (u8)cur;
	else
		d.action = QCORE_DEQ_EMPTY;
	return d;
}

/* WRR and DRR (kept out of line: strict priority is the default). */
static qcore_noinline struct qcore_deq cqaqm_rr_dequeue(const struct cqaqm_params *p,
							struct cqaqm_vars *v,
							const struct qcore_band_view *bands)
{
	switch (p->scheduler) {
	case CQAQM_SCHED_WRR:
		return cqaqm_wrr_dequeue(v, bands);
	case CQAQM_SCHED_DRR:
		return cqaqm_drr_dequeue(p, v, bands);
	default:
		return qcore_deq_strict(bands, CQAQM_NBANDS);
	}
}

static struct qcore_deq cqaqm_dequeue(const void *params, void *vars,
				      const struct qcore_band_view *bands,
				      u64 now_ns)
{
	const struct cqaqm_params *p = params;
	u32 action, band;

	(void)now_ns;
	if (p->scheduler != CQAQM_SCHED_STRICT)
		return cqaqm_rr_dequeue(p, vars, bands);
	/*
	 * Strict priority, high queue first: qcore_deq_strict() for two bands
	 * (EMPTY with band 0), with one return, which gcc packs shortest.
	 */
	if (bands[CQAQM_BAND_HIGH].backlog_pkts) {
		action = QCORE_DEQ_SERVE;
		band = CQAQM_BAND_HIGH;
	} else {
		action = bands[CQAQM_BAND_LOW].backlog_pkts ? QCORE_DEQ_SERVE : QCORE_DEQ_EMPTY;
		band = action == QCORE_DEQ_SERVE ? CQAQM_BAND_LOW : 0;
	}
	return (struct qcore_deq){ (u8)action, (u8)band, QCORE_REASON_NONE };
}

/* Hysteresis flags, WRR turn and DRR deficit after a packet of band was sent. */
static qcore_noinline void cqaqm_dequeued_general(const struct cqaqm_params *p,
						  struct cqaqm_vars *v, u32 band,
						  u32 len,
						  const struct qcore_band_view *bands_after)
{
	if (p->hysteresis)
		cqaqm_local_flags(p, v, bands_after[CQAQM_BAND_HIGH].backlog_pkts,
				  bands_after[CQAQM_BAND_LOW].backlog_pkts);
	if (p->scheduler == CQAQM_SCHED_WRR) {
		if (band == v->wrr_band && v->wrr_left_pkts) {
			v->wrr_left_pkts--;
		} else {
			v->wrr_band = (u8)band;
			v->wrr_left_pkts = cqaqm_list_get(p->weights_pkts, band) - 1;
		}
	} else if (p->scheduler == CQAQM_SCHED_DRR) {
		v->drr_deficit_bytes[band] -= len <= v->drr_deficit_bytes[band] ?
					      len : v->drr_deficit_bytes[band];
		if (!bands_after[band].backlog_pkts)
			cqaqm_drr_deactivate(v, band);
	}
}

static void cqaqm_dequeued(const void *params, void *vars, void *stats,
			   u32 band, u32 len, u64 now_ns,
			   const struct qcore_band_view *bands_after)
{
	struct cqaqm_vars *v = vars;
	struct cqaqm_stats *st = stats;

	(void)now_ns;
	if (band >= CQAQM_NBANDS)
		return;
	st->sent_pkts[band]++;
	st->sent_bytes[band] += len;
	cqaqm_nonlocal(v, st, bands_after[CQAQM_BAND_LOW].backlog_pkts);
	if (!v->plain)
		cqaqm_dequeued_general(params, v, band, len, bands_after);
}

const struct qcore_disc_ops cqaqm_ops = {
	.name = "cqaqm",
	.summary = "Cross-Queue AQM: precedence-aware admission across two QoS queues (Cole)",
	.params_size = sizeof(struct cqaqm_params),
	.vars_size = sizeof(struct cqaqm_vars),
	.stats_size = sizeof(struct cqaqm_stats),
	.params = cqaqm_param_descs,
	.nparams = ARRAY_SIZE(cqaqm_param_descs),
	.nbands = cqaqm_nbands,
	.check_params = cqaqm_check_params,
	.reset = cqaqm_reset,
	.enqueue = cqaqm_enqueue,
	.dequeue = cqaqm_dequeue,
	.dequeued = cqaqm_dequeued,
	.check_pkt = cqaqm_check_pkt,
	.bands_help = "bands: 2 (cls 1 -> band 0 high queue, served first under strict; cls 0 -> band 1 low queue); prec 1 = high precedence, 0 = low; cls and prec must be 0 or 1",
	.ignores = QCORE_IGNORES_TIME | QCORE_IGNORES_FLOW_HASH,
};
