/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-queue.cc - ns-2 adapter for the qlab discipline core; see
 * qlab-queue.h for what the core sees and how verdicts are carried out.
 */
#include "qlab-queue.h"

#include "flags.h"
#include "ip.h"
#include "packet.h"
#include "scheduler.h"

#include <cinttypes>
#include <cmath>
#include <cstdlib>
#include <cstring>

std::vector<QlabQueue::Flow> QlabQueue::flows_;
FILE *QlabQueue::packet_out_ = 0;
uint64_t QlabQueue::packet_seq_ = 0;

static class QlabQueueClass : public TclClass {
public:
	QlabQueueClass() : TclClass("Queue/Qlab") {}
	TclObject *create(int, const char *const *) { return new QlabQueue; }
} class_qlab_queue;

namespace {

/* Zeroed, 8-byte aligned memory for one of the core's structs (one spare word). */
std::vector<uint64_t> core_buffer(uint32_t bytes)
{
	return std::vector<uint64_t>((bytes + 7) / 8 + 1, 0);
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

[[noreturn]] void fatal(const std::string &msg)
{
	std::fprintf(stderr, "Queue/Qlab: %s\n", msg.c_str());
	std::fflush(stderr);
	std::exit(3);
}

} // namespace

QlabQueue::QlabQueue()
	: ops_(0), nbands_(0), seed_(1), configured_(false), trace_packets_(false)
{
	rng_.state = 1;
	pq_ = new PacketQueue;	/* Queue::length() of the base; never holds a packet */
}

QlabQueue::~QlabQueue()
{
	delete pq_;
}

uint64_t QlabQueue::now_ns()
{
	return (uint64_t)llround(Scheduler::instance().clock() * 1e9);
}

int QlabQueue::configure_core(std::string *err)
{
	if (!ops_) {
		*err = "no discipline (use: $q disc NAME)";
		return -1;
	}
	params_ = core_buffer(ops_->params_size);
	char e[QCORE_ERRLEN] = "";
	uint32_t nb = 0;
	if (qcore_configure(ops_, params_.data(), values_.data(), (uint32_t)values_.size(), &nb, e,
			    sizeof(e))) {
		*err = std::string(ops_->name) + ": " + e;
		return -1;
	}
	nbands_ = nb;
	vars_ = core_buffer(ops_->vars_size);
	stats_ = core_buffer(ops_->stats_size);
	ops_->reset(params_.data(), vars_.data());
	qcore_rng_seed(&rng_, seed_);
	bands_.assign(nbands_, std::deque<Entry>());
	band_bytes_.assign(nbands_, 0);
	BandCounters zero = {0, 0, 0, 0};
	counters_.assign(nbands_, zero);
	configured_ = true;
	return 0;
}

int QlabQueue::command(int argc, const char *const *argv)
{
	Tcl &tcl = Tcl::instance();
	if (argc == 2 && !std::strcmp(argv[1], "configure-core")) {
		std::string err;
		if (configure_core(&err)) {
			tcl.resultf("%s", err.c_str());
			return TCL_ERROR;
		}
		return TCL_OK;
	}
	if (argc == 2 && !std::strcmp(argv[1], "sample")) {
		if (!configured_) {
			tcl.resultf("sample: not configured");
			return TCL_ERROR;
		}
		std::string out;
		char line[256];
		const uint64_t t = now_ns();
		for (uint32_t b = 0; b < nbands_; b++) {
			const BandCounters &c = counters_[b];
			std::snprintf(line, sizeof(line),
				      "%" PRIu64 ",%s,%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64
				      ",%" PRIu64 "\n",
				      t, name_.c_str(), b, (unsigned)bands_[b].size(), band_bytes_[b],
				      c.enqueued, c.dequeued, c.dropped);
			out += line;
		}
		Tcl_SetResult(tcl.interp(), (char *)out.c_str(), TCL_VOLATILE);
		return TCL_OK;
	}
	if (argc == 3 && !std::strcmp(argv[1], "disc")) {
		if (configured_ || ops_) {
			tcl.resultf("disc: already set");
			return TCL_ERROR;
		}
		ops_ = qcore_find(argv[2]);
		if (!ops_) {
			tcl.resultf("unknown discipline '%s'", argv[2]);
			return TCL_ERROR;
		}
		return TCL_OK;
	}
	if (argc == 3 && !std::strcmp(argv[1], "seed")) {
		if (!parse_u64(argv[2], &seed_)) {
			tcl.resultf("seed: expected an unsigned integer, got '%s'", argv[2]);
			return TCL_ERROR;
		}
		qcore_rng_seed(&rng_, seed_);
		return TCL_OK;
	}
	if (argc == 3 && !std::strcmp(argv[1], "name")) {
		name_ = argv[2];
		return TCL_OK;
	}
	if (argc == 3 && !std::strcmp(argv[1], "packet-trace")) {
		if (!packet_out_) {
			packet_out_ = std::fopen(argv[2], "w");
			if (!packet_out_) {
				tcl.resultf("packet-trace: cannot open %s", argv[2]);
				return TCL_ERROR;
			}
		}
		trace_packets_ = true;
		return TCL_OK;
	}
	if (argc == 2 && !std::strcmp(argv[1], "packet-trace-close")) {
		if (packet_out_ && std::fclose(packet_out_)) {
			packet_out_ = 0;
			tcl.resultf("packet-trace: write error");
			return TCL_ERROR;
		}
		packet_out_ = 0;
		return TCL_OK;
	}
	if (argc == 4 && !std::strcmp(argv[1], "param")) {
		if (!ops_) {
			tcl.resultf("param: set the discipline first");
			return TCL_ERROR;
		}
		char err[QCORE_ERRLEN + 200] = "";
		struct qcore_param_value v;
		std::memset(&v, 0, sizeof(v));
		const int index = qcore_param_index(ops_, argv[2], err, sizeof(err));
		if (index < 0 || qcore_param_parse(&ops_->params[index], argv[3], &v, err, sizeof(err))) {
			tcl.resultf("%s: %s", ops_->name, err);
			return TCL_ERROR;
		}
		v.index = (uint32_t)index;
		values_.push_back(v);
		return TCL_OK;
	}
	if (argc == 9 && !std::strcmp(argv[1], "flow")) {
		uint64_t v[7];
		for (int i = 0; i < 7; i++) {
			if (!parse_u64(argv[2 + i], &v[i])) {
				tcl.resultf("flow: expected unsigned integers, got '%s'", argv[2 + i]);
				return TCL_ERROR;
			}
		}
		const uint64_t fid = v[0];
		if (fid > 10000000 || v[2] > UINT32_MAX || v[3] > UINT32_MAX || v[4] > 65535 ||
		    v[5] > 65535 || v[6] > 255) {
			tcl.resultf("flow: value out of range");
			return TCL_ERROR;
		}
		if (flows_.size() <= fid)
			flows_.resize(fid + 1, Flow{false, -1, 0, 0});
		Flow &f = flows_[fid];
		f.known = true;
		f.src = (int)v[1];
		f.hash_fwd = qcore_flow_hash((u32)v[2], (u32)v[3], (u16)v[4], (u16)v[5], (u8)v[6]);
		f.hash_rev = qcore_flow_hash((u32)v[3], (u32)v[2], (u16)v[5], (u16)v[4], (u8)v[6]);
		return TCL_OK;
	}
	return Queue::command(argc, argv);
}

int QlabQueue::flow_of(Packet *p) const
{
	hdr_ip *ip = hdr_ip::access(p);
	const int fid = ip->flowid();
	if (fid < 0 || (size_t)fid >= flows_.size() || !flows_[fid].known)
		return -1;
	return ip->saddr() == flows_[fid].src ? fid : -1;
}

void QlabQueue::classify(Packet *p, struct qcore_pkt *pkt)
{
	hdr_ip *ip = hdr_ip::access(p);
	qcore_pkt_set_tos(pkt, (u8)(ip->prio() & 0xff));
	if (hdr_flags::access(p)->ect())
		pkt->flags |= QCORE_PKT_ECT;
	if (hdr_cmn::access(p)->ptype() == PT_ACK)
		pkt->flags |= QCORE_PKT_PURE_ACK;
	if (!(ops_->ignores & QCORE_IGNORES_FLOW_HASH)) {
		const int fid = ip->flowid();
		if (fid >= 0 && (size_t)fid < flows_.size() && flows_[fid].known)
			pkt->flow_hash = ip->saddr() == flows_[fid].src ? flows_[fid].hash_fwd
								       : flows_[fid].hash_rev;
	}
}

void QlabQueue::report(Event ev, Packet *p, uint32_t band, const char *reason, uint64_t sojourn_ns)
{
	if (!packet_out_ || !trace_packets_)
		return;
	const char *names[] = {"enq", "deq", "drop", "drop", "mark"};
	char flow[24] = "NA";
	const int fid = flow_of(p);
	if (fid >= 0)
		std::snprintf(flow, sizeof(flow), "%d", fid);
	char sojourn[24] = "NA";
	if (ev == EV_DEQUEUE || ev == EV_DROP_HEAD)
		std::snprintf(sojourn, sizeof(sojourn), "%" PRIu64, sojourn_ns);
	std::fprintf(packet_out_, "%" PRIu64 ",%" PRIu64 ",%s,%s,%u,%d,%s,%s,%s\n", packet_seq_++,
		     now_ns(), name_.c_str(), names[ev], band, hdr_cmn::access(p)->size(), flow,
		     sojourn, reason ? reason : "NA");
}

void QlabQueue::fill_views(struct qcore_band_view *views) const
{
	std::memset(views, 0, sizeof(struct qcore_band_view) * QCORE_MAX_BANDS);
	for (uint32_t b = 0; b < nbands_; b++) {
		views[b].backlog_pkts = (u32)bands_[b].size();
		views[b].backlog_bytes = band_bytes_[b];
		if (!bands_[b].empty()) {
			views[b].head_len = bands_[b].front().len;
			views[b].head_arrival_ns = bands_[b].front().arrival_ns;
		}
	}
}

QlabQueue::Entry QlabQueue::pop(uint32_t band)
{
	Entry e = bands_[band].front();
	bands_[band].pop_front();
	band_bytes_[band] -= e.len;
	return e;
}

void QlabQueue::enque(Packet *p)
{
	if (!configured_)
		fatal("a packet arrived before configure-core (" + name_ + ")");
	const uint64_t now = now_ns();
	struct qcore_pkt pkt;
	std::memset(&pkt, 0, sizeof(pkt));
	pkt.now_ns = now;
	pkt.len = (u32)hdr_cmn::access(p)->size();
	classify(p, &pkt);
	if (ops_->check_pkt) {
		char err[QCORE_ERRLEN] = "";
		if (ops_->check_pkt(params_.data(), &pkt, err, sizeof(err)))
			fatal(name_ + ": packet cls=" + std::to_string(pkt.cls) + " prec=" +
			      std::to_string(pkt.prec) + " rejected: " + err);
	}
	struct qcore_band_view views[QCORE_MAX_BANDS];
	fill_views(views);
	const struct qcore_decision d = qcore_mark_fallback(
		ops_->enqueue(params_.data(), vars_.data(), stats_.data(), &pkt, views, &rng_), &pkt);
	if (d.band >= nbands_)
		fatal("the core chose band " + std::to_string(d.band) + " of " + std::to_string(nbands_));
	switch (d.verdict) {
	case QCORE_DROP: {
		if (d.reason == QCORE_REASON_NONE || d.reason >= QCORE_REASON__COUNT)
			fatal("the core dropped a packet with reason " + std::to_string(d.reason));
		counters_[d.band].dropped++;
		report(EV_DROP_ARRIVAL, p, d.band, qcore_reason_names[d.reason], 0);
		drop(p);
		return;
	}
	case QCORE_MARK:
		hdr_flags::access(p)->ce() = 1;
		counters_[d.band].marked++;
		report(EV_MARK, p, d.band, 0, 0);
		break;
	case QCORE_QUEUE:
		break;
	default:
		fatal("the core returned verdict " + std::to_string(d.verdict));
	}
	Entry e = {p, now, pkt.len};
	bands_[d.band].push_back(e);
	band_bytes_[d.band] += pkt.len;
	counters_[d.band].enqueued++;
	report(EV_ENQUEUE, p, d.band, 0, 0);
}

Packet *QlabQueue::deque()
{
	if (!configured_)
		return 0;
	const uint64_t now = now_ns();
	const bool tell = !(ops_->ignores & QCORE_IGNORES_DEQUEUED);
	struct qcore_band_view views[QCORE_MAX_BANDS];
	uint32_t backlog = 0;
	for (uint32_t b = 0; b < nbands_; b++)
		backlog += (uint32_t)bands_[b].size();
	/* Every DROP_HEAD removes a packet: backlog + 1 rounds end in SERVE or EMPTY. */
	for (uint32_t i = 0; i <= backlog; i++) {
		fill_views(views);
		const struct qcore_deq d = ops_->dequeue(params_.data(), vars_.data(), views, now);
		if (d.action == QCORE_DEQ_EMPTY)
			return 0;
		if (d.action != QCORE_DEQ_SERVE && d.action != QCORE_DEQ_DROP_HEAD)
			fatal("the core returned dequeue action " + std::to_string(d.action));
		if (d.band >= nbands_ || bands_[d.band].empty())
			fatal("the core chose empty or missing band " + std::to_string(d.band));
		const Entry e = pop(d.band);
		if (tell) {
			fill_views(views);
			ops_->dequeued(params_.data(), vars_.data(), stats_.data(), d.band, e.len, now,
				       views);
		}
		if (d.action == QCORE_DEQ_SERVE) {
			counters_[d.band].dequeued++;
			report(EV_DEQUEUE, e.p, d.band, 0, now - e.arrival_ns);
			return e.p;
		}
		if (d.reason == QCORE_REASON_NONE || d.reason >= QCORE_REASON__COUNT)
			fatal("the core dropped a head packet with reason " + std::to_string(d.reason));
		counters_[d.band].dropped++;
		report(EV_DROP_HEAD, e.p, d.band, qcore_reason_names[d.reason], now - e.arrival_ns);
		drop(e.p);
	}
	fatal("the core asked for more head drops than packets queued");
}
