/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause WITH Linux-syscall-note */
/*
 * qlab_sched.h - the netlink interface of qlab's qdiscs, shared by the
 * kernel modules and the tc plugins (uapi): the generic qdisc `qlab`
 * (sch_qlab.c: any discipline of the core's registry) and the dedicated
 * ones (ncq, cqaqm, rbwfq, srd).
 *
 * TCA_OPTIONS is a nest of the attributes below.  Every discipline
 * parameter is one attribute, in the order and the units of the core's
 * parameter table (disciplines/core/<alg>.c, `<alg>_param_descs`), so tc,
 * the replay tool and ns-3 all speak the same units:
 *	U32 parameter (packets, bytes, flows)	NLA_U32
 *	PPM parameter (exact decimal x 10^6)	NLA_U32, e.g. thresh 0.05 = 50000
 *	U64 parameter (ns, bit/s, bytes)	NLA_U64
 *	ENUM parameter				NLA_U8, index into the choices
 *	BOOL parameter				NLA_U8, 0 or 1
 *	U32_LIST parameter			binary, 1..8 native-endian u32
 * Absent attributes keep their value on change and take the core's default
 * on init.  dump returns every parameter of the running discipline, so
 * `tc qdisc show` output fed back to `tc qdisc change` is the identity.
 *
 * The generic qdisc numbers the parameters by the core's table (attribute
 * i + 1 of TCA_QLAB_PARAMS is parameter i), so a new discipline needs no
 * change here.  The dedicated qdiscs name them in the enums below; the
 * modules check at load time that these name the core's table entries in
 * order (a mismatch refuses to load).
 *
 * Classification (every qdisc), the core's qcore_pkt_set_tos() of the IPv4
 * ToS byte / IPv6 traffic class:
 *	cls  = tos >> 5		(DSCP class selector, 0..7)
 *	prec = (tos >> 3) & 3	(AF drop precedence bits)
 *	ECT  = tos & 3 != 0	(a mark on a packet that is not ECT is a drop)
 * len = IP length (no link-layer header); flow = the core's
 * qcore_flow_hash() of the 5-tuple in host byte order, ports of TCP and
 * UDP only (0 for other protocols and non-first fragments); an IPv6
 * address enters as the XOR of its four 32-bit words, the protocol as the
 * first next-header (ports only when that is TCP or UDP); 0 for non-IP.
 */
#ifndef QLAB_SCHED_H
#define QLAB_SCHED_H

#include <linux/types.h>

#define QLAB_MAX_BANDS 8	/* = QCORE_MAX_BANDS */
#define QLAB_MAX_REASONS 8	/* >= QCORE_REASON__COUNT */
#define QLAB_LIST_MAX_BYTES (QLAB_MAX_BANDS * 4)

/* Drop reasons, the index into tc_qlab_band_xstats.drops (= enum qcore_reason). */
enum {
	QLAB_REASON_NONE,
	QLAB_REASON_OVERFLOW,
	QLAB_REASON_AQM,
	QLAB_REASON_PRECEDENCE_LOCAL,
	QLAB_REASON_PRECEDENCE_CROSS,
	QLAB_REASON_DELAY,
	__QLAB_REASON_COUNT
};

/*
 * qlab: the generic qdisc, any discipline of the core's registry
 * (qcore_disciplines[], qcore_find()), named by the core's name.
 */
enum {
	TCA_QLAB_UNSPEC,
	TCA_QLAB_PAD,
	TCA_QLAB_DISC,		/* string: the core's discipline ("ncq", "red", ...);
				 * absent: droptail on init, the running one on
				 * change; another one starts from its defaults */
	TCA_QLAB_SEED,		/* u64, the core generator's seed */
	TCA_QLAB_PARAMS,	/* nested: TCA_QLAB_PARAM(i) = parameter i */
	__TCA_QLAB_MAX
};
#define TCA_QLAB_MAX (__TCA_QLAB_MAX - 1)
#define QLAB_DISC_NAMSIZ 32	/* a discipline's name, NUL included */

/*
 * Inside TCA_QLAB_PARAMS: parameter i of the discipline's table
 * (ops->params[i]) is attribute i + 1, typed by the table's kind as above;
 * attribute 0 only pads a u64 to 8 bytes (ignored).
 */
#define TCA_QLAB_PARAM_PAD 0
#define TCA_QLAB_PARAM(i) ((i) + 1)

/* ncq: core ncq.c */
enum {
	TCA_NCQ_UNSPEC,
	TCA_NCQ_PAD,
	TCA_NCQ_SEED,		/* u64, the core generator's seed */
	TCA_NCQ_SIZE_BYTES,	/* u32 */
	TCA_NCQ_THRESH,		/* u32 ppm */
	TCA_NCQ_LIMIT_PKTS,	/* u32 */
	TCA_NCQ_VARIANT,	/* u8: 0 journal, 1 conf-literal */
	TCA_NCQ_MODE,		/* u8: 0 deterministic, 1 probabilistic */
	TCA_NCQ_FAVOR_ACKS,	/* u8 */
	TCA_NCQ_RAMP,		/* u32 ppm */
	__TCA_NCQ_MAX
};
#define TCA_NCQ_MAX (__TCA_NCQ_MAX - 1)

/* cqaqm: core cqaqm.c */
enum {
	TCA_CQAQM_UNSPEC,
	TCA_CQAQM_PAD,
	TCA_CQAQM_SEED,			/* u64 (CQ-AQM draws no random numbers) */
	TCA_CQAQM_B_HIGH,		/* u32 packets */
	TCA_CQAQM_B_LOW,		/* u32 packets */
	TCA_CQAQM_T_HIGH_LOCAL,		/* u32 packets */
	TCA_CQAQM_T_LOW_LOCAL,		/* u32 packets */
	TCA_CQAQM_T_LOW_NONLOCAL,	/* u32 packets */
	TCA_CQAQM_SCHEDULER,		/* u8: 0 strict, 1 wrr, 2 drr */
	TCA_CQAQM_WEIGHTS,		/* u32 list, packets per turn, high:low */
	TCA_CQAQM_QUANTUM_BYTES,	/* u32 list, high:low */
	TCA_CQAQM_HYSTERESIS,		/* u8 */
	TCA_CQAQM_T_LOW_OFF,		/* u32 packets */
	TCA_CQAQM_T_HIGH_LOCAL_OFF,	/* u32 packets */
	TCA_CQAQM_T_LOW_LOCAL_OFF,	/* u32 packets */
	__TCA_CQAQM_MAX
};
#define TCA_CQAQM_MAX (__TCA_CQAQM_MAX - 1)

/* srd: core srd.c, S-RD (variant 0) or RD (variant 1), one parameter table */
enum {
	TCA_SRD_UNSPEC,
	TCA_SRD_PAD,
	TCA_SRD_SEED,		/* u64 (S-RD and RD draw no random numbers) */
	TCA_SRD_VARIANT,	/* u8: 0 srd, 1 rd */
	TCA_SRD_RATE_BPS,	/* u64 */
	TCA_SRD_D_NS,		/* u64 */
	TCA_SRD_K,		/* u32 ppm */
	TCA_SRD_BUFFER_BYTES,	/* u64 */
	TCA_SRD_BMAX_BYTES,	/* u64 */
	TCA_SRD_SD_MAX_BYTES,	/* u32 */
	TCA_SRD_SR_MAX_BYTES,	/* u32 */
	TCA_SRD_N_D,		/* u32 flows */
	TCA_SRD_N_R,		/* u32 flows */
	TCA_SRD_PERIOD_NS,	/* u64 */
	__TCA_SRD_MAX
};
#define TCA_SRD_MAX (__TCA_SRD_MAX - 1)

/*
 * rbwfq: per-class AQM in the low-jitter WFQ; RB-AQM (aqm 0, core
 * rbaqm.c) or the WRED baseline (aqm 1, core wred.c).  Each AQM has its own
 * attributes; those of the AQM not running are rejected.
 */
enum {
	TCA_RBWFQ_UNSPEC,
	TCA_RBWFQ_PAD,
	TCA_RBWFQ_SEED,			/* u64 */
	TCA_RBWFQ_AQM,			/* u8: 0 rbaqm, 1 wred */
	TCA_RBWFQ_RB_CLASSES,		/* u32 */
	TCA_RBWFQ_RB_RATE_BPS,		/* u64 */
	TCA_RBWFQ_RB_WEIGHTS_BYTES,	/* u32 list */
	TCA_RBWFQ_RB_MAXS_BYTES,	/* u32 */
	TCA_RBWFQ_RB_U_PPM,		/* u32 list, ppm */
	TCA_RBWFQ_RB_K,			/* u32 ppm */
	TCA_RBWFQ_RB_GAIN,		/* u32 ppm */
	TCA_RBWFQ_RB_TAU_NS,		/* u64 */
	TCA_RBWFQ_RB_RATE_ESTIMATE,	/* u8: 0 admitted, 1 offered */
	TCA_RBWFQ_RB_CAPACITY_ESTIMATOR,/* u8: 0 window, 1 ewma */
	TCA_RBWFQ_RB_WINDOW_PKTS,	/* u32 */
	TCA_RBWFQ_RB_CAPACITY_WEIGHT,	/* u32 ppm */
	TCA_RBWFQ_RB_FAIR_SHARE,	/* u8 */
	TCA_RBWFQ_RB_ECN,		/* u8 */
	TCA_RBWFQ_RB_LIMIT_PKTS,	/* u32, per class */
	TCA_RBWFQ_WRED_CLASSES,		/* u32 */
	TCA_RBWFQ_WRED_Q_PKTS,		/* u32 list */
	TCA_RBWFQ_WRED_W_Q,		/* u32 ppm */
	TCA_RBWFQ_WRED_WEIGHTS_BYTES,	/* u32 list */
	TCA_RBWFQ_WRED_MAXS_BYTES,	/* u32 */
	TCA_RBWFQ_WRED_ECN,		/* u8 */
	__TCA_RBWFQ_MAX
};
#define TCA_RBWFQ_MAX (__TCA_RBWFQ_MAX - 1)

/*
 * Statistics (TCA_XSTATS), the same struct for every qlab qdisc.  Per band:
 *	arrivals = sent + sum(drops) + purged + backlog_pkts
 * (arrivals: packets classified into the band, dropped ones included;
 * drops: arrival and head drops by reason; purged: dropped by a change).
 */
struct tc_qlab_band_xstats {
	__u64 backlog_bytes;	/* IP bytes queued */
	__u32 backlog_pkts;
	__u32 pad;
	__u64 arrivals;
	__u64 marked;		/* admitted with an ECN CE mark */
	__u64 sent;
	__u64 purged;
	__u64 drops[QLAB_MAX_REASONS];	/* by QLAB_REASON_* */
	__u64 p_q32;		/* rbaqm: P_i; wred: B_w/q; Q0.32 (2^32 = 1) */
	__u64 rate_bps;		/* rbaqm: arrival rate estimate x_i */
	__u64 capacity_bps;	/* rbaqm: allocated capacity c_i at the last arrival */
	__u64 limit_bytes;	/* srd/rd: B_D (band 0) and B_R (band 1) */
};

/*
 * The generic qdisc fills nbands, seed and the adapter's per-band counters;
 * the discipline-specific fields (favoured ... n_r, p_q32 ... limit_bytes)
 * only the dedicated qdiscs, which know their discipline's state.
 */
struct tc_qlab_xstats {
	__u32 nbands;
	__u32 variant;		/* srd: 0 srd, 1 rd; rbwfq: 0 rbaqm, 1 wred; qlab: 0 */
	__u64 seed;
	__u64 favoured;		/* ncq: packets classified favoured (band 0) */
	__u64 normal;		/* ncq: packets classified normal (band 1) */
	__u64 received;		/* ncq: packets classified (the core's counter) */
	__u64 nonlocal_on;	/* cqaqm: times the cross rule switched on */
	__u32 nonlocal_active;	/* cqaqm: cross rule in force now */
	__u32 n_d, n_r;		/* srd/rd: flow counts in use */
	__u32 pad;
	struct tc_qlab_band_xstats band[QLAB_MAX_BANDS];
};

#endif /* QLAB_SCHED_H */
