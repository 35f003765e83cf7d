/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * qcore_params.h - text <-> parameter struct, driven by each discipline's
 * qcore_param_desc table.  Userspace only (libc); the kernel adapter fills
 * the same structs from netlink and calls the same check_params().
 *
 * Every function that can fail returns 0 or -1 with a one-line message in
 * err (no trailing newline).  Values are never clamped: out of range is an
 * error.
 */
#ifndef QCORE_PARAMS_H
#define QCORE_PARAMS_H

#include <stdio.h>
#include "qcore.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Zero *params, then set every parameter from its table default. */
int qcore_params_defaults(const struct qcore_disc_ops *ops, void *params,
			  char *err, size_t errlen);

/*
 * Set one parameter from text.  Unknown name: the message lists the valid
 * names.  Bad value: the message names the parameter, the expected form and
 * the range or choices.  Forms: U32/U64 decimal digits; PPM an exact decimal
 * with at most 6 places ("0.05", "1", "0.000001"; not "1e-3", "-0.1",
 * "0.0000001"); ENUM one of the choices; BOOL 0 or 1; U32_LIST "a:b:c".
 * Cross-parameter checks are left to ops->check_params().
 */
int qcore_params_set(const struct qcore_disc_ops *ops, void *params,
		     const char *name, const char *value,
		     char *err, size_t errlen);

/*
 * Write parameter `name`'s value as text that qcore_params_set() accepts
 * (e.g. "0.05", "journal").  Returns 0, or -1 for an unknown name or when
 * out is too small.
 */
int qcore_params_format(const struct qcore_disc_ops *ops, const void *params,
			const char *name, char *out, size_t outlen);

/* The table entry for `name`, or NULL. */
const struct qcore_param_desc *qcore_params_find(const struct qcore_disc_ops *ops,
						 const char *name);

/* For every parameter: name, unit, default, range or choices, help. */
void qcore_params_usage(const struct qcore_disc_ops *ops, FILE *out);

#ifdef __cplusplus
}
#endif

#endif /* QCORE_PARAMS_H */
