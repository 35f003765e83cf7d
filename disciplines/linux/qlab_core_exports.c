// SPDX-License-Identifier: GPL-2.0
/*
 * qlab_core_exports.c - the discipline core (the disciplines/core sources, compiled
 * unchanged into qlab_core.ko) as the qdisc modules use it.
 */
#include <linux/module.h>

#include "qcore.h"
#include "ncq.h"
#include "cqaqm.h"
#include "srd.h"
#include "rbaqm.h"
#include "wred.h"

EXPORT_SYMBOL_GPL(qcore_reason_names);
EXPORT_SYMBOL_GPL(ncq_ops);
EXPORT_SYMBOL_GPL(ncq_params_init);
EXPORT_SYMBOL_GPL(cqaqm_ops);
EXPORT_SYMBOL_GPL(cqaqm_params_init);
EXPORT_SYMBOL_GPL(srd_ops);
EXPORT_SYMBOL_GPL(rd_ops);
EXPORT_SYMBOL_GPL(srd_params_init);
EXPORT_SYMBOL_GPL(rbaqm_ops);
EXPORT_SYMBOL_GPL(rbaqm_params_init);
EXPORT_SYMBOL_GPL(wred_ops);
EXPORT_SYMBOL_GPL(wred_params_init);
EXPORT_SYMBOL_GPL(wred_prob_q32);
