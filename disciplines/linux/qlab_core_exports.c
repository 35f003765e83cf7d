// SPDX-License-Identifier: GPL-2.0
/*
 * qlab_core_exports.c - the discipline core (the disciplines/core sources,
 * compiled unchanged into qlab_core.ko) as the other modules use it: the
 * registry and the parser, for any discipline (the test module; sch_qlab
 * needs only the adapter's qlab_register()), and the ops of the
 * disciplines the dedicated qdiscs (sch_ncq, ...) name.
 */
#include <linux/module.h>

#include "qcore.h"
#include "ncq.h"
#include "cqaqm.h"
#include "srd.h"
#include "rbaqm.h"
#include "wred.h"

EXPORT_SYMBOL_GPL(qcore_reason_names);
EXPORT_SYMBOL_GPL(qcore_disciplines);
EXPORT_SYMBOL_GPL(qcore_find);
EXPORT_SYMBOL_GPL(qcore_param_index);
EXPORT_SYMBOL_GPL(qcore_param_parse);

/* The dedicated qdiscs' disciplines. */
EXPORT_SYMBOL_GPL(ncq_ops);
EXPORT_SYMBOL_GPL(cqaqm_ops);
EXPORT_SYMBOL_GPL(srd_ops);
EXPORT_SYMBOL_GPL(rd_ops);
EXPORT_SYMBOL_GPL(rbaqm_ops);
EXPORT_SYMBOL_GPL(wred_ops);
EXPORT_SYMBOL_GPL(wred_prob_q32);
