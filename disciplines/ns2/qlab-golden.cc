/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-golden.cc - the conformance replay (DISCIPLINES.md, "One conformance
 * interface") through the ns-2 adapter Queue/Qlab, compiled into qlab's ns:
 *
 *     qlab-ns2-golden DISC [--param NAME=VALUE]... [--seed N] < events.csv > decisions.csv
 *
 * (build/ns2/qlab-ns2-golden runs `ns golden.tcl ARGS`, which makes a
 * Queue/Qlab/Golden and hands it to `[new QlabGolden] run $q ARGS`.)
 * Same interface and output as the core's qcore-replay, but every decision
 * is what the ns-2 queue did:
 *   - the arguments and events are checked with the core first (its
 *     parser, qcore_configure, check_pkt): a bad one exits 2 with the
 *     core's message, as qcore-replay does;
 *   - the queue is configured through its Tcl commands, as qlab-ns2-run
 *     configures it ($q disc, $q param NAME VALUE, $q seed, $q configure-core);
 *   - each row becomes an ns-2 scheduler event at t_ns (rows of the same
 *     time in input order, in one event), so the adapter reads the time
 *     from ns-2's clock; `enq` allocates a Packet of hdr_cmn size len and
 *     calls Queue::enque, `deq` calls Queue::deque (never recv, which would
 *     dequeue by itself);
 *   - Queue/Qlab/Golden replaces only the adapter's classify(): cls, prec
 *     and the flow hash come from the row (the adapter's own classifier
 *     reads a ToS byte and a registered 5-tuple, which cannot carry the
 *     golden events' values), and a packet of at least 20 bytes is
 *     ECN-capable (the golden events implicitly are; as qlab-ns3-golden);
 *     its report() hook records every band event, and the decisions are
 *     printed from those reports, cross-checked with what enque/deque did
 *     (a packet dropped is handed to the drop target, which here frees it;
 *     a dequeued packet is the one reported).
 * Exit status: 0 ok, 2 bad arguments or events, 3 the adapter's behaviour
 * is inconsistent with itself.
 */
#include "qlab-queue.h"

#include "packet.h"
#include "scheduler.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

const int kExitUsage = 2;
const int kExitInconsistent = 3;
const char *const kEventsHeader = "t_ns,op,len,cls,prec,flow";
const char *const kDecisionsHeader = "t_ns,op,pkt,verdict,band,reason";

[[noreturn]] void die(int status, const std::string &message)
{
	std::fprintf(stderr, "qlab-ns2-golden: %s\n", message.c_str());
	std::fflush(stderr);
	std::exit(status);
}

bool parse_u64(const std::string &s, uint64_t max, uint64_t *out)
{
	if (s.empty())
		return false;
	uint64_t v = 0;
	for (char c : s) {
		if (c < '0' || c > '9')
			return false;
		const uint64_t d = (uint64_t)(c - '0');
		if (v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

std::vector<std::string> split(const std::string &line)
{
	std::vector<std::string> cols;
	std::size_t pos = 0;
	for (;;) {
		const std::size_t comma = line.find(',', pos);
		if (comma == std::string::npos) {
			cols.push_back(line.substr(pos));
			return cols;
		}
		cols.push_back(line.substr(pos, comma - pos));
		pos = comma + 1;
	}
}

struct Row {
	uint64_t t;
	bool enq;
	uint32_t len;
	uint8_t cls, prec;
	uint32_t flow;
};

struct Meta {
	uint64_t pkt;
	uint8_t cls, prec;
	uint32_t flow;
};

struct Report {
	QlabQueue::Event ev;
	uint64_t pkt;
	uint32_t band;
	std::string reason;
};

} // namespace

/* The adapter with the golden row's metadata instead of its classifier. */
class QlabGoldenQueue : public QlabQueue {
public:
	std::map<int, Meta> meta;	/* by hdr_cmn uid */
	std::vector<Report> reports;

	uint64_t pkt_of(Packet *p)
	{
		std::map<int, Meta>::const_iterator it = meta.find(hdr_cmn::access(p)->uid());
		if (it == meta.end())
			die(kExitInconsistent, "a packet reached the queue without its golden metadata");
		return it->second.pkt;
	}

protected:
	void classify(Packet *p, struct qcore_pkt *pkt)
	{
		std::map<int, Meta>::const_iterator it = meta.find(hdr_cmn::access(p)->uid());
		if (it == meta.end())
			die(kExitInconsistent, "a packet reached the queue without its golden metadata");
		pkt->cls = it->second.cls;
		pkt->prec = it->second.prec;
		pkt->flow_hash = it->second.flow;
		pkt->flags = pkt->len >= 20 ? QCORE_PKT_ECT : 0;
	}

	void report(Event ev, Packet *p, uint32_t band, const char *reason, uint64_t)
	{
		Report r = {ev, pkt_of(p), band, reason ? reason : ""};
		reports.push_back(r);
	}
};

static class QlabGoldenQueueClass : public TclClass {
public:
	QlabGoldenQueueClass() : TclClass("Queue/Qlab/Golden") {}
	TclObject *create(int, const char *const *) { return new QlabGoldenQueue; }
} class_qlab_golden_queue;

class QlabGolden;

/* A scheduler event for the rows of one time, from rows_[first]. */
struct QlabGoldenEvent : public Event {
	size_t first;
};

class QlabGoldenHandler : public Handler {
public:
	QlabGoldenHandler(QlabGolden *g) : g_(g) {}
	void handle(Event *e);

private:
	QlabGolden *g_;
};

class QlabGolden : public TclObject {
public:
	QlabGolden() : handler_(this), q_(0), next_pkt_(0), row_no_(0) {}
	int command(int argc, const char *const *argv);
	void at(size_t first);	/* every row of one time, from rows_[first] */

private:
	void enqueue(const Row &row);
	void dequeue(const Row &row);
	[[noreturn]] void inconsistent(const std::string &what) const
	{
		die(kExitInconsistent, "row " + std::to_string(row_no_) + ": " + what);
	}
	void line(uint64_t t, const char *op, const std::string &rest)
	{
		char buf[32];
		std::snprintf(buf, sizeof(buf), "%" PRIu64 ",", t);
		out_ += buf;
		out_ += op;
		out_ += ',';
		out_ += rest;
		out_ += '\n';
	}

	QlabGoldenHandler handler_;
	QlabGoldenQueue *q_;
	std::vector<Row> rows_;
	std::vector<QlabGoldenEvent> events_;
	uint64_t next_pkt_;
	uint64_t row_no_;
	std::string out_;
};

static class QlabGoldenClass : public TclClass {
public:
	QlabGoldenClass() : TclClass("QlabGolden") {}
	TclObject *create(int, const char *const *) { return new QlabGolden; }
} class_qlab_golden;

void QlabGoldenHandler::handle(Event *e)
{
	g_->at(static_cast<QlabGoldenEvent *>(e)->first);
}

void QlabGolden::at(size_t first)
{
	for (size_t i = first; i < rows_.size() && rows_[i].t == rows_[first].t; i++) {
		row_no_ = i + 1;
		if (rows_[i].enq)
			enqueue(rows_[i]);
		else
			dequeue(rows_[i]);
	}
}

void QlabGolden::enqueue(const Row &row)
{
	const uint64_t id = next_pkt_++;
	Packet *p = Packet::alloc();
	hdr_cmn::access(p)->size() = (int)row.len;
	hdr_cmn::access(p)->uid() = (int)id;
	Meta m = {id, row.cls, row.prec, row.flow};
	q_->meta[hdr_cmn::access(p)->uid()] = m;
	q_->reports.clear();
	q_->enque(p);
	const std::vector<Report> &r = q_->reports;
	for (const Report &x : r)
		if (x.pkt != id)
			inconsistent("a band event about another packet during enqueue");
	bool marked = false;
	if (r.size() == 2 && r[0].ev == QlabQueue::EV_MARK && r[1].ev == QlabQueue::EV_ENQUEUE &&
	    r[0].band == r[1].band)
		marked = true;
	else if (r.size() != 1 ||
		 (r[0].ev != QlabQueue::EV_ENQUEUE && r[0].ev != QlabQueue::EV_DROP_ARRIVAL))
		inconsistent("unexpected band events on enqueue");
	const Report &last = r.back();
	const bool dropped = last.ev == QlabQueue::EV_DROP_ARRIVAL;
	if (dropped && last.reason.empty())
		inconsistent("a drop without a reason");
	line(row.t, "enq",
	     std::to_string(id) + "," + (dropped ? "dropped" : marked ? "marked" : "queued") + "," +
		     std::to_string(last.band) + "," + last.reason);
}

void QlabGolden::dequeue(const Row &row)
{
	q_->reports.clear();
	Packet *p = q_->deque();
	const std::vector<Report> &r = q_->reports;
	for (size_t i = 0; i < r.size(); i++) {
		const bool last = i + 1 == r.size();
		if (r[i].ev == QlabQueue::EV_DROP_HEAD) {
			if (r[i].reason.empty())
				inconsistent("a head drop without a reason");
			line(row.t, "drop_head",
			     std::to_string(r[i].pkt) + ",dropped," + std::to_string(r[i].band) + "," +
				     r[i].reason);
		} else if (r[i].ev == QlabQueue::EV_DEQUEUE && last) {
			if (!p || q_->pkt_of(p) != r[i].pkt)
				inconsistent("deque returned another packet than the band event reported");
			line(row.t, "deq", std::to_string(r[i].pkt) + ",sent," + std::to_string(r[i].band) + ",");
		} else {
			inconsistent("unexpected band events on dequeue");
		}
	}
	if (r.empty() || r.back().ev != QlabQueue::EV_DEQUEUE) {
		if (p)
			inconsistent("deque returned a packet no band event reported");
		line(row.t, "deq", "-1,empty,,");
	}
	if (p) {
		q_->meta.erase(hdr_cmn::access(p)->uid());
		Packet::free(p);
	}
}

int QlabGolden::command(int argc, const char *const *argv)
{
	Tcl &tcl = Tcl::instance();
	if (argc < 3 || std::strcmp(argv[1], "run")) {
		return TclObject::command(argc, argv);
	}
	q_ = dynamic_cast<QlabGoldenQueue *>(TclObject::lookup(argv[2]));
	if (!q_) {
		tcl.resultf("run: %s is not a Queue/Qlab/Golden", argv[2]);
		return TCL_ERROR;
	}
	std::string discipline;
	std::string seed = "1";
	std::vector<std::pair<std::string, std::string> > assignments;
	for (int i = 3; i < argc; i++) {
		const std::string a = argv[i];
		if (a == "--help" || a == "-h") {
			std::printf("usage: qlab-ns2-golden DISC [--param NAME=VALUE]... [--seed N] < "
				    "events.csv > decisions.csv\n"
				    "The conformance replay (qcore-replay's interface and output) through "
				    "ns-2's Queue/Qlab,\nconfigured through its Tcl commands.\n"
				    "exit status: 0 ok, 2 bad arguments or events, 3 adapter inconsistent\n");
			std::exit(0);
		}
		if (a == "--param" || a == "--seed") {
			if (i + 1 == argc)
				die(kExitUsage, a + " needs a value");
			const std::string v = argv[++i];
			if (a == "--seed") {
				uint64_t s;
				if (!parse_u64(v, UINT64_MAX, &s))
					die(kExitUsage, "--seed: expected an integer, got '" + v + "'");
				seed = std::to_string(s);
			} else {
				const std::size_t eq = v.find('=');
				if (eq == std::string::npos || eq == 0)
					die(kExitUsage, "--param: expected NAME=VALUE, got '" + v + "'");
				assignments.emplace_back(v.substr(0, eq), v.substr(eq + 1));
			}
		} else if (!a.empty() && a[0] == '-') {
			die(kExitUsage, "unknown option '" + a + "'");
		} else if (!discipline.empty()) {
			die(kExitUsage, "unexpected argument '" + a + "' (one discipline only)");
		} else {
			discipline = a;
		}
	}
	if (discipline.empty())
		die(kExitUsage, "usage: qlab-ns2-golden DISC [--param NAME=VALUE]... [--seed N] < events.csv");
	const struct qcore_disc_ops *ops = qcore_find(discipline.c_str());
	if (!ops)
		die(kExitUsage, "unknown discipline '" + discipline + "' (qcore-replay --list)");

	/* The core's checks first, with its messages (as qcore-replay). */
	std::vector<struct qcore_param_value> values;
	for (const auto &nv : assignments) {
		char err[QCORE_ERRLEN + 200] = "";
		struct qcore_param_value v;
		std::memset(&v, 0, sizeof(v));
		const int index = qcore_param_index(ops, nv.first.c_str(), err, sizeof(err));
		if (index < 0 ||
		    qcore_param_parse(&ops->params[index], nv.second.c_str(), &v, err, sizeof(err)))
			die(kExitUsage, std::string("--param: ") + err);
		v.index = (uint32_t)index;
		values.push_back(v);
	}
	std::vector<uint64_t> params(ops->params_size / 8 + 2, 0);
	{
		uint32_t nbands = 0;
		char err[QCORE_ERRLEN] = "";
		if (qcore_configure(ops, params.data(), values.data(), (uint32_t)values.size(), &nbands,
				    err, sizeof(err)))
			die(kExitUsage, std::string(ops->name) + ": " + err);
	}

	/* The events, checked as qcore-replay checks them. */
	std::string text;
	if (!std::getline(std::cin, text))
		die(kExitUsage, std::string("line 1: missing header ") + kEventsHeader);
	if (!text.empty() && text.back() == '\r')
		text.pop_back();
	if (text != kEventsHeader)
		die(kExitUsage, std::string("line 1: header must be exactly ") + kEventsHeader);
	std::set<std::pair<uint8_t, uint8_t> > checked;
	uint64_t last = 0;
	for (uint64_t rowNo = 1; std::getline(std::cin, text); rowNo++) {
		if (!text.empty() && text.back() == '\r')
			text.pop_back();
		const std::string where =
			"row " + std::to_string(rowNo) + " (line " + std::to_string(rowNo + 1) + "): ";
		const std::vector<std::string> col = split(text);
		if (col.size() != 6)
			die(kExitUsage, where + "expected 6 columns (" + kEventsHeader + ")");
		Row ev = {};
		if (!parse_u64(col[0], INT64_MAX, &ev.t))
			die(kExitUsage, where + "column t_ns: expected an integer, got '" + col[0] + "'");
		if (ev.t < last)
			die(kExitUsage, where + "column t_ns: times never decrease");
		last = ev.t;
		if (col[1] == "enq") {
			uint64_t v;
			ev.enq = true;
			if (!parse_u64(col[2], 65535, &v) || v == 0)
				die(kExitUsage, where + "column len: expected an integer 1..65535, got '" +
							col[2] + "'");
			ev.len = (uint32_t)v;
			const char *names[] = {"cls", "prec", "flow"};
			const uint64_t max[] = {255, 255, UINT32_MAX};
			uint64_t vals[3] = {0, 0, 0};
			for (int i = 0; i < 3; i++)
				if (!col[3 + i].empty() && !parse_u64(col[3 + i], max[i], &vals[i]))
					die(kExitUsage, where + "column " + names[i] +
								": expected empty or an integer, got '" +
								col[3 + i] + "'");
			ev.cls = (uint8_t)vals[0];
			ev.prec = (uint8_t)vals[1];
			ev.flow = (uint32_t)vals[2];
			if (ops->check_pkt && checked.insert(std::make_pair(ev.cls, ev.prec)).second) {
				struct qcore_pkt pkt;
				std::memset(&pkt, 0, sizeof(pkt));
				pkt.len = ev.len;
				pkt.cls = ev.cls;
				pkt.prec = ev.prec;
				char err[QCORE_ERRLEN] = "";
				if (ops->check_pkt(params.data(), &pkt, err, sizeof(err)))
					die(kExitUsage, where + "column " + err);
			}
		} else if (col[1] == "deq") {
			for (int i = 2; i < 6; i++)
				if (!col[i].empty())
					die(kExitUsage, where + "columns len..flow must be empty on a deq row");
		} else {
			die(kExitUsage, where + "column op: expected enq or deq, got '" + col[1] + "'");
		}
		rows_.push_back(ev);
	}

	/* The adapter, configured as qlab-ns2-run configures it. */
	const std::string q = argv[2];
	std::vector<std::string> setup;
	setup.push_back(q + " disc " + discipline);
	for (const auto &nv : assignments)
		setup.push_back(q + " param {" + nv.first + "} {" + nv.second + "}");
	setup.push_back(q + " seed " + seed);
	setup.push_back(q + " configure-core");
	for (const std::string &cmd : setup)
		if (Tcl_GlobalEval(tcl.interp(), (char *)cmd.c_str()) != TCL_OK)
			die(kExitInconsistent, cmd + ": " + Tcl_GetStringResult(tcl.interp()));

	/* One scheduler event per distinct time, at that time. */
	Scheduler &s = Scheduler::instance();
	events_.resize(rows_.size());
	for (size_t i = 0; i < rows_.size(); i++) {
		if (i > 0 && rows_[i].t == rows_[i - 1].t)
			continue;
		const double delay = (double)rows_[i].t / 1e9 - s.clock();
		events_[i].first = i;
		s.schedule(&handler_, &events_[i], delay);
	}
	out_ = std::string(kDecisionsHeader) + "\n";
	s.run();
	if (std::fwrite(out_.data(), 1, out_.size(), stdout) != out_.size() || std::fflush(stdout))
		die(1, "writing decisions: write error");
	return TCL_OK;
}
