// SPDX-License-Identifier: GPL-2.0
/*
 * sch_qlab.c - the generic qlab qdisc: any discipline of the core's
 * registry (qcore_disciplines[], disciplines/core/qcore.c) in the generic
 * adapter (qlab_sch.c), named and configured by the core's own names:
 *
 *	tc qdisc add dev eth0 root qlab disc ncq size 130b thresh 5% limit 100
 *	tc qdisc add dev eth0 root qlab disc red seed 7 min 5 max 15 ecn 1
 *	tc qdisc add dev eth0 root qlab disc srd rate 20mbit d 50ms
 *
 * Values in iproute2's units (rates, times, sizes, percentages) or plain
 * integers in the core's units (rate_bps 20000000): the tc plugin
 * (tc/q_qlab.c, tc/qlab_tc.c) converts; the kernel sees the same typed
 * values either way.
 *
 * The parameters travel numbered by the core's table (TCA_QLAB_PARAMS,
 * qlab_sched.h), so a new discipline of the core runs here with no kernel
 * file of its own.  Statistics: the adapter's per band (the dedicated
 * qdiscs, sch_ncq.c ..., add their discipline's own counters).
 */
#include <linux/module.h>

#include "qlab_sch.h"

static struct qlab_kind qlab_generic_kind = {
	.qdisc_ops = { .id = "qlab", .owner = THIS_MODULE },
};

static int __init qlab_module_init(void)
{
	return qlab_register(&qlab_generic_kind);
}

static void __exit qlab_module_exit(void)
{
	qlab_unregister(&qlab_generic_kind);
}

module_init(qlab_module_init);
module_exit(qlab_module_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("qlab: any discipline of the qlab discipline core as a qdisc");
