// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* wfq.c - low-jitter WFQ of rbaqm Fig. 2 in closed form (see wfq.h). */
#include "wfq.h"

#define WFQ_NEVER 0xffffffffU	/* refill rounds: the head can never fit */

void wfq_vars_init(struct wfq_vars *v)
{
	memset(v, 0, sizeof(*v));
}

/* Refill rounds a class with credit s gets before the cap stops it. */
static u32 wfq_rounds_to_cap(u32 s, u32 w, u32 maxs)
{
	/* w = 0 only without check_params: never refill rather than divide by 0. */
	return s >= maxs || w == 0 ? 0 : (maxs - s + w - 1) / w;
}

/*
 * Rounds after which a head of len bytes fits (s + r*w > len), or
 * WFQ_NEVER when the cap stops the refills first.  The r-th refill happens
 * only while s + (r - 1) * w < maxs, i.e. r <= rounds_to_cap.
 */
static u32 wfq_rounds_to_fit(u32 len, u32 s, u32 w, u32 maxs)
{
	u32 r;

	if (len < s)
		return 0;
	if (w == 0)
		return WFQ_NEVER;
	r = (len - s) / w + 1;
	/* r <= rounds_to_cap(s) iff the r-th refill happens: s + (r-1) w < maxs */
	return s + (u64)(r - 1) * w < maxs ? r : WFQ_NEVER;
}

/*
 * min(r, rounds_to_cap(s)), the refills class i gets in r rounds: all r of
 * them when the r-th still happens (s + (r-1) w < maxs, no division), else
 * as many as the cap lets through.
 */
static u32 wfq_capped_rounds(u32 r, u32 s, u32 w, u32 maxs)
{
	if (s >= maxs || w == 0)
		return 0;
	return s + (u64)(r - 1) * w < maxs ? r : wfq_rounds_to_cap(s, w, maxs);
}

/*
 * wfq_select() from `first`, the first backlogged class, whose head does
 * not fit now: the rounds of Fig. 2 in closed form (wfq.h).  Classes
 * before `first` are empty.
 */
struct qcore_deq wfq_select_refill(struct wfq_vars *v, const u32 *quantum_bytes,
				   u32 nclasses, u32 maxs_bytes,
				   const struct qcore_band_view *bands, u32 first)
{
	struct qcore_deq d = { QCORE_DEQ_SERVE, 0, QCORE_REASON_NONE };
	u32 i, best = WFQ_NEVER;

	for (i = first; i < nclasses; i++) {
		u32 r;

		if (!bands[i].backlog_pkts)
			continue;
		/*
		 * r = 0: no earlier class had r = 0 (we would have returned),
		 * so this one wins and nothing is refilled.
		 */
		if (bands[i].head_len < v->credit_bytes[i]) {
			d.band = (u8)i;
			return d;
		}
		r = wfq_rounds_to_fit(bands[i].head_len, v->credit_bytes[i],
				      quantum_bytes[i], maxs_bytes);
		/* Strict "<": the lowest class wins a tie, as the scan does. */
		if (r < best) {
			best = r;
			d.band = (u8)i;
		}
	}
	if (best == WFQ_NEVER)
		d.band = (u8)first;	/* oversize heads (wfq.h) */
	/* best >= 1 here */
	for (i = 0; i < nclasses; i++) {
		u32 s = v->credit_bytes[i], w;

		if (s >= maxs_bytes)
			continue;	/* at the cap: no refill (idle classes end here) */
		w = quantum_bytes[i];
		v->credit_bytes[i] = s + wfq_capped_rounds(best, s, w, maxs_bytes) * w;
	}
	return d;
}

int wfq_check_list(const char *name, const u32 *list, u32 nclasses,
		   char *err, size_t errlen)
{
	u32 n = wfq_list_count(list);

	if (n == 1 || n == nclasses)
		return 0;
	snprintf(err, errlen, "%s: expected 1 or %u values (classes), got %u",
		 name, nclasses, n);
	return -1;
}
