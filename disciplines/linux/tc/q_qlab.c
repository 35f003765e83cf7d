// SPDX-License-Identifier: GPL-2.0
/*
 * q_qlab.c - tc plugin of the generic qlab qdisc (sch_qlab.c): any
 * discipline of the core's registry, by the core's names.
 *
 *	tc qdisc add dev eth0 root qlab disc ncq [ seed N ] [ PARAMETER VALUE ]...
 *	tc qdisc add dev eth0 root qlab disc srd rate 20mbit d 50ms	(units)
 *	tc qdisc add dev eth0 root qlab disc srd rate_bps 20000000 d_ns 50000000
 *	tc qdisc add dev eth0 root qlab help		the disciplines
 *	tc qdisc add dev eth0 root qlab disc ncq help	ncq's parameters
 *
 * The discipline's table names the parameters, types them and gives their
 * usage; values in iproute2's units go through iproute2's parsers and
 * every value through the core's parser, and tc qdisc show prints them in
 * iproute2's units ("rate 20Mbit d 50ms") or the core's forms (qlab_tc.c).  Without `disc` the kernel keeps the running discipline (on
 * change) or starts droptail (on add); setting parameters needs `disc`.
 */
#include <stdlib.h>
#include <string.h>
#include "qlab_tc.h"
#include "qcore_usage.h"

static void qlab_disc_list(FILE *f, const char *sep)
{
	unsigned int i;

	for (i = 0; qcore_disciplines[i]; i++)
		fprintf(f, "%s%s", i ? sep : "", qcore_disciplines[i]->name);
}

static void usage(const struct qcore_disc_ops *ops)
{
	unsigned int i;

	if (ops) {
		fprintf(stderr, "Usage: ... qlab disc %s [ seed N ] [ PARAMETER VALUE ]...\n"
			"%s: %s\n"
			"bands: %s\n"
			"PARAMETER is a name below, with or without its unit suffix (_bytes, _pkts, _ns, _bps, _ppm).\n"
			"VALUE in iproute2's units (rate 20mbit, d 50ms, size 1500b, limit 100, thresh 5%%, as listed\n"
			"under units), or a plain integer in the parameter's own unit (rate_bps 20000000, d_ns 50000000).\n"
			"seed: the core generator's seed (default: random, shown by tc qdisc show).\n",
			ops->name, ops->name, ops->summary, ops->bands_help ? ops->bands_help : "");
		qcore_params_usage(ops, stderr);
		qlab_tc_units_usage(ops, stderr);
		return;
	}
	fprintf(stderr, "Usage: ... qlab [ disc NAME ] [ seed N ] [ PARAMETER VALUE ]...\n"
		"       ... qlab disc NAME help		NAME's parameters\n"
		"Example: tc qdisc add dev eth0 root qlab disc ncq size 130b thresh 5%% limit 100\n"
		"         tc qdisc add dev eth0 root qlab disc srd rate 20mbit d 50ms\n"
		"disc: a discipline of the qlab core (on add, default droptail; on change, the one running):\n");
	for (i = 0; qcore_disciplines[i]; i++)
		fprintf(stderr, "  %-10s %s\n", qcore_disciplines[i]->name,
			qcore_disciplines[i]->summary);
}

static int qlab_parse_opt(struct qdisc_util *qu, int argc, char **argv,
			  struct nlmsghdr *n, const char *dev)
{
	const struct qcore_disc_ops *ops = NULL;
	struct qcore_param_value *vals = NULL;
	unsigned char *set = NULL;
	char err[QCORE_ERRLEN], prefix[64];
	struct rtattr *tail, *params;
	__u64 seed = 0;
	int have_seed = 0, i, idx, ret = -1;
	unsigned int p;

	/* The discipline first: its table names the parameters. */
	for (i = 0; i < argc && strcmp(argv[i], "help"); i += 2) {
		if (strcmp(argv[i], "disc") || i + 1 == argc)
			continue;
		ops = qcore_find(argv[i + 1]);
		if (!ops) {
			fprintf(stderr, "qlab: disc: unknown discipline '%s' (one of ", argv[i + 1]);
			qlab_disc_list(stderr, "|");
			fprintf(stderr, "; tc qdisc add ... qlab help)\n");
			return -1;
		}
	}
	vals = calloc(ops ? ops->nparams + 1 : 1, sizeof(*vals));
	set = calloc(ops ? ops->nparams + 1 : 1, 1);
	if (!vals || !set)
		goto out;

	for (i = 0; i < argc; i++) {
		const char *word = argv[i];

		if (!strcmp(word, "help")) {
			usage(ops);
			goto out;
		}
		if (i + 1 == argc) {
			fprintf(stderr, "qlab: option '%s' needs a value (tc qdisc add ... qlab help)\n",
				word);
			goto out;
		}
		if (!strcmp(word, "disc")) {
			i++;
			continue;
		}
		if (!strcmp(word, "seed")) {
			if (qlab_tc_parse_seed("qlab", argv[i + 1], &seed))
				goto out;
			have_seed = 1;
			i++;
			continue;
		}
		if (!ops) {
			fprintf(stderr, "qlab: '%s': name the discipline (disc NAME) to set its parameters\n",
				word);
			goto out;
		}
		idx = qlab_tc_find_param(ops, word);
		if (idx < 0) {
			qcore_param_index(ops, word, err, sizeof(err));
			fprintf(stderr, "qlab: %s (tc qdisc add ... qlab disc %s help)\n",
				err, ops->name);
			goto out;
		}
		snprintf(prefix, sizeof(prefix), "qlab: %s", ops->name);
		if (qlab_tc_parse_value(prefix, &ops->params[idx], word, argv[i + 1], dev,
					&vals[idx]))
			goto out;
		set[idx] = 1;
		i++;
	}

	tail = addattr_nest(n, TCA_BUF_MAX, TCA_OPTIONS);
	if (ops)
		addattr_l(n, TCA_BUF_MAX, TCA_QLAB_DISC, ops->name, strlen(ops->name) + 1);
	if (have_seed)
		addattr64(n, TCA_BUF_MAX, TCA_QLAB_SEED, seed);
	if (ops) {
		params = addattr_nest(n, TCA_BUF_MAX, TCA_QLAB_PARAMS);
		for (p = 0; p < ops->nparams; p++)
			if (set[p] && qlab_tc_add_value(n, TCA_QLAB_PARAM(p), &ops->params[p],
							&vals[p]))
				goto out;
		addattr_nest_end(n, params);
	}
	addattr_nest_end(n, tail);
	ret = 0;
out:
	free(vals);
	free(set);
	return ret;
}

static int qlab_print_opt(struct qdisc_util *qu, FILE *f, struct rtattr *opt)
{
	struct rtattr *tb[TCA_QLAB_MAX + 1];
	const struct qcore_disc_ops *ops;
	struct qcore_param_value val;
	const char *name;
	void *params;
	unsigned int p;

	if (!opt)
		return 0;
	parse_rtattr_nested(tb, TCA_QLAB_MAX, opt);
	if (!tb[TCA_QLAB_DISC])
		return 0;
	name = rta_getattr_str(tb[TCA_QLAB_DISC]);
	ops = qcore_find(name);
	print_string(PRINT_FP, NULL, "%s ", "disc");
	print_string(PRINT_ANY, "disc", "%s ", name);
	if (!ops) {
		print_string(PRINT_FP, NULL, "%s ", "(parameters unknown to this tc plugin)");
	} else if (tb[TCA_QLAB_PARAMS]) {
		struct rtattr *pt[ops->nparams + 1];

		parse_rtattr_nested(pt, ops->nparams, tb[TCA_QLAB_PARAMS]);
		params = calloc(1, ops->params_size + 1);
		if (!params)
			return -1;
		for (p = 0; p < ops->nparams; p++) {
			struct rtattr *a = pt[TCA_QLAB_PARAM(p)];

			if (a && !qlab_tc_attr_value(&ops->params[p], a, &val))
				qlab_tc_print_value(ops, params, &ops->params[p], &val);
		}
		free(params);
	}
	if (tb[TCA_QLAB_SEED])
		print_u64(PRINT_ANY, "seed", "seed %llu ", rta_getattr_u64(tb[TCA_QLAB_SEED]));
	return 0;
}

static int qlab_print_xstats(struct qdisc_util *qu, FILE *f, struct rtattr *xstats)
{
	return qlab_tc_print_xstats("qlab", NULL, 0, f, xstats);
}

__attribute__((visibility("default"))) struct qdisc_util qlab_qdisc_util = {
	.id = "qlab",
	.parse_qopt = qlab_parse_opt,
	.print_qopt = qlab_print_opt,
	.print_xstats = qlab_print_xstats,
};
