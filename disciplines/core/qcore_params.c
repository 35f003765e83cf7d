// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * qcore_params.c - the one parameter parser and configure sequence every
 * adapter uses (replay, ns-3, qlab-emu, the tc plugins and the Linux qdisc),
 * so "thresh=0.05" means the same thing in each of them.  Kernel-compilable
 * like the disciplines: only qcore_compat.h, no floating point, no
 * allocation.  The usage text (stdio) is in qcore_usage.c.
 */
#include "qcore.h"

#define PPM_ONE 1000000ULL
#define U64_ALL (~(u64)0)
#define U32_ALL (~(u32)0)

const struct qcore_param_desc *qcore_params_find(const struct qcore_disc_ops *ops,
						 const char *name)
{
	u32 i;

	for (i = 0; i < ops->nparams; i++)
		if (strcmp(ops->params[i].name, name) == 0)
			return &ops->params[i];
	return NULL;
}

/* Decimal digits only: no sign, no spaces, no hex; rejects overflow. */
static int parse_uint(const char *s, u64 max, u64 *out)
{
	u64 v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (v > (max - (u64)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (u64)(*s - '0');
	}
	*out = v;
	return 0;
}

/* "D+" or "D+.D{1,6}" into millionths; anything else (1e-3, -0.1, .5) fails. */
static int parse_ppm(const char *s, u64 *out)
{
	char ipart[24];
	const char *dot = strchr(s, '.');
	size_t ilen = dot ? (size_t)(dot - s) : strlen(s);
	u64 whole, frac = 0;
	u32 places = 0;

	if (ilen == 0 || ilen >= sizeof(ipart))
		return -1;
	memcpy(ipart, s, ilen);
	ipart[ilen] = '\0';
	if (parse_uint(ipart, U64_ALL / PPM_ONE - 1, &whole))
		return -1;
	if (dot) {
		const char *f;

		for (f = dot + 1; *f; f++, places++) {
			if (*f < '0' || *f > '9' || places == 6)
				return -1;
			frac = frac * 10 + (u64)(*f - '0');
		}
		if (places == 0)
			return -1;
	}
	for (; places < 6; places++)
		frac *= 10;
	*out = whole * PPM_ONE + frac;
	return 0;
}

/* Index of value in "a|b|c", or -1. */
static int enum_index(const char *choices, const char *value)
{
	size_t vlen = strlen(value);
	const char *c = choices;
	int i = 0;

	while (c && *c) {
		const char *bar = strchr(c, '|');
		size_t clen = bar ? (size_t)(bar - c) : strlen(c);

		if (clen == vlen && strncmp(c, value, clen) == 0)
			return i;
		c = bar ? bar + 1 : NULL;
		i++;
	}
	return -1;
}

/* The i-th choice of "a|b|c" into buf. */
static int enum_name(const char *choices, u32 idx, char *buf, size_t len)
{
	const char *c = choices;
	u32 i;

	for (i = 0; c && i < idx; i++) {
		c = strchr(c, '|');
		if (c)
			c++;
	}
	if (!c || !*c)
		return -1;
	return snprintf(buf, len, "%.*s", (int)strcspn(c, "|"), c) < (int)len ? 0 : -1;
}

static void fmt_bound(const struct qcore_param_desc *d, u64 v, char *buf, size_t len)
{
	if (d->kind == QCORE_PARAM_PPM)
		qcore_fmt_ppm(buf, len, (u32)v);
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

/* "an integer between 1 and 1000000" etc., for messages and usage. */
void qcore_param_describe(const struct qcore_param_desc *d, char *buf, size_t len)
{
	char lo[24], hi[24];

	fmt_bound(d, d->min, lo, sizeof(lo));
	fmt_bound(d, d->max, hi, sizeof(hi));
	switch (d->kind) {
	case QCORE_PARAM_U32:
	case QCORE_PARAM_U64:
		snprintf(buf, len, "an integer between %s and %s", lo, hi);
		break;
	case QCORE_PARAM_PPM:
		snprintf(buf, len, "a decimal with at most 6 places between %s and %s", lo, hi);
		break;
	case QCORE_PARAM_ENUM:
		snprintf(buf, len, "one of %s", d->choices);
		break;
	case QCORE_PARAM_BOOL:
		snprintf(buf, len, "0 or 1");
		break;
	case QCORE_PARAM_U32_LIST:
		snprintf(buf, len, "up to %d integers a:b:... each between %s and %s",
			 QCORE_MAX_BANDS, lo, hi);
		break;
	}
}

static int bad_value(const struct qcore_param_desc *d, const char *value,
		     char *err, size_t errlen)
{
	char form[96];

	qcore_param_describe(d, form, sizeof(form));
	snprintf(err, errlen, "%s: expected %s (%s), got '%s'",
		 d->name, form, d->unit, value);
	return -1;
}

static int set_list(const struct qcore_param_desc *d, u32 *slots,
		    const char *value)
{
	u32 tmp[QCORE_MAX_BANDS] = { 0 };
	char item[24];
	const char *s = value;
	u32 n = 0;
	u64 v;

	for (;;) {
		size_t ilen = strcspn(s, ":");

		if (n == QCORE_MAX_BANDS || ilen == 0 || ilen >= sizeof(item))
			return -1;
		memcpy(item, s, ilen);
		item[ilen] = '\0';
		if (parse_uint(item, U32_ALL, &v) || v < d->min || v > d->max)
			return -1;
		tmp[n++] = (u32)v;
		if (!s[ilen])
			break;
		s += ilen + 1;
	}
	memcpy(slots, tmp, sizeof(tmp));
	return 0;
}

int qcore_param_parse(const struct qcore_param_desc *d, const char *value,
		      struct qcore_param_value *v, char *err, size_t errlen)
{
	u64 x;
	int idx;

	switch (d->kind) {
	case QCORE_PARAM_U32:
	case QCORE_PARAM_U64:
		if (parse_uint(value, d->kind == QCORE_PARAM_U32 ? U32_ALL : U64_ALL, &x) ||
		    x < d->min || x > d->max)
			return bad_value(d, value, err, errlen);
		v->value = x;
		return 0;
	case QCORE_PARAM_PPM:
		if (parse_ppm(value, &x) || x < d->min || x > d->max)
			return bad_value(d, value, err, errlen);
		v->value = x;
		return 0;
	case QCORE_PARAM_ENUM:
		idx = enum_index(d->choices, value);
		if (idx < 0)
			return bad_value(d, value, err, errlen);
		v->value = (u64)idx;
		return 0;
	case QCORE_PARAM_BOOL:
		if (strcmp(value, "0") && strcmp(value, "1"))
			return bad_value(d, value, err, errlen);
		v->value = value[0] == '1';
		return 0;
	case QCORE_PARAM_U32_LIST:
		if (set_list(d, v->list, value))
			return bad_value(d, value, err, errlen);
		return 0;
	}
	return bad_value(d, value, err, errlen);
}

void qcore_param_store(const struct qcore_param_desc *d, void *params,
		       const struct qcore_param_value *v)
{
	u8 *p = (u8 *)params + d->offset;

	switch (d->kind) {
	case QCORE_PARAM_U32:
	case QCORE_PARAM_PPM:
		*(u32 *)p = (u32)v->value;
		break;
	case QCORE_PARAM_U64:
		*(u64 *)p = v->value;
		break;
	case QCORE_PARAM_ENUM:
	case QCORE_PARAM_BOOL:
		*p = (u8)v->value;
		break;
	case QCORE_PARAM_U32_LIST:
		memcpy(p, v->list, sizeof(v->list));
		break;
	}
}

static int set_one(const struct qcore_param_desc *d, void *params,
		   const char *value, char *err, size_t errlen)
{
	struct qcore_param_value v;

	memset(&v, 0, sizeof(v));
	if (qcore_param_parse(d, value, &v, err, errlen))
		return -1;
	qcore_param_store(d, params, &v);
	return 0;
}

static void unknown_name(const struct qcore_disc_ops *ops, const char *name,
			 char *err, size_t errlen)
{
	size_t used;
	u32 i;

	snprintf(err, errlen, "unknown parameter '%s' for %s (valid:", name, ops->name);
	for (i = 0; i < ops->nparams; i++) {
		used = strlen(err);
		snprintf(err + used, errlen - used, "%s %s", i ? "," : "",
			 ops->params[i].name);
	}
	used = strlen(err);
	snprintf(err + used, errlen - used, "%s", ops->nparams ? ")" : " none)");
}

int qcore_param_index(const struct qcore_disc_ops *ops, const char *name,
		      char *err, size_t errlen)
{
	u32 i;

	for (i = 0; i < ops->nparams; i++)
		if (strcmp(ops->params[i].name, name) == 0)
			return (int)i;
	unknown_name(ops, name, err, errlen);
	return -1;
}

int qcore_params_set(const struct qcore_disc_ops *ops, void *params,
		     const char *name, const char *value,
		     char *err, size_t errlen)
{
	int i = qcore_param_index(ops, name, err, errlen);

	if (i < 0)
		return -1;
	return set_one(&ops->params[i], params, value, err, errlen);
}

int qcore_params_defaults(const struct qcore_disc_ops *ops, void *params,
			  char *err, size_t errlen)
{
	u32 i;

	memset(params, 0, ops->params_size);
	for (i = 0; i < ops->nparams; i++)
		if (set_one(&ops->params[i], params, ops->params[i].dflt, err, errlen))
			return -1;
	return 0;
}

/*
 * A typed value against its table entry: what qcore_param_parse() accepts,
 * so a value that came as a netlink or ns-3 attribute is held to the same
 * ranges as text.
 */
static int check_value(const struct qcore_param_desc *d,
		       const struct qcore_param_value *v, char *err, size_t errlen)
{
	char lo[24], hi[24], got[24];
	u32 i, n = 0;

	switch (d->kind) {
	case QCORE_PARAM_ENUM:
		for (n = 1, i = 0; d->choices[i]; i++)
			n += d->choices[i] == '|';
		if (v->value >= n) {
			snprintf(err, errlen, "%s: must be one of %s, got index %llu",
				 d->name, d->choices, (unsigned long long)v->value);
			return -1;
		}
		return 0;
	case QCORE_PARAM_BOOL:
		if (v->value > 1) {
			snprintf(err, errlen, "%s: must be 0 or 1, got %llu",
				 d->name, (unsigned long long)v->value);
			return -1;
		}
		return 0;
	case QCORE_PARAM_U32_LIST:
		for (i = 0; i < QCORE_MAX_BANDS; i++)
			if (v->list[i])
				n = i + 1;
		for (i = 0; i < n || i == 0; i++) {
			if (v->list[i] < d->min || v->list[i] > d->max) {
				snprintf(err, errlen, "%s: element %u must be between %llu and %llu, got %u",
					 d->name, i + 1, (unsigned long long)d->min,
					 (unsigned long long)d->max, v->list[i]);
				return -1;
			}
		}
		return 0;
	default:
		if (v->value < d->min || v->value > d->max) {
			fmt_bound(d, d->min, lo, sizeof(lo));
			fmt_bound(d, d->max, hi, sizeof(hi));
			fmt_bound(d, v->value, got, sizeof(got));
			snprintf(err, errlen, "%s: must be between %s and %s, got %s",
				 d->name, lo, hi, got);
			return -1;
		}
		return 0;
	}
}

int qcore_configure(const struct qcore_disc_ops *ops, void *params,
		    const struct qcore_param_value *values, u32 nvalues,
		    u32 *nbands, char *err, size_t errlen)
{
	u32 i, n;

	if (qcore_params_defaults(ops, params, err, errlen))
		return -1;
	for (i = 0; i < nvalues; i++) {
		const struct qcore_param_desc *d;

		if (values[i].index >= ops->nparams) {
			snprintf(err, errlen, "%s: no parameter %u (it has %u)", ops->name,
				 values[i].index, ops->nparams);
			return -1;
		}
		d = &ops->params[values[i].index];
		if (check_value(d, &values[i], err, errlen))
			return -1;
		qcore_param_store(d, params, &values[i]);
	}
	if (ops->check_params(params, err, errlen))
		return -1;
	n = ops->nbands(params);
	if (n < 1 || n > QCORE_MAX_BANDS) {
		snprintf(err, errlen, "%s: reports %u bands (must be 1..%d)", ops->name, n,
			 QCORE_MAX_BANDS);
		return -1;
	}
	*nbands = n;
	return 0;
}

static int format_list(const u32 *v, char *out, size_t outlen)
{
	size_t used = 0;
	u32 i, n = 1;
	int w;

	/* Trailing zeros are unused slots. */
	for (i = 0; i < QCORE_MAX_BANDS; i++)
		if (v[i])
			n = i + 1;
	for (i = 0; i < n; i++) {
		w = snprintf(out + used, outlen - used, "%s%u", i ? ":" : "", v[i]);
		if (w < 0 || (size_t)w >= outlen - used)
			return -1;
		used += (size_t)w;
	}
	return 0;
}

int qcore_params_format(const struct qcore_disc_ops *ops, const void *params,
			const char *name, char *out, size_t outlen)
{
	const struct qcore_param_desc *d = qcore_params_find(ops, name);
	const u8 *p;
	int w = -1;

	if (!d || !outlen)
		return -1;
	p = (const u8 *)params + d->offset;
	switch (d->kind) {
	case QCORE_PARAM_U32:
		w = snprintf(out, outlen, "%u", *(const u32 *)p);
		break;
	case QCORE_PARAM_U64:
		w = snprintf(out, outlen, "%llu", (unsigned long long)*(const u64 *)p);
		break;
	case QCORE_PARAM_PPM:
		w = qcore_fmt_ppm(out, outlen, *(const u32 *)p);
		break;
	case QCORE_PARAM_ENUM:
		return enum_name(d->choices, *p, out, outlen);
	case QCORE_PARAM_BOOL:
		w = snprintf(out, outlen, "%u", *p);
		break;
	case QCORE_PARAM_U32_LIST:
		return format_list((const u32 *)p, out, outlen);
	}
	return w < 0 || (size_t)w >= outlen ? -1 : 0;
}
