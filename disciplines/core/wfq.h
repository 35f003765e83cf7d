/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * wfq.h - the low-jitter WFQ of rbaqm Fig. 2, a scheduler component shared
 * by wred and rbaqm (not a discipline of its own).
 *
 * Per class i: a credit S[i] and a quantum W[i]; one cap MaxS.  The paper's
 * dequeue, with its stray semicolon removed (DISCIPLINES.md):
 *
 *	loop:
 *	  for i = 0..N-1: if head_len(i) < S[i]: S[i] -= head_len(i); serve i
 *	  for i = 0..N-1: if S[i] < MaxS: S[i] += W[i]
 *
 * where head_len of an empty class is infinite, run only when some class is
 * backlogged.  Lower class numbers are scanned first, so they see the least
 * jitter.
 *
 * Units: the core works in bytes.  The paper gives W in bits, chosen as one
 * 1000-byte packet plus one bit (8001 bits) so that, with the strict "<",
 * one refill lets exactly one 1000-byte packet through.  The byte version of
 * a paper value is ceil(W_bits / 8): 8001, 4001, 2001, 1001 bits become
 * 1001, 501, 251, 126 bytes (ratios 8:4:2:1 to 0.2%); a 1000-byte packet
 * then needs 1, 2, 4, 8 refills, as in bits.
 *
 * Bound: instead of looping round by round, wfq_select() computes for every
 * backlogged class the number of refill rounds r_i after which its head
 * fits (r_i = 0 if it fits now, else floor((len - S) / W) + 1, provided the
 * cap lets that many refills happen), takes the smallest r (ties: lowest
 * class, as the scan does), and applies r refills to every class at once
 * (class j gets min(r, rounds until S[j] >= MaxS) of them).  This is the
 * same decision and the same credits as running Fig. 2's rounds, in O(N)
 * with two u32 divisions per backlogged class and no data-dependent loop.
 * The scan stops at the first backlogged class whose head fits now (r = 0:
 * it wins, nothing is refilled), so most dequeues need no division.
 * tests/test_disc_aqm.c checks it against a literal round-by-round loop.
 *
 * Oversize heads: the most credit a class can reach is below MaxS + W[i], so
 * a head of at least that many bytes never fits and Fig. 2 would spin for
 * ever.  If no backlogged head can ever fit, the credits are refilled up to
 * the cap and the first backlogged class is served anyway; its credit is
 * floored at 0 when charged.  With maxs_bytes at least the largest packet
 * this never happens.
 *
 * Credits start at 0 (the paper does not say), so the first dequeue after
 * reset refills.  Credits change in two places: refills in wfq_select()
 * (called from the discipline's dequeue; calling it again without a send
 * returns the same class and refills nothing, as a peek needs), and the
 * charge S[i] -= len in wfq_charge(), called from dequeued() once the
 * adapter has actually sent the packet.
 *
 * Ranges (checked by the disciplines): 1 <= W[i] <= WFQ_MAX_QUANTUM_BYTES,
 * 1 <= MaxS <= WFQ_MAX_MAXS_BYTES, so credits stay below 2^25 in a u32.
 */
#ifndef QCORE_WFQ_H
#define QCORE_WFQ_H

#include "qcore.h"

#define WFQ_MAX_QUANTUM_BYTES (1U << 24)
#define WFQ_MAX_MAXS_BYTES (1U << 24)

struct wfq_vars {
	u32 credit_bytes[QCORE_MAX_BANDS];	/* S[i], bytes */
};

void wfq_vars_init(struct wfq_vars *v);

/*
 * Which class to serve, refilling credits as Fig. 2's rounds would.
 * quantum_bytes[0..nclasses-1] are the W[i].  QCORE_DEQ_EMPTY (and no
 * refill) when every class is empty.
 */
struct qcore_deq wfq_select_refill(struct wfq_vars *v, const u32 *quantum_bytes,
				   u32 nclasses, u32 maxs_bytes,
				   const struct qcore_band_view *bands, u32 first);

/*
 * Inline, the common case: the first backlogged class's head fits now
 * (r = 0: it wins, nothing is refilled).  Otherwise the rounds, out of
 * line (wfq.c), from that class on.
 */
static inline struct qcore_deq wfq_select(struct wfq_vars *v,
					  const u32 *quantum_bytes,
					  u32 nclasses, u32 maxs_bytes,
					  const struct qcore_band_view *bands)
{
	struct qcore_deq d = { QCORE_DEQ_EMPTY, 0, QCORE_REASON_NONE };
	u32 i;

	if (nclasses > QCORE_MAX_BANDS)
		nclasses = QCORE_MAX_BANDS;
	for (i = 0; i < nclasses; i++) {
		if (!bands[i].backlog_pkts)
			continue;
		if (bands[i].head_len >= v->credit_bytes[i])
			return wfq_select_refill(v, quantum_bytes, nclasses,
						 maxs_bytes, bands, i);
		d.action = QCORE_DEQ_SERVE;
		d.band = (u8)i;
		return d;
	}
	return d;
}

/*
 * The head of `band` (len bytes) was sent: S[band] -= len, floored at 0.
 * Inline: a few instructions on every served packet.
 */
static inline void wfq_charge(struct wfq_vars *v, u32 band, u32 len)
{
	if (band >= QCORE_MAX_BANDS)
		return;
	v->credit_bytes[band] = v->credit_bytes[band] > len ?
				v->credit_bytes[band] - len : 0;
}

/*
 * Per-class u32 lists (QCORE_PARAM_U32_LIST, "a:b:c", unused slots 0) as
 * the classful disciplines read them: a list of one value applies to every
 * class.
 */
static inline u32 wfq_list_count(const u32 *list)
{
	u32 i, n = 0;

	for (i = 0; i < QCORE_MAX_BANDS; i++)
		if (list[i])
			n = i + 1;
	return n;
}

static inline u32 wfq_list_at(const u32 *list, u32 i)
{
	return wfq_list_count(list) == 1 ? list[0] : list[i];
}

/* 0, or -1 with "NAME: expected 1 or N values (classes), got M". */
int wfq_check_list(const char *name, const u32 *list, u32 nclasses,
		   char *err, size_t errlen);

#endif /* QCORE_WFQ_H */
