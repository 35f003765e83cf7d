/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * qcore_usage.h - the usage text of a discipline's parameters (stdio;
 * userspace adapters' --help).  Parsing, formatting and the configure
 * sequence are kernel-compilable and declared in qcore.h.
 */
#ifndef QCORE_USAGE_H
#define QCORE_USAGE_H

#include <stdio.h>
#include "qcore.h"

#ifdef __cplusplus
extern "C" {
#endif

/* For every parameter: name, unit, default, range or choices, help. */
void qcore_params_usage(const struct qcore_disc_ops *ops, FILE *out);

#ifdef __cplusplus
}
#endif

#endif /* QCORE_USAGE_H */
