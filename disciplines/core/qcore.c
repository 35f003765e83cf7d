// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * qcore.c - what every discipline shares: the drop reason names, the
 * parameter range check and the registry of disciplines.
 *
 * Kernel-compilable like the disciplines: only qcore_compat.h, no floating
 * point, no allocation.
 */
#include "qcore.h"
#include "droptail.h"
#include "prio.h"
#include "ncq.h"
#include "cqaqm.h"
#include "srd.h"
#include "red.h"
#include "wred.h"
#include "rbaqm.h"

const char *const qcore_reason_names[QCORE_REASON__COUNT] = {
	[QCORE_REASON_NONE] = "",
	[QCORE_REASON_OVERFLOW] = "overflow",
	[QCORE_REASON_AQM] = "aqm",
	[QCORE_REASON_PRECEDENCE_LOCAL] = "precedence_local",
	[QCORE_REASON_PRECEDENCE_CROSS] = "precedence_cross",
	[QCORE_REASON_DELAY] = "delay",
};

int qcore_fmt_ppm(char *buf, size_t len, u32 ppm)
{
	char frac[8];
	int i;

	if (ppm % 1000000 == 0)
		return snprintf(buf, len, "%u", ppm / 1000000);
	snprintf(frac, sizeof(frac), "%06u", ppm % 1000000);
	/* Shortest exact form: 50000 ppm reads "0.05", not "0.050000". */
	for (i = 5; i > 0 && frac[i] == '0'; i--)
		frac[i] = '\0';
	return snprintf(buf, len, "%u.%s", ppm / 1000000, frac);
}

static u64 param_get(const struct qcore_param_desc *d, const void *params)
{
	const u8 *p = (const u8 *)params + d->offset;

	switch (d->kind) {
	case QCORE_PARAM_U64:
		return *(const u64 *)p;
	case QCORE_PARAM_U32:
	case QCORE_PARAM_PPM:
		return *(const u32 *)p;
	case QCORE_PARAM_ENUM:
	case QCORE_PARAM_BOOL:
		return *p;
	default:
		return 0;
	}
}

static void fmt_value(const struct qcore_param_desc *d, u64 v, char *buf,
		      size_t len)
{
	if (d->kind == QCORE_PARAM_PPM)
		qcore_fmt_ppm(buf, len, (u32)v);
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

/* Number of choices in "a|b|c". */
static u32 enum_count(const char *choices)
{
	u32 n = 1;

	if (!choices || !*choices)
		return 0;
	for (; *choices; choices++)
		n += *choices == '|';
	return n;
}

static int check_list(const struct qcore_param_desc *d, const void *params,
		      char *err, size_t errlen)
{
	const u32 *v = (const u32 *)((const u8 *)params + d->offset);
	u32 i;

	for (i = 0; i < QCORE_MAX_BANDS; i++) {
		/* 0 marks an unused slot at the end of the list. */
		if (v[i] == 0 && d->min > 0)
			continue;
		if (v[i] < d->min || v[i] > d->max) {
			snprintf(err, errlen,
				 "%s: element %u must be between %llu and %llu, got %u",
				 d->name, i + 1, (unsigned long long)d->min,
				 (unsigned long long)d->max, v[i]);
			return -1;
		}
	}
	return 0;
}

int qcore_check_param_ranges(const struct qcore_param_desc *descs, u32 n,
			     const void *params, char *err, size_t errlen)
{
	char lo[24], hi[24], got[24];
	u32 i;

	for (i = 0; i < n; i++) {
		const struct qcore_param_desc *d = &descs[i];
		u64 v = param_get(d, params);

		if (d->kind == QCORE_PARAM_U32_LIST) {
			if (check_list(d, params, err, errlen))
				return -1;
			continue;
		}
		if (d->kind == QCORE_PARAM_ENUM) {
			if (v >= enum_count(d->choices)) {
				snprintf(err, errlen, "%s: must be one of %s, got index %llu",
					 d->name, d->choices, (unsigned long long)v);
				return -1;
			}
			continue;
		}
		if (d->kind == QCORE_PARAM_BOOL) {
			if (v > 1) {
				snprintf(err, errlen, "%s: must be 0 or 1, got %llu",
					 d->name, (unsigned long long)v);
				return -1;
			}
			continue;
		}
		if (v < d->min || v > d->max) {
			fmt_value(d, d->min, lo, sizeof(lo));
			fmt_value(d, d->max, hi, sizeof(hi));
			fmt_value(d, v, got, sizeof(got));
			snprintf(err, errlen, "%s: must be between %s and %s, got %s",
				 d->name, lo, hi, got);
			return -1;
		}
	}
	return 0;
}

/*
 * Registry for userspace adapters.  A new discipline is one entry here; the
 * replay tool, the parameter parser and the ns-3 adapter find it by name.
 */
int qcore_check_cls(u32 cls, u32 limit, const char *what, char *err, size_t errlen)
{
	if (cls < limit)
		return 0;
	snprintf(err, errlen, "cls: must be below %s (%u), got %u", what, limit, cls);
	return -1;
}

const struct qcore_disc_ops *const qcore_disciplines[] = {
	&droptail_ops,
	&prio_ops,
	&ncq_ops,
	&cqaqm_ops, &srd_ops, &rd_ops,
	&red_ops, &wred_ops, &rbaqm_ops,
	NULL,
};

const struct qcore_disc_ops *qcore_find(const char *name)
{
	u32 i;

	if (!name)
		return NULL;
	for (i = 0; qcore_disciplines[i]; i++)
		if (strcmp(qcore_disciplines[i]->name, name) == 0)
			return qcore_disciplines[i];
	return NULL;
}
