/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-queue.h - ns-2 adapter for the qlab discipline core (qcore):
 * Tcl class Queue/Qlab, a Queue whose every decision is the core's.  The
 * core decides; this class only moves packets and calls it (the same
 * contract as the ns-3 queue disc, disciplines/ns3/qlab-queue-disc.h).
 *
 * Configured from Tcl before the first packet:
 *     $q disc NAME                 a discipline of the core's registry
 *     $q param NAME VALUE          a parameter, in the core's text syntax
 *                                  (qcore_param_parse: the one parser)
 *     $q seed N                    the core generator's seed (u64)
 *     $q name LINK:NODE            the queue's name in the traces
 *     $q configure-core            qcore_configure() (defaults, values,
 *                                  check_params, band count); a bad
 *                                  configuration is a Tcl error with the
 *                                  core's message
 * and, for the runner:
 *     $q flow FID SRC SADDR DADDR SPORT DPORT PROTO
 *                                  (any Queue/Qlab; a table shared by all)
 *                                  flow FID: its data sender's ns-2 node
 *                                  address SRC and its IPv4 5-tuple, from
 *                                  which qcore_flow_hash() is computed once
 *                                  per direction
 *     $q sample                    one queue_facts row per band at now:
 *                                  "time_ns,queue,band,backlog_pkts,
 *                                  backlog_bytes,enqueued,dequeued,dropped"
 *     $q packet-trace PATH         this queue's packet_facts rows go to
 *                                  PATH (one file for every queue given
 *                                  it, opened once; a global seq, so rows
 *                                  are in event order)
 *
 * What the core sees of an ns-2 packet (struct qcore_pkt), computed with
 * the core's helpers so every backend feeds it the same inputs:
 *   len        hdr_cmn size(): the IP length (ns-2 agents count their
 *              40-byte TCP/IP or the datagram's whole length in it; the
 *              runner sets them so).
 *   cls, prec, QCORE_PKT_ECT
 *              qcore_pkt_set_tos() of hdr_ip prio(), which the runner sets
 *              to the flow's ToS byte (the agents' prio_); ECT also when
 *              hdr_flags ect() is set.
 *   flow_hash  the flow's qcore_flow_hash() of its 5-tuple in the packet's
 *              direction (forward when hdr_ip saddr() is the flow's sender,
 *              the flow by hdr_ip flowid(), which the runner sets to the
 *              flow id on both agents); 0 for a packet of no registered
 *              flow, and 0 without lookup when the discipline declares
 *              QCORE_IGNORES_FLOW_HASH.
 *   QCORE_PKT_PURE_ACK
 *              ptype PT_ACK (one-way TCP sinks' ACKs carry no data).
 *   now_ns     llround(Scheduler clock * 1e9).
 * Verdicts: qcore_mark_fallback() first; QUEUE appends to the band's FIFO;
 * DROP hands the packet to Connector::drop (ns-2's drop target); MARK sets
 * hdr_flags ce() and queues.  Dequeue: SERVE, DROP_HEAD (drop, ask again)
 * or EMPTY; after every removal the core's dequeued() hook (unless the
 * discipline declares QCORE_IGNORES_DEQUEUED).  Every buffer limit is the
 * core's: the bands themselves never drop.  The packet being transmitted
 * is on the link, not in the queue (ns-2's Queue/link handshake), as the
 * ns-3 runner's one-packet device queue behind the discipline.
 */
#ifndef QLAB_NS2_QUEUE_H
#define QLAB_NS2_QUEUE_H

#include "queue.h"

#include "qcore.h"

#include <cstdint>
#include <cstdio>
#include <deque>
#include <string>
#include <vector>

class QlabQueue : public Queue {
public:
	QlabQueue();
	~QlabQueue();
	int command(int argc, const char *const *argv);
	void enque(Packet *p);
	Packet *deque();

	enum Event { EV_ENQUEUE, EV_DEQUEUE, EV_DROP_ARRIVAL, EV_DROP_HEAD, EV_MARK };

	struct BandCounters {
		uint64_t enqueued, dequeued, dropped, marked;
	};

	static uint64_t now_ns();
	const struct qcore_disc_ops *ops() const { return ops_; }
	uint32_t nbands() const { return nbands_; }
	uint32_t band_pkts(uint32_t b) const { return (uint32_t)bands_[b].size(); }
	uint64_t band_bytes(uint32_t b) const { return band_bytes_[b]; }
	const BandCounters &counters(uint32_t b) const { return counters_[b]; }

	/* The configure sequence; 0, or -1 with the core's message in err. */
	int configure_core(std::string *err);

protected:
	/* The metadata the core sees; a subclass may replace it (the golden harness). */
	virtual void classify(Packet *p, struct qcore_pkt *pkt);
	/* Every band event (reason: the core's name for drops, else NULL). */
	virtual void report(Event ev, Packet *p, uint32_t band, const char *reason,
			    uint64_t sojourn_ns);

private:
	struct Entry {
		Packet *p;
		uint64_t arrival_ns;
		uint32_t len;
	};
	struct Flow {
		bool known;
		int src;	/* ns-2 address of the data sender */
		uint32_t hash_fwd, hash_rev;
	};

	void fill_views(struct qcore_band_view *views) const;
	Entry pop(uint32_t band);
	int flow_of(Packet *p) const;	/* the flow whose data direction p is in, or -1 */

	const struct qcore_disc_ops *ops_;
	std::vector<uint64_t> params_, vars_, stats_;
	std::vector<struct qcore_param_value> values_;
	uint32_t nbands_;
	struct qcore_rng rng_;
	uint64_t seed_;
	bool configured_;
	bool trace_packets_;	/* this queue's events go to packet_out_ */
	std::string name_;
	std::vector<std::deque<Entry> > bands_;
	std::vector<uint64_t> band_bytes_;
	std::vector<BandCounters> counters_;

	static std::vector<Flow> flows_;
	static FILE *packet_out_;
	static uint64_t packet_seq_;
};

#endif /* QLAB_NS2_QUEUE_H */
