// SPDX-License-Identifier: GPL-2.0
/*
 * qlab_tc.c - option parsing and printing shared by qlab's tc plugins
 * (qlab_tc.h).
 *
 *	tc qdisc add dev eth0 root qlab disc ncq size 130b thresh 5% limit 100
 *	tc qdisc add dev eth0 root srd rate 20mbit d 50ms
 *	tc qdisc add dev eth0 root srd rate_bps 20000000 d_ns 50000000	(the same)
 *
 * Options are the core's parameter names (size_bytes, thresh, ...); a name
 * without its unit suffix (_bytes, _pkts, _ns, _bps, _ppm) is accepted too
 * ("size", "limit").  Values in iproute2's units go through iproute2's own
 * parsers, chosen by the unit of the parameter's table entry: rates
 * (bit/s) get_rate64 ("20mbit", "2.5MBps"; "10%" of the device's speed
 * through get_percent_rate64), times (ns) get_time64 ("50ms", "200us"),
 * sizes (bytes) get_size ("1500b", "64kb"), fractions parse_percent
 * ("5%", at most 4 decimals so it is exact in ppm), packet counts a "p"
 * suffix ("100p", as built-in qdiscs print them).  A plain integer is the
 * value in the core's unit (bit/s, ns, bytes, packets), read by the core's
 * parser exactly as before (the integer aliases: rate_bps 20000000); so are
 * the other forms (exact decimals for fractions, "a:b:c" lists, choice
 * names).  Every value ends in the core's parser (qcore_param_parse), so
 * ranges are checked and refused with the same message as the replay tool;
 * a unit iproute2 does not know gets tc's usual 'illegal value' message.
 * Cross-parameter checks come back from the kernel (check_params) as
 * "Error: ...".  Only the options given are sent: on change the others
 * keep their values.
 *
 * Printing (tc qdisc show): rates, times, sizes and packet counts under the
 * name without its unit suffix, in iproute2's style (print_rate's
 * "20Mbit", sprint_time64's "50ms", sprint_size's "64Kb", "100p"), but
 * only when that text parses back to the exact value, else exactly
 * ("20000001" bit/s, "123456789ns", "1030b"), so the shown options fed to
 * tc qdisc change are the identity.  Everything else is printed by the
 * core's formatter (qcore_params_format).  tc -j is unchanged: the full
 * names as keys, integers in the core's units.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "qlab_tc.h"
#include "qcore_usage.h"

static const char *const unit_suffixes[] = { "_bytes", "_pkts", "_ns", "_bps", "_ppm" };

int qlab_tc_find_param(const struct qcore_disc_ops *ops, const char *word)
{
	size_t wl = strlen(word);
	unsigned int i, s;

	for (i = 0; i < ops->nparams; i++) {
		const char *name = ops->params[i].name;

		if (!strcmp(name, word))
			return (int)i;
		for (s = 0; s < ARRAY_SIZE(unit_suffixes); s++)
			if (!strncmp(name, word, wl) &&
			    !strcmp(name + wl, unit_suffixes[s]))
				return (int)i;
	}
	return -1;
}

enum qlab_tc_unit qlab_tc_unit_of(const struct qcore_param_desc *d)
{
	if (d->kind == QCORE_PARAM_PPM)
		return strcmp(d->unit, "fraction") ? QLAB_TC_PLAIN : QLAB_TC_FRACTION;
	if (d->kind != QCORE_PARAM_U32 && d->kind != QCORE_PARAM_U64)
		return QLAB_TC_PLAIN;
	if (!strcmp(d->unit, "bit/s"))
		return QLAB_TC_RATE;
	if (!strcmp(d->unit, "ns"))
		return QLAB_TC_TIME;
	if (!strcmp(d->unit, "bytes"))
		return QLAB_TC_SIZE;
	if (!strcmp(d->unit, "packets"))
		return QLAB_TC_PKTS;
	return QLAB_TC_PLAIN;
}

/* The name without its unit suffix: what tc qdisc show prints before a value with a unit. */
static void short_name(const char *name, char *out, size_t len)
{
	size_t nl = strlen(name), sl;
	unsigned int s;

	snprintf(out, len, "%s", name);
	for (s = 0; s < ARRAY_SIZE(unit_suffixes); s++) {
		sl = strlen(unit_suffixes[s]);
		if (nl > sl && nl - sl < len && !strcmp(name + nl - sl, unit_suffixes[s])) {
			out[nl - sl] = '\0';
			return;
		}
	}
}

static const char *const unit_forms[] = {
	[QLAB_TC_PLAIN] = "",
	[QLAB_TC_RATE] = "a rate: 20mbit, 1.5gbit, 2.5MBps, 10% (of the device's speed); a plain number: bit/s",
	[QLAB_TC_TIME] = "a time: 50ms, 200us, 1.5s, 700ns; a plain number: ns",
	[QLAB_TC_SIZE] = "a size: 1500b, 64kb, 1mb; a plain number: bytes",
	[QLAB_TC_PKTS] = "a packet count: 100 or 100p",
	[QLAB_TC_FRACTION] = "a fraction: 0.05 or 5% (at most 4 decimals)",
};

void qlab_tc_units_usage(const struct qcore_disc_ops *ops, FILE *f)
{
	enum qlab_tc_unit u;
	unsigned int p, n;
	char name[64];

	fprintf(f, "units (iproute2's, as tc's own qdiscs take them; tc qdisc show prints them so):\n");
	for (u = QLAB_TC_RATE; u <= QLAB_TC_FRACTION; u++) {
		for (p = 0, n = 0; p < ops->nparams; p++) {
			if (qlab_tc_unit_of(&ops->params[p]) != u)
				continue;
			short_name(ops->params[p].name, name, sizeof(name));
			fprintf(f, "%s%s", n++ ? ", " : "  ", name);
		}
		if (n)
			fprintf(f, ": %s\n", unit_forms[u]);
	}
}

/* "[0-9]+" */
static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

/*
 * A plain decimal number ("20", "2.5", ".5") before the unit: what
 * iproute2's parsers (strtod) are given; no sign, exponent, hex, inf or
 * nan, and at most 15 digits, so the double they compute stays in range.
 */
static int decimal_prefix(const char *s)
{
	int digits = 0, point = 0;

	for (; *s; s++) {
		if (*s >= '0' && *s <= '9')
			digits++;
		else if (*s == '.' && !point)
			point = 1;
		else
			break;
	}
	return digits > 0 && digits <= 15 && !(*s == 'e' || *s == 'E' || *s == 'x' || *s == 'X');
}

int qlab_tc_parse_value(const char *prefix, const struct qcore_param_desc *d,
			const char *word, const char *text, const char *dev,
			struct qcore_param_value *v)
{
	enum qlab_tc_unit u = qlab_tc_unit_of(d);
	char err[QCORE_ERRLEN], num[48];
	const char *core_text = text;
	size_t tl = strlen(text);
	int illegal = 0;

	if (u != QLAB_TC_PLAIN && !all_digits(text) &&
	    !(u == QLAB_TC_FRACTION && text[tl ? tl - 1 : 0] != '%')) {
		if (!decimal_prefix(text)) {
			illegal = 1;
		} else if (u == QLAB_TC_RATE) {
			__u64 bytes = 0;

			if (tl && text[tl - 1] == '%') {
				/* tc's own message when the device has no speed */
				if (get_percent_rate64(&bytes, text, dev ? dev : ""))
					return -1;
			} else if (get_rate64(&bytes, text)) {
				illegal = 1;
			}
			if (!illegal && bytes > ~0ULL / 8)
				illegal = 1;
			snprintf(num, sizeof(num), "%llu", (unsigned long long)bytes * 8);
		} else if (u == QLAB_TC_TIME) {
			__s64 ns = 0;

			if (get_time64(&ns, text) || ns < 0)
				illegal = 1;
			snprintf(num, sizeof(num), "%lld", (long long)ns);
		} else if (u == QLAB_TC_SIZE) {
			unsigned int bytes = 0;

			if (get_size(&bytes, text))
				illegal = 1;
			snprintf(num, sizeof(num), "%u", bytes);
		} else if (u == QLAB_TC_PKTS) {
			if (tl < 2 || (text[tl - 1] != 'p' && text[tl - 1] != 'P') ||
			    tl - 1 >= sizeof(num)) {
				illegal = 1;
			} else {
				memcpy(num, text, tl - 1);
				num[tl - 1] = '\0';
				illegal = !all_digits(num);
			}
		} else {	/* a fraction as a percentage */
			double frac = 0, ppm;
			long long r;
			int ret = parse_percent(&frac, text);

			if (ret == 1 || (!ret && !isfinite(frac))) {
				fprintf(stderr, "%s: %s: expected a percentage between 0%% and 100%%, got '%s'\n",
					prefix, d->name, text);
				return -1;
			}
			if (ret) {
				illegal = 1;
			} else {
				ppm = frac * 1e6;
				r = llround(ppm);
				if (fabs(ppm - (double)r) > 1e-6) {
					fprintf(stderr, "%s: %s: a percentage has at most 4 decimal places (the fraction at most 6), got '%s'\n",
						prefix, d->name, text);
					return -1;
				}
				snprintf(num, sizeof(num), "%lld.%06lld", r / 1000000, r % 1000000);
			}
		}
		if (illegal) {
			fprintf(stderr, "%s: illegal value for \"%s\": \"%s\" (%s)\n",
				prefix, word, text, unit_forms[u]);
			return -1;
		}
		core_text = num;
	}
	if (qcore_param_parse(d, core_text, v, err, sizeof(err))) {
		if (core_text == text)
			fprintf(stderr, "%s: %s\n", prefix, err);
		else
			fprintf(stderr, "%s: %s (from '%s')\n", prefix, err, text);
		return -1;
	}
	return 0;
}

/* print_color_rate()'s text (iproute2's lib/json_print.c), for bit/s. */
static void sprint_rate_bits(__u64 rate, char *buf, size_t len)
{
	static const char *const units[] = { "", "K", "M", "G", "T" };
	unsigned long kilo = use_iec ? 1024 : 1000;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(units) - 1; i++) {
		if (rate < kilo)
			break;
		if ((rate % kilo) != 0 && rate < 1000 * kilo)
			break;
		rate /= kilo;
	}
	snprintf(buf, len, "%.0f%s%sbit", (double)rate, units[i],
		 i > 0 && use_iec ? "i" : "");
}

/*
 * value (in the core's unit) as tc prints its unit (0), or -1 when the
 * parameter has none; the text parses back to value exactly.
 */
static int sprint_unit_value(enum qlab_tc_unit u, __u64 value, char *buf, size_t len)
{
	char text[SPRINT_BSIZE];

	switch (u) {
	case QLAB_TC_RATE: {
		__u64 bytes;

		sprint_rate_bits(value, text, sizeof(text));
		if (value % 8 == 0 && !get_rate64(&bytes, text) && bytes == value / 8)
			snprintf(buf, len, "%s", text);
		else
			snprintf(buf, len, "%llu", (unsigned long long)value);
		return 0;
	}
	case QLAB_TC_TIME: {
		__s64 ns;

		if (value > (1ULL << 53)) {
			snprintf(buf, len, "%llu", (unsigned long long)value);
			return 0;
		}
		sprint_time64((__s64)value, text);
		if (!get_time64(&ns, text) && ns == (__s64)value)
			snprintf(buf, len, "%s", text);
		else
			snprintf(buf, len, "%lluns", (unsigned long long)value);
		return 0;
	}
	case QLAB_TC_SIZE: {
		unsigned int sz;

		if (value > 0xffffffffULL) {
			snprintf(buf, len, "%llu", (unsigned long long)value);
			return 0;
		}
		sprint_size((__u32)value, text);
		if (!get_size(&sz, text) && sz == value)
			snprintf(buf, len, "%s", text);
		else
			snprintf(buf, len, "%llub", (unsigned long long)value);
		return 0;
	}
	case QLAB_TC_PKTS:
		snprintf(buf, len, "%llup", (unsigned long long)value);
		return 0;
	default:
		return -1;
	}
}

int qlab_tc_parse_seed(const char *id, const char *text, __u64 *seed)
{
	if (text[0] == '-' || get_u64(seed, text, 10)) {
		fprintf(stderr, "%s: seed: expected an integer 0..18446744073709551615, got '%s'\n",
			id, text);
		return -1;
	}
	return 0;
}

int qlab_tc_add_value(struct nlmsghdr *n, int attr, const struct qcore_param_desc *d,
		      const struct qcore_param_value *v)
{
	int len;

	switch (d->kind) {
	case QCORE_PARAM_U32:
	case QCORE_PARAM_PPM:
		return addattr32(n, TCA_BUF_MAX, attr, (__u32)v->value);
	case QCORE_PARAM_U64:
		return addattr64(n, TCA_BUF_MAX, attr, v->value);
	case QCORE_PARAM_ENUM:
	case QCORE_PARAM_BOOL:
		return addattr8(n, TCA_BUF_MAX, attr, (__u8)v->value);
	case QCORE_PARAM_U32_LIST:
		/* Up to the last non-zero (used) slot, as it was given. */
		for (len = QCORE_MAX_BANDS; len > 1 && !v->list[len - 1]; len--)
			;
		return addattr_l(n, TCA_BUF_MAX, attr, v->list, len * 4);
	}
	return -1;
}

int qlab_tc_attr_value(const struct qcore_param_desc *d, const struct rtattr *a,
		       struct qcore_param_value *v)
{
	int len = RTA_PAYLOAD(a);

	memset(v, 0, sizeof(*v));
	switch (d->kind) {
	case QCORE_PARAM_U32:
	case QCORE_PARAM_PPM:
		if (len != 4)
			return -1;
		v->value = rta_getattr_u32(a);
		return 0;
	case QCORE_PARAM_U64:
		if (len != 8)
			return -1;
		v->value = rta_getattr_u64(a);
		return 0;
	case QCORE_PARAM_ENUM:
	case QCORE_PARAM_BOOL:
		if (len != 1)
			return -1;
		v->value = rta_getattr_u8(a);
		return 0;
	case QCORE_PARAM_U32_LIST:
		if (len < 4 || len % 4 || len > QLAB_LIST_MAX_BYTES)
			return -1;
		memcpy(v->list, RTA_DATA(a), len);
		return 0;
	}
	return -1;
}

void qlab_tc_print_value(const struct qcore_disc_ops *ops, void *params,
			 const struct qcore_param_desc *d,
			 const struct qcore_param_value *v)
{
	char text[160], name[64];

	qcore_param_store(d, params, v);
	if (!sprint_unit_value(qlab_tc_unit_of(d), v->value, text, sizeof(text))) {
		/* "rate 20Mbit"; JSON as before: "rate_bps":20000000 */
		short_name(d->name, name, sizeof(name));
		print_string(PRINT_FP, NULL, "%s ", name);
		print_u64(PRINT_JSON, d->name, NULL, v->value);
		print_string(PRINT_FP, NULL, "%s ", text);
		return;
	}
	if (qcore_params_format(ops, params, d->name, text, sizeof(text)))
		snprintf(text, sizeof(text), "?");
	print_string(PRINT_FP, NULL, "%s ", d->name);
	switch (d->kind) {
	case QCORE_PARAM_U32:
	case QCORE_PARAM_U64:
	case QCORE_PARAM_BOOL:
		/* JSON keeps integers numbers; fractions stay exact decimal text. */
		print_u64(PRINT_JSON, d->name, NULL, v->value);
		print_string(PRINT_FP, NULL, "%s ", text);
		break;
	default:
		print_string(PRINT_ANY, d->name, "%s ", text);
		break;
	}
}

int qlab_tc_print_xstats(const char *id, const char *const *variants,
			 unsigned int nvariants, FILE *f, struct rtattr *xstats)
{
	static const char *const reasons[] = { "", "overflow", "aqm", "precedence_local",
					       "precedence_cross", "delay" };
	const struct tc_qlab_xstats *xs;
	const char *variant;
	unsigned int b, r;

	if (!xstats)
		return 0;
	if (RTA_PAYLOAD(xstats) < sizeof(*xs))
		return -1;
	xs = RTA_DATA(xstats);
	variant = xs->variant < nvariants ? variants[xs->variant] : "?";
	if (!strcmp(id, "ncq")) {
		print_u64(PRINT_ANY, "received", " received %llu", xs->received);
		print_u64(PRINT_ANY, "favoured", " favoured %llu", xs->favoured);
		print_u64(PRINT_ANY, "normal", " normal %llu", xs->normal);
	} else if (!strcmp(id, "cqaqm")) {
		print_uint(PRINT_ANY, "nonlocal_active", " nonlocal_active %u", xs->nonlocal_active);
		print_u64(PRINT_ANY, "nonlocal_on", " nonlocal_on %llu", xs->nonlocal_on);
	} else if (!strcmp(id, "rbwfq")) {
		print_string(PRINT_ANY, "aqm", " aqm %s", variant);
	} else if (!strcmp(id, "srd")) {
		print_string(PRINT_ANY, "variant", " variant %s", variant);
		print_uint(PRINT_ANY, "n_d", " n_d %u", xs->n_d);
		print_uint(PRINT_ANY, "n_r", " n_r %u", xs->n_r);
	}
	open_json_array(PRINT_JSON, "bands");
	for (b = 0; b < xs->nbands && b < QLAB_MAX_BANDS; b++) {
		const struct tc_qlab_band_xstats *x = &xs->band[b];

		open_json_object(NULL);
		print_string(PRINT_FP, NULL, "%s", _SL_);
		print_uint(PRINT_ANY, "band", " band %u:", b);
		print_uint(PRINT_ANY, "backlog_pkts", " backlog %up", x->backlog_pkts);
		print_u64(PRINT_ANY, "backlog_bytes", " %llub", x->backlog_bytes);
		print_u64(PRINT_ANY, "arrivals", " arrivals %llu", x->arrivals);
		print_u64(PRINT_ANY, "sent", " sent %llu", x->sent);
		print_u64(PRINT_ANY, "marked", " marked %llu", x->marked);
		print_u64(PRINT_ANY, "purged", " purged %llu", x->purged);
		for (r = 1; r < ARRAY_SIZE(reasons); r++) {
			char key[40];

			snprintf(key, sizeof(key), "drop_%s", reasons[r]);
			print_string(PRINT_FP, NULL, " %s", key);
			print_u64(PRINT_ANY, key, " %llu", x->drops[r]);
		}
		if (!strcmp(id, "rbwfq")) {
			char p[32];

			snprintf(p, sizeof(p), "%.6f", x->p_q32 / 4294967296.0);
			print_string(PRINT_ANY, "p", " P %s", p);
			print_u64(PRINT_ANY, "p_q32", " (q32 %llu)", x->p_q32);
			if (xs->variant == 0) {
				print_u64(PRINT_ANY, "rate_bps", " x_bps %llu", x->rate_bps);
				print_u64(PRINT_ANY, "capacity_bps", " c_bps %llu", x->capacity_bps);
			}
		}
		if (!strcmp(id, "srd"))
			print_u64(PRINT_ANY, "limit_bytes", " limit_bytes %llu", x->limit_bytes);
		close_json_object();
	}
	close_json_array(PRINT_JSON, NULL);
	return 0;
}

/* ---- the dedicated plugins -------------------------------------------- */

static void usage(const struct qlab_tc_kind *k)
{
	int v;

	fprintf(stderr, "Usage: ... %s [ seed N ]", k->id);
	if (k->attr_variant) {
		fprintf(stderr, " [ %s ", k->variant_keyword);
		for (v = 0; v < k->nvariants; v++)
			fprintf(stderr, "%s%s", v ? "|" : "", k->variants[v].name);
		fprintf(stderr, " ]");
	}
	fprintf(stderr, " [ PARAMETER VALUE ]...\n"
		"Example: %s\n"
		"PARAMETER is a name below, with or without its unit suffix (_bytes, _pkts, _ns, _bps, _ppm).\n"
		"VALUE in iproute2's units (rate 20mbit, d 50ms, size 1500b, limit 100, thresh 5%%, as listed\n"
		"under units), or a plain integer in the parameter's own unit (rate_bps 20000000, d_ns 50000000).\n"
		"seed: the core generator's seed (default: random, shown by tc qdisc show).\n"
		"Any discipline of the core also runs as: tc qdisc add ... qlab disc NAME ... (qlab help).\n",
		k->example);
	for (v = 0; v < k->nvariants; v++) {
		fprintf(stderr, "\n%s %s:\n", k->attr_variant ? k->variant_keyword : "parameters of",
			k->variants[v].name);
		if (v && k->variants[v].attr_base == k->variants[v - 1].attr_base) {
			fprintf(stderr, "  the same parameters as %s\n", k->variants[v - 1].name);
			continue;
		}
		qcore_params_usage(k->variants[v].ops, stderr);
		qlab_tc_units_usage(k->variants[v].ops, stderr);
	}
}

int qlab_tc_parse(const struct qlab_tc_kind *k, int argc, char **argv,
		  struct nlmsghdr *n, const char *dev)
{
	const struct qlab_tc_variant *chosen = NULL;
	struct qcore_param_value *vals[QLAB_MAX_BANDS] = { 0 };	/* per variant */
	unsigned char set[QLAB_MAX_BANDS][64] = { { 0 } };
	struct rtattr *tail;
	__u64 seed = 0;
	int have_seed = 0, variant = -1, i, v, ret = -1;

	/* The variant first: it decides which parameter table applies. */
	for (i = 0; k->attr_variant && i < argc; i++) {
		if (strcmp(argv[i], k->variant_keyword))
			continue;
		if (i + 1 == argc) {
			fprintf(stderr, "%s: %s needs a value\n", k->id, k->variant_keyword);
			return -1;
		}
		for (v = 0; v < k->nvariants; v++)
			if (!strcmp(argv[i + 1], k->variants[v].name))
				variant = v;
		if (variant < 0) {
			fprintf(stderr, "%s: %s must be one of", k->id, k->variant_keyword);
			for (v = 0; v < k->nvariants; v++)
				fprintf(stderr, "%s%s", v ? "|" : " ", k->variants[v].name);
			fprintf(stderr, ", got '%s'\n", argv[i + 1]);
			return -1;
		}
		chosen = &k->variants[variant];
	}
	for (v = 0; v < k->nvariants; v++) {
		vals[v] = calloc(k->variants[v].ops->nparams + 1, sizeof(*vals[v]));
		if (!vals[v])
			goto out;
	}

	for (i = 0; i < argc; i++) {
		const char *word = argv[i];
		int idx = -1;

		if (!strcmp(word, "help")) {
			usage(k);
			goto out;
		}
		if (i + 1 == argc) {
			fprintf(stderr, "%s: option '%s' needs a value (tc qdisc add ... %s help)\n",
				k->id, word, k->id);
			goto out;
		}
		if (k->attr_variant && !strcmp(word, k->variant_keyword)) {
			i++;
			continue;
		}
		if (!strcmp(word, "seed")) {
			if (qlab_tc_parse_seed(k->id, argv[i + 1], &seed))
				goto out;
			have_seed = 1;
			i++;
			continue;
		}
		/* The chosen variant's table, else the first variant that knows the name. */
		for (v = 0; v < k->nvariants; v++) {
			if (chosen && &k->variants[v] != chosen)
				continue;
			idx = qlab_tc_find_param(k->variants[v].ops, word);
			if (idx >= 0)
				break;
		}
		if (idx < 0) {
			fprintf(stderr, "%s: unknown option '%s'%s (tc qdisc add ... %s help)\n",
				k->id, word,
				chosen ? " for this variant" : "", k->id);
			goto out;
		}
		if (!chosen && k->attr_variant && k->nvariants > 1) {
			/* Remember which table the names came from; all must agree. */
			int w;

			for (w = 0; w < k->nvariants; w++)
				if (w != v && k->variants[w].attr_base != k->variants[v].attr_base &&
				    memchr(set[w], 1, sizeof(set[w]))) {
					fprintf(stderr, "%s: '%s' is a %s parameter but earlier ones are %s's: give %s %s|%s\n",
						k->id, word, k->variants[v].name, k->variants[w].name,
						k->variant_keyword, k->variants[0].name, k->variants[1].name);
					goto out;
				}
		}
		if (qlab_tc_parse_value(k->id, &k->variants[v].ops->params[idx], word,
					argv[i + 1], dev, &vals[v][idx]))
			goto out;
		set[v][idx] = 1;
		i++;
	}

	tail = addattr_nest(n, TCA_BUF_MAX, TCA_OPTIONS);
	if (have_seed)
		addattr64(n, TCA_BUF_MAX, k->attr_seed, seed);
	if (chosen)
		addattr8(n, TCA_BUF_MAX, k->attr_variant, (__u8)variant);
	for (v = 0; v < k->nvariants; v++) {
		const struct qcore_disc_ops *ops = k->variants[v].ops;
		unsigned int p;

		for (p = 0; p < ops->nparams; p++)
			if (set[v][p] && qlab_tc_add_value(n, k->variants[v].attr_base + (int)p,
							   &ops->params[p], &vals[v][p]))
				goto out;
	}
	addattr_nest_end(n, tail);
	ret = 0;
out:
	for (v = 0; v < k->nvariants; v++)
		free(vals[v]);
	return ret;
}

int qlab_tc_print(const struct qlab_tc_kind *k, FILE *f, struct rtattr *opt)
{
	struct rtattr *tb[k->maxattr + 1];
	const struct qlab_tc_variant *v = &k->variants[0];
	struct qcore_param_value val;
	unsigned int p;
	void *params;

	if (!opt)
		return 0;
	parse_rtattr_nested(tb, k->maxattr, opt);
	if (k->attr_variant && tb[k->attr_variant]) {
		__u8 idx = rta_getattr_u8(tb[k->attr_variant]);

		if (idx < k->nvariants)
			v = &k->variants[idx];
		print_string(PRINT_FP, NULL, "%s ", k->variant_keyword);
		print_string(PRINT_ANY, k->variant_keyword, "%s ", v->name);
	}
	params = calloc(1, v->ops->params_size + 1);
	if (!params)
		return -1;
	for (p = 0; p < v->ops->nparams; p++) {
		struct rtattr *a = tb[v->attr_base + (int)p];

		if (a && !qlab_tc_attr_value(&v->ops->params[p], a, &val))
			qlab_tc_print_value(v->ops, params, &v->ops->params[p], &val);
	}
	free(params);
	if (tb[k->attr_seed])
		print_u64(PRINT_ANY, "seed", "seed %llu ", rta_getattr_u64(tb[k->attr_seed]));
	return 0;
}

int qlab_tc_kind_xstats(const struct qlab_tc_kind *k, FILE *f, struct rtattr *xstats)
{
	const char *names[QLAB_MAX_BANDS];
	int v;

	for (v = 0; v < k->nvariants && v < QLAB_MAX_BANDS; v++)
		names[v] = k->variants[v].name;
	return qlab_tc_print_xstats(k->id, names, v, f, xstats);
}
