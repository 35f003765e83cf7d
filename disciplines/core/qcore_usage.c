// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * qcore_usage.c - the parameters' usage text, for the userspace adapters'
 * --help (qcore-replay, the tc plugins).  Userspace only (stdio).
 */
#include "qcore_usage.h"

void qcore_params_usage(const struct qcore_disc_ops *ops, FILE *out)
{
	char form[96];
	int width = 12;
	u32 i;

	/* one column wide enough for the longest name */
	for (i = 0; i < ops->nparams; i++)
		if ((int)strlen(ops->params[i].name) > width)
			width = (int)strlen(ops->params[i].name);
	fprintf(out, "parameters (--param NAME=VALUE):\n");
	if (!ops->nparams)
		fprintf(out, "  (none)\n");
	for (i = 0; i < ops->nparams; i++) {
		const struct qcore_param_desc *d = &ops->params[i];

		qcore_param_describe(d, form, sizeof(form));
		fprintf(out, "  %-*s unit %s, default %s, %s\n", width, d->name,
			d->unit, d->dflt, form);
		fprintf(out, "  %-*s %s\n", width, "", d->help);
	}
}
