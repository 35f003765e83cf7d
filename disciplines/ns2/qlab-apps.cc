/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-apps.cc - what qlab-ns2-run needs in ns-2 besides the queue: the
 * facts a runner writes (docs/traces.md, "Raw facts") measured where ns-2
 * has them, and UDP senders that replay the plan's on-periods exactly.
 *
 *   Application/QlabTcpSink   attached to a one-way TCP sink (any of
 *       Agent/TCPSink, /DelAck, /Sack1, /Sack1/DelAck: each calls its
 *       application's recv() with the bytes it delivers in order).
 *       `$app flow FID PKT_BYTES SEG_BYTES GOAL_BYTES SYN`: data packets
 *       are PKT_BYTES on the wire (segment + 40).  Sequence number 0 is
 *       sized apart by ns-2's one-way TCP: with SYN 1 (syn_ true) it is the
 *       modelled SYN, 40 bytes of header and no data; with SYN 0 it is the
 *       first data segment, SEG_BYTES with no header (ns-2 adds the header
 *       size to every segment but that one).  When GOAL_BYTES of data are
 *       delivered it calls the Tcl proc `qlab-done FID`.  `$app facts` -> "RX_BYTES FIRST_NS LAST_NS"
 *       (NA for the times while nothing arrived).
 *   QlabTcpFacts              `$f facts $tcp` -> "TX RETX": data segments
 *       the one-way TCP sender transmitted and retransmitted, its SYN
 *       transmissions (syn_) left out.
 *   Agent/QlabUDP             `$a schedule INTERVAL_NS PKT_BYTES`,
 *       `$a period START_NS END_NS` (sorted, disjoint), `$a go`: a datagram
 *       of PKT_BYTES (hdr_cmn size: the IP length) at start + k * interval
 *       for every k with start + k * interval < end, in each period,
 *       stamped with its send time (hdr_cmn timestamp, Agent::allocpkt).
 *       `$a facts` -> "TX".
 *   Agent/QlabUDPSink         `$s facts` -> "RX_PKTS RX_BYTES FIRST_NS
 *       LAST_NS DELAY_SUM_NS DELAY_MAX_NS" (payload bytes: IP length - 28).
 *
 * Times are integer nanoseconds, llround(clock * 1e9): ns-2's clock is a
 * double of seconds, exact to well under a nanosecond for any plan's
 * duration.
 */
#include "agent.h"
#include "app.h"
#include "ip.h"
#include "packet.h"
#include "scheduler.h"
#include "tcp.h"
#include "timer-handler.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace {

uint64_t now_ns()
{
	return (uint64_t)llround(Scheduler::instance().clock() * 1e9);
}

bool parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	if (!s || !*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		const uint64_t d = (uint64_t)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

std::string opt_ns(bool have, uint64_t v)
{
	return have ? std::to_string(v) : std::string("NA");
}

} // namespace

/* ---- TCP: bytes delivered in order, at the sink ---- */

class QlabTcpSinkApp : public Application {
public:
	QlabTcpSinkApp()
		: fid_(0), pkt_bytes_(0), seg_bytes_(0), goal_(0), syn_(0), delivered_(0),
		  have_first_(false), first_ns_(0), last_ns_(0), done_(false)
	{
	}
	void recv(int nbytes);

protected:
	int command(int argc, const char *const *argv);

private:
	uint64_t fid_, pkt_bytes_, seg_bytes_, goal_, syn_;
	uint64_t delivered_;	/* bytes the sink delivered in order, headers and SYN included */
	bool have_first_;
	uint64_t first_ns_, last_ns_;
	bool done_;

	uint64_t data_bytes() const
	{
		/* sequence number 0: the SYN (40 bytes, no data) or the first segment (no header) */
		const uint64_t first = syn_ ? 40 : seg_bytes_;
		if (delivered_ < first)
			return 0;
		const uint64_t pkts = (syn_ ? 0 : 1) + (delivered_ - first) / pkt_bytes_;
		const uint64_t bytes = pkts * seg_bytes_;
		return bytes < goal_ ? bytes : goal_;
	}
};

static class QlabTcpSinkAppClass : public TclClass {
public:
	QlabTcpSinkAppClass() : TclClass("Application/QlabTcpSink") {}
	TclObject *create(int, const char *const *) { return new QlabTcpSinkApp; }
} class_qlab_tcp_sink_app;

int QlabTcpSinkApp::command(int argc, const char *const *argv)
{
	Tcl &tcl = Tcl::instance();
	if (argc == 7 && !std::strcmp(argv[1], "flow")) {
		uint64_t v[5];
		for (int i = 0; i < 5; i++) {
			if (!parse_u64(argv[2 + i], &v[i])) {
				tcl.resultf("flow: expected unsigned integers, got '%s'", argv[2 + i]);
				return TCL_ERROR;
			}
		}
		if (v[1] == 0 || v[2] == 0) {
			tcl.resultf("flow: packet and segment sizes must be positive");
			return TCL_ERROR;
		}
		fid_ = v[0];
		pkt_bytes_ = v[1];
		seg_bytes_ = v[2];
		goal_ = v[3];
		syn_ = v[4] ? 1 : 0;
		return TCL_OK;
	}
	if (argc == 2 && !std::strcmp(argv[1], "facts")) {
		const uint64_t bytes = data_bytes();
		std::string out = std::to_string(bytes) + " " + opt_ns(have_first_, first_ns_) + " " +
				  opt_ns(have_first_, last_ns_);
		Tcl_SetResult(tcl.interp(), (char *)out.c_str(), TCL_VOLATILE);
		return TCL_OK;
	}
	return Application::command(argc, argv);
}

void QlabTcpSinkApp::recv(int nbytes)
{
	if (nbytes <= 0 || done_)
		return;
	const uint64_t before = data_bytes();
	delivered_ += (uint64_t)nbytes;
	const uint64_t after = data_bytes();
	if (after == before)
		return;
	const uint64_t now = now_ns();
	if (!have_first_) {
		have_first_ = true;
		first_ns_ = now;
	}
	last_ns_ = now;
	if (after >= goal_) {
		done_ = true;
		Tcl::instance().evalf("qlab-done %" PRIu64, fid_);
	}
}

/* ---- TCP: the sender's transmissions ---- */

/* Reads TcpAgent's protected counters (no instance: only its member pointers). */
struct QlabTcpPeek : public TcpAgent {
	static void facts(TcpAgent *a, int *tx, int *retx)
	{
		const int syn = a->*(&QlabTcpPeek::syn_) ? a->*(&QlabTcpPeek::syn_connects_) : 0;
		const int sent = int(a->*(&QlabTcpPeek::ndatapack_));
		const int again = int(a->*(&QlabTcpPeek::nrexmitpack_));
		/* the first SYN is a transmission, each later one a retransmission */
		*tx = sent - syn;
		*retx = again - (syn > 1 ? syn - 1 : 0);
	}
};

class QlabTcpFacts : public TclObject {
public:
	int command(int argc, const char *const *argv)
	{
		Tcl &tcl = Tcl::instance();
		if (argc == 3 && !std::strcmp(argv[1], "facts")) {
			TcpAgent *a = dynamic_cast<TcpAgent *>(TclObject::lookup(argv[2]));
			if (!a) {
				tcl.resultf("facts: %s is not a TCP agent", argv[2]);
				return TCL_ERROR;
			}
			int tx = 0, retx = 0;
			QlabTcpPeek::facts(a, &tx, &retx);
			if (tx < 0 || retx < 0 || retx > tx) {
				tcl.resultf("facts: inconsistent counters (tx %d, retx %d)", tx, retx);
				return TCL_ERROR;
			}
			tcl.resultf("%d %d", tx, retx);
			return TCL_OK;
		}
		return TclObject::command(argc, argv);
	}
};

static class QlabTcpFactsClass : public TclClass {
public:
	QlabTcpFactsClass() : TclClass("QlabTcpFacts") {}
	TclObject *create(int, const char *const *) { return new QlabTcpFacts; }
} class_qlab_tcp_facts;

/* ---- UDP: the plan's on-periods, exactly ---- */

class QlabUdpAgent;

class QlabUdpTimer : public TimerHandler {
public:
	QlabUdpTimer(QlabUdpAgent *a) : a_(a) {}

protected:
	void expire(Event *);

private:
	QlabUdpAgent *a_;
};

class QlabUdpAgent : public Agent {
public:
	QlabUdpAgent() : Agent(PT_UDP), timer_(this), interval_(0), pkt_bytes_(0), period_(0), k_(0), tx_(0) {}
	int command(int argc, const char *const *argv);
	void send_one();

private:
	bool next_time(uint64_t *t);
	void arm();

	QlabUdpTimer timer_;
	uint64_t interval_, pkt_bytes_;
	std::vector<std::pair<uint64_t, uint64_t> > periods_;
	size_t period_;
	uint64_t k_;
	uint64_t tx_;
};

static class QlabUdpAgentClass : public TclClass {
public:
	QlabUdpAgentClass() : TclClass("Agent/QlabUDP") {}
	TclObject *create(int, const char *const *) { return new QlabUdpAgent; }
} class_qlab_udp_agent;

void QlabUdpTimer::expire(Event *)
{
	a_->send_one();
}

bool QlabUdpAgent::next_time(uint64_t *t)
{
	while (period_ < periods_.size()) {
		const uint64_t at = periods_[period_].first + k_ * interval_;
		if (at < periods_[period_].second) {
			*t = at;
			return true;
		}
		period_++;
		k_ = 0;
	}
	return false;
}

void QlabUdpAgent::arm()
{
	uint64_t t;
	if (next_time(&t)) {
		double delay = (double)t / 1e9 - Scheduler::instance().clock();
		timer_.resched(delay > 0 ? delay : 0);
	}
}

void QlabUdpAgent::send_one()
{
	Packet *p = allocpkt();
	hdr_cmn::access(p)->size() = (int)pkt_bytes_;
	tx_++;
	k_++;
	target_->recv(p, (Handler *)0);
	arm();
}

int QlabUdpAgent::command(int argc, const char *const *argv)
{
	Tcl &tcl = Tcl::instance();
	if (argc == 4 && (!std::strcmp(argv[1], "schedule") || !std::strcmp(argv[1], "period"))) {
		uint64_t a, b;
		if (!parse_u64(argv[2], &a) || !parse_u64(argv[3], &b)) {
			tcl.resultf("%s: expected unsigned integers", argv[1]);
			return TCL_ERROR;
		}
		if (argv[1][0] == 's') {
			if (a == 0 || b < 28) {
				tcl.resultf("schedule: interval > 0 and at least 28 bytes");
				return TCL_ERROR;
			}
			interval_ = a;
			pkt_bytes_ = b;
			size_ = (int)b;
		} else {
			if (b < a || (!periods_.empty() && a < periods_.back().second)) {
				tcl.resultf("period: periods must be sorted and disjoint");
				return TCL_ERROR;
			}
			periods_.push_back(std::make_pair(a, b));
		}
		return TCL_OK;
	}
	if (argc == 2 && !std::strcmp(argv[1], "go")) {
		if (!interval_) {
			tcl.resultf("go: no schedule");
			return TCL_ERROR;
		}
		period_ = 0;
		k_ = 0;
		arm();
		return TCL_OK;
	}
	if (argc == 2 && !std::strcmp(argv[1], "facts")) {
		tcl.resultf("%" PRIu64, tx_);
		return TCL_OK;
	}
	return Agent::command(argc, argv);
}

class QlabUdpSink : public Agent {
public:
	QlabUdpSink()
		: Agent(PT_UDP), rx_(0), bytes_(0), have_(false), first_(0), last_(0), dsum_(0), dmax_(0)
	{
	}
	void recv(Packet *p, Handler *);
	int command(int argc, const char *const *argv);

private:
	uint64_t rx_, bytes_;
	bool have_;
	uint64_t first_, last_, dsum_, dmax_;
};

static class QlabUdpSinkClass : public TclClass {
public:
	QlabUdpSinkClass() : TclClass("Agent/QlabUDPSink") {}
	TclObject *create(int, const char *const *) { return new QlabUdpSink; }
} class_qlab_udp_sink;

void QlabUdpSink::recv(Packet *p, Handler *)
{
	const uint64_t now = now_ns();
	const uint64_t sent = (uint64_t)llround(hdr_cmn::access(p)->timestamp() * 1e9);
	const int len = hdr_cmn::access(p)->size();
	const uint64_t delay = now >= sent ? now - sent : 0;
	rx_++;
	bytes_ += len > 28 ? (uint64_t)(len - 28) : 0;
	if (!have_) {
		have_ = true;
		first_ = now;
	}
	last_ = now;
	dsum_ += delay;
	if (delay > dmax_)
		dmax_ = delay;
	Packet::free(p);
}

int QlabUdpSink::command(int argc, const char *const *argv)
{
	if (argc == 2 && !std::strcmp(argv[1], "facts")) {
		std::string out = std::to_string(rx_) + " " + std::to_string(bytes_) + " " +
				  opt_ns(have_, first_) + " " + opt_ns(have_, last_) + " " +
				  opt_ns(have_, dsum_) + " " + opt_ns(have_, dmax_);
		Tcl_SetResult(Tcl::instance().interp(), (char *)out.c_str(), TCL_VOLATILE);
		return TCL_OK;
	}
	return Agent::command(argc, argv);
}
