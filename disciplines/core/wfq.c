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
	return r <= wfq_rounds_to_cap(s, w, maxs) ? r : WFQ_NEVER;
}

struct qcore_deq wfq_select(struct wfq_vars *v, const u32 *quantum_bytes,
			    u32 nclasses, u32 maxs_bytes,
			    const struct qcore_band_view *bands)
{
	struct qcore_deq d = { QCORE_DEQ_EMPTY, 0, QCORE_REASON_NONE };
	u32 i, best = WFQ_NEVER, first_backlogged = WFQ_NEVER;

	if (nclasses > QCORE_MAX_BANDS)
		nclasses = QCORE_MAX_BANDS;
	for (i = 0; i < nclasses; i++) {
		u32 r;

		if (!bands[i].backlog_pkts)
			continue;
		/*
		 * r = 0: no earlier class had r = 0 (we would have returned),
		 * so this one wins and nothing is refilled.  The common case
		 * costs no division.
		 */
		if (bands[i].head_len < v->credit_bytes[i]) {
			d.action = QCORE_DEQ_SERVE;
			d.band = (u8)i;
			return d;
		}
		if (first_backlogged == WFQ_NEVER)
			first_backlogged = i;
		r = wfq_rounds_to_fit(bands[i].head_len, v->credit_bytes[i],
				      quantum_bytes[i], maxs_bytes);
		/* Strict "<": the lowest class wins a tie, as the scan does. */
		if (r < best) {
			best = r;
			d.band = (u8)i;
		}
	}
	if (first_backlogged == WFQ_NEVER)
		return d;
	d.action = QCORE_DEQ_SERVE;
	if (best == WFQ_NEVER)
		d.band = (u8)first_backlogged;	/* oversize heads (wfq.h) */
	for (i = 0; i < nclasses; i++) {
		u32 w = quantum_bytes[i];
		u32 r = wfq_rounds_to_cap(v->credit_bytes[i], w, maxs_bytes);

		if (r > best)
			r = best;
		v->credit_bytes[i] += r * w;
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
