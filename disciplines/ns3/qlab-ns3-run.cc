/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-ns3-run - run one qlab job (docs/jobs.md) in ns-3 and write its trace
 * tables (docs/traces.md) as plain CSV; the Python wrapper gzips them.
 *
 *     qlab-ns3-run JOB.json OUTDIR
 *
 * Writes OUTDIR/flows.csv, OUTDIR/queues.csv, OUTDIR/packets.csv (when
 * trace.packets) and OUTDIR/runner.json.  A bad job (invalid JSON, a missing
 * or ill-typed field, a discipline parameter the core rejects) is reported on
 * stderr with the field's path and exits 2; I/O failures exit 1.
 *
 * The model:
 *   - Dumbbell: flow i has its own source node S_i and sink node D_i;
 *     S_i -- L and R -- D_i are access links (access_rate_bps, access_delay_s),
 *     L -- R is the bottleneck (bottleneck_rate_bps, bottleneck_delay_s).
 *   - The discipline under test (QlabQueueDisc) is the root queue disc of L's
 *     bottleneck device (forward direction, data).  The backend-specific
 *     kind "ns3-fifo" installs ns-3's own FifoQueueDisc there instead, with
 *     MaxSize "<limit_pkts>p" (droptail's parameter, syntax, range and
 *     default): the reference for the adapter's cost and its identity with
 *     droptail.  Its queue samples are band 0 from the QueueDisc's stats
 *     (enqueued = nTotalEnqueuedPackets, dequeued = nTotalDequeuedPackets
 *     minus drops after dequeue, dropped = nTotalDroppedPackets), its packet
 *     events come from the QueueDisc traces (Enqueue, Dequeue,
 *     DropBeforeEnqueue, DropAfterDequeue, Mark), and FifoQueueDisc's drop
 *     reason "Queue disc limit exceeded" is written as the core's
 *     "overflow".  The bottleneck devices'
 *     own transmit queues hold 1 packet, so the backlog builds in the queue
 *     disc, not the device (ns-3's usual setup for queue disc studies; flow
 *     control stops the queue disc while the device is busy).
 *   - Every other device (access links both ways, R's bottleneck device for
 *     the ACKs) gets a FifoQueueDisc of kLosslessPkts packets: no loss
 *     outside the bottleneck.  Device queues keep ns-3's default (100p); with
 *     flow control they never drop.
 *   - Point-to-point links add a 2-byte PPP header to each IP packet on the
 *     wire (ns-3's model); the MTU is raised above 1500 when a flow's
 *     segment plus 40 bytes of headers and up to 40 bytes of TCP options
 *     would not fit, so ns-3 never fragments TCP segments (its TCP does
 *     not shrink the payload when options are present).
 *   - TCP from job.tcp, set explicitly (ConfigureTcp): variant, RFC 6582
 *     classic recovery (ns-2's NewReno, not ns-3's default PRR), SACK,
 *     timestamps, window scaling, initial cwnd, delayed-ACK count, min RTO,
 *     buffer sizes, SYN retransmission timeout (ConnTimeout); the segment size is per flow, on both the sender's and
 *     the sink's socket.  ECN is off.  Senders never give up (SYN and data
 *     retry limits raised).  Everything else keeps ns-3 3.37's defaults,
 *     notably DelAckTimeout 0.2 s,
 *     LimitedTransmit on, ClockGranularity 1 ms, Nagle off.
 *   - ns3-tcp-fixes.cc carries the upstream fix for ns-3 issue #991, which
 *     otherwise crashes receiver-window-limited runs.
 *   - Applications: QlabBulkSender / QlabBulkSink (qlab-bulk-apps.h); flow
 *     cls/prec travel in the IPv4 ToS byte (cls << 5 | prec << 3), which
 *     QlabQueueDisc decodes.
 *   - Randomness: ns-3's RngSeedManager gets seed 1, run = job seed; the
 *     core's generator is seeded with the job seed.  The workload itself is
 *     deterministic (start jitter is in the job).
 *
 * Output: times are written from integer nanoseconds with 9 decimals, rates
 * with "%.6f", no locale; rows sorted as docs/traces.md says.  Queue samples
 * are taken at k * queue_sample_interval_s and once more at the end of the
 * run.  runner.json's wall_time_s covers building the network and running the
 * simulation (not parsing the job or writing flows.csv).
 */
#include "qlab-bulk-apps.h"
#include "qlab-queue-disc.h"
#include "qlab-udp-apps.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#ifndef QLAB_NS3_VERSION
#define QLAB_NS3_VERSION "unknown"
#endif

using namespace ns3;
using json = nlohmann::json;

namespace
{

constexpr int kExitIoError = 1;
constexpr int kExitBadJob = 2;
constexpr uint16_t kSinkPort = 5001;
constexpr uint32_t kLosslessPkts = 1000000; // queue discs outside the bottleneck
constexpr uint32_t kMaxFlows = 1000000;     // address plan: /30 per access link
constexpr uint32_t kMaxSegBytes = 65000;
constexpr uint32_t kHeaderAllowanceBytes = 80; // IPv4 + TCP headers + max TCP options
constexpr uint16_t kDefaultMtu = 1500;
constexpr uint32_t kMaxUdpIpBytes = 65507;
constexpr uint32_t kMaxOnPeriods = 1000000;
// A UDP flow is done this long after its sender's last on-period ends, so
// datagrams still in flight arrive before its loss is counted.
constexpr int64_t kUdpDrainNs = 1000000000;
const std::set<std::string> kUdpApps = {"cbr", "onoff", "voip"};
constexpr uint32_t kSynRetries = 24;          // last backoff: 2^23 * 3 s, beyond any run
constexpr uint32_t kDataRetries = 1000000000; // RTO backoff is capped at 60 s by ns-3

// The backend-specific discipline kind: ns-3's own FifoQueueDisc, configured
// with droptail's parameters (the core's droptail is its qlab counterpart).
const std::string kNs3Fifo = "ns3-fifo";
const std::string kNs3FifoCounterpart = "droptail";
const char* const kNs3FifoLimitParam = "limit_pkts";

// ------------------------------------------------------------------ job

struct FlowSpec
{
    uint64_t flowId;
    std::string app;
    std::string group;
    uint32_t cls;
    uint32_t prec;
    uint32_t segBytes; // bulk: MSS; UDP: payload per datagram (pkt_bytes - 28)
    uint64_t bytes;    // bulk only
    int64_t startNs;
    // UDP apps (cbr, onoff, voip)
    bool udp = false;
    uint32_t pktBytes = 0;
    uint64_t rateBps = 0;
    int64_t intervalNs = 0;
    std::vector<std::pair<int64_t, int64_t>> onPeriods; // [start, end) ns
    int64_t stopNs = 0;                                 // end of the last on-period
};

struct Job
{
    uint64_t seed;
    int64_t durationNs;
    bool stopWhenDone;
    uint64_t accessRateBps;
    int64_t accessDelayNs;
    uint64_t bottleneckRateBps;
    int64_t bottleneckDelayNs;
    std::string tcpVariant;
    bool sack;
    bool timestamps;
    bool windowScaling;
    uint32_t initialCwndSegments;
    uint32_t delayedAckCount;
    int64_t minRtoNs;
    int64_t synTimeoutNs;
    uint32_t rcvBufBytes;
    uint32_t sndBufBytes;
    std::string discipline;
    std::string disciplineParams; // "name=value,..." for QlabQueueDisc's Params
    std::vector<std::pair<std::string, std::string>> disciplineParamList; // sorted by name
    std::vector<FlowSpec> flows;
    int64_t queueSampleIntervalNs;
    bool tracePackets;
};

/// A mistake in the job file: the message starts with the field's path.
class JobError : public std::runtime_error
{
  public:
    using std::runtime_error::runtime_error;
};

std::string
Join(const std::string& path, const std::string& key)
{
    return path.empty() ? key : path + "." + key;
}

const json&
Field(const json& obj, const std::string& path, const std::string& key)
{
    if (!obj.is_object())
    {
        throw JobError((path.empty() ? std::string("job") : path) + ": expected an object");
    }
    auto it = obj.find(key);
    if (it == obj.end())
    {
        throw JobError(Join(path, key) + ": missing");
    }
    return *it;
}

std::string
GetString(const json& obj, const std::string& path, const std::string& key)
{
    const json& v = Field(obj, path, key);
    if (!v.is_string())
    {
        throw JobError(Join(path, key) + ": expected a string");
    }
    return v.get<std::string>();
}

bool
GetBool(const json& obj, const std::string& path, const std::string& key)
{
    const json& v = Field(obj, path, key);
    if (!v.is_boolean())
    {
        throw JobError(Join(path, key) + ": expected true or false");
    }
    return v.get<bool>();
}

/// An integer in [lo, hi]; a float with an integral value (1e7) is accepted.
uint64_t
GetUint(const json& obj, const std::string& path, const std::string& key, uint64_t lo, uint64_t hi)
{
    const json& v = Field(obj, path, key);
    const std::string where = Join(path, key);
    uint64_t value;
    if (v.is_number_unsigned())
    {
        value = v.get<uint64_t>();
    }
    else if (v.is_number_integer())
    {
        throw JobError(where + ": must be between " + std::to_string(lo) + " and " +
                       std::to_string(hi) + ", got " + v.dump());
    }
    else if (v.is_number_float())
    {
        const double d = v.get<double>();
        if (!std::isfinite(d) || d < 0 || d != std::floor(d) || d > 1.8e19)
        {
            throw JobError(where + ": expected an integer, got " + v.dump());
        }
        value = static_cast<uint64_t>(d);
    }
    else
    {
        throw JobError(where + ": expected an integer");
    }
    if (value < lo || value > hi)
    {
        throw JobError(where + ": must be between " + std::to_string(lo) + " and " +
                       std::to_string(hi) + ", got " + std::to_string(value));
    }
    return value;
}

/// Seconds (a JSON number) as integer nanoseconds, rounded to the nearest.
int64_t
GetSecondsNs(const json& obj,
             const std::string& path,
             const std::string& key,
             bool allowZero,
             double maxSeconds = 1e6)
{
    const json& v = Field(obj, path, key);
    const std::string where = Join(path, key);
    if (!v.is_number())
    {
        throw JobError(where + ": expected a number of seconds");
    }
    const double s = v.get<double>();
    if (!std::isfinite(s) || s < 0 || (!allowZero && s == 0) || s > maxSeconds)
    {
        throw JobError(where + ": must be " + (allowZero ? ">= 0" : "> 0") + " and <= " +
                       std::to_string(static_cast<int64_t>(maxSeconds)) + " s, got " + v.dump());
    }
    const int64_t ns = std::llround(s * 1e9);
    if (!allowZero && ns == 0)
    {
        throw JobError(where + ": must be at least 1 ns, got " + v.dump());
    }
    return ns;
}

/// A UDP flow's datagram size, rate and on-periods (docs/jobs.md).
void
ParseUdpFlow(const json& f, const std::string& path, FlowSpec& spec)
{
    spec.pktBytes = GetUint(f, path, "pkt_bytes", QlabUdpSender::kMinIpBytes, kMaxUdpIpBytes);
    spec.segBytes = spec.pktBytes - QlabUdpSender::kHeaderBytes;
    spec.rateBps = GetUint(f, path, "rate_bps", 1, UINT64_MAX / 2);
    const double interval = 8e9 * spec.pktBytes / static_cast<double>(spec.rateBps);
    if (interval > 1e15)
    {
        throw JobError(path + ".rate_bps: one datagram per " + std::to_string(interval / 1e9) +
                       " s is too slow");
    }
    spec.intervalNs = std::max<int64_t>(1, std::llround(interval));
    const json& periods = Field(f, path, "on_periods");
    if (!periods.is_array() || periods.size() > kMaxOnPeriods)
    {
        throw JobError(path + ".on_periods: expected an array of [start_s, end_s] pairs");
    }
    int64_t last = spec.startNs;
    for (std::size_t k = 0; k < periods.size(); k++)
    {
        const std::string where = path + ".on_periods[" + std::to_string(k) + "]";
        const json& p = periods[k];
        if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_number())
        {
            throw JobError(where + ": expected [start_s, end_s]");
        }
        const json pair = {{"start", p[0]}, {"end", p[1]}};
        const int64_t start = GetSecondsNs(pair, where, "start", true);
        const int64_t end = GetSecondsNs(pair, where, "end", true);
        if (start < last || end < start)
        {
            throw JobError(where + ": periods must start at or after start_s, be sorted and not "
                                   "overlap, and end after they start");
        }
        spec.onPeriods.emplace_back(start, end);
        last = end;
    }
    spec.stopNs = last;
    spec.bytes = 0; // set from the schedule when the sender exists
}

Job
ParseJob(const json& j)
{
    Job job;
    const std::string schema = GetString(j, "", "schema");
    if (schema != "qlab-job/1")
    {
        throw JobError("schema: expected \"qlab-job/1\", got \"" + schema + "\"");
    }
    job.seed = GetUint(j, "", "seed", 0, UINT64_MAX);
    job.durationNs = GetSecondsNs(j, "", "duration_s", false);
    job.stopWhenDone = GetBool(j, "", "stop_when_done");

    const json& topo = Field(j, "", "topology");
    const std::string kind = GetString(topo, "topology", "kind");
    if (kind != "dumbbell")
    {
        throw JobError("topology.kind: the ns-3 runner supports \"dumbbell\", got \"" + kind +
                       "\"");
    }
    job.accessRateBps = GetUint(topo, "topology", "access_rate_bps", 1, UINT64_MAX);
    job.accessDelayNs = GetSecondsNs(topo, "topology", "access_delay_s", true, 1e3);
    job.bottleneckRateBps = GetUint(topo, "topology", "bottleneck_rate_bps", 1, UINT64_MAX);
    job.bottleneckDelayNs = GetSecondsNs(topo, "topology", "bottleneck_delay_s", true, 1e3);

    const json& tcp = Field(j, "", "tcp");
    job.tcpVariant = GetString(tcp, "tcp", "variant");
    job.sack = GetBool(tcp, "tcp", "sack");
    job.timestamps = GetBool(tcp, "tcp", "timestamps");
    job.windowScaling = GetBool(tcp, "tcp", "window_scaling");
    job.initialCwndSegments = GetUint(tcp, "tcp", "initial_cwnd_segments", 1, 1000000);
    job.delayedAckCount = GetUint(tcp, "tcp", "delayed_ack_count", 1, 1000);
    job.minRtoNs = GetSecondsNs(tcp, "tcp", "min_rto_s", false, 1e3);
    job.synTimeoutNs = GetSecondsNs(tcp, "tcp", "syn_timeout_s", false, 1e3);
    job.rcvBufBytes = GetUint(tcp, "tcp", "rcv_buf_bytes", 1, UINT32_MAX);
    job.sndBufBytes = GetUint(tcp, "tcp", "snd_buf_bytes", 1, UINT32_MAX);

    const json& disc = Field(j, "", "discipline");
    job.discipline = GetString(disc, "discipline", "kind");
    const json& params = Field(disc, "discipline", "params");
    if (!params.is_object())
    {
        throw JobError("discipline.params: expected an object of name: \"value\" strings");
    }
    for (const auto& [name, value] : params.items()) // nlohmann sorts keys: deterministic
    {
        if (!value.is_string())
        {
            throw JobError("discipline.params." + name +
                           ": expected a string in the core's syntax, got " + value.dump());
        }
        const std::string text = value.get<std::string>();
        if (name.find_first_of(",=") != std::string::npos || text.find(',') != std::string::npos)
        {
            throw JobError("discipline.params." + name + ": names and values cannot contain ','" +
                           " (or '=' in names)");
        }
        if (!job.disciplineParams.empty())
        {
            job.disciplineParams += ",";
        }
        job.disciplineParams += name + "=" + text;
        job.disciplineParamList.emplace_back(name, text);
    }

    const json& flows = Field(j, "", "flows");
    if (!flows.is_array())
    {
        throw JobError("flows: expected an array");
    }
    if (flows.size() > kMaxFlows)
    {
        throw JobError("flows: at most " + std::to_string(kMaxFlows) + " flows");
    }
    std::set<uint64_t> ids;
    for (std::size_t i = 0; i < flows.size(); i++)
    {
        const std::string path = "flows[" + std::to_string(i) + "]";
        const json& f = flows[i];
        FlowSpec spec;
        spec.flowId = GetUint(f, path, "flow_id", 0, UINT32_MAX);
        if (!ids.insert(spec.flowId).second)
        {
            throw JobError(path + ".flow_id: duplicate flow_id " + std::to_string(spec.flowId));
        }
        spec.app = GetString(f, path, "app");
        spec.udp = kUdpApps.count(spec.app) > 0;
        if (spec.app != "bulk" && !spec.udp)
        {
            throw JobError(path + ".app: the ns-3 runner supports bulk, cbr, onoff and voip, got \"" +
                           spec.app + "\"");
        }
        spec.group = GetString(f, path, "group");
        // cls and prec travel in the IPv4 ToS byte (qlab-queue-disc.h).
        spec.cls = GetUint(f, path, "cls", 0, 7);
        spec.prec = GetUint(f, path, "prec", 0, 3);
        spec.startNs = GetSecondsNs(f, path, "start_s", true);
        if (spec.udp)
        {
            ParseUdpFlow(f, path, spec);
        }
        else
        {
            spec.segBytes = GetUint(f, path, "seg_bytes", 1, kMaxSegBytes);
            spec.bytes = GetUint(f, path, "bytes", 0, UINT64_MAX / 16);
        }
        job.flows.push_back(spec);
    }

    const json& trace = Field(j, "", "trace");
    job.queueSampleIntervalNs = GetSecondsNs(trace, "trace", "queue_sample_interval_s", false);
    job.tracePackets = GetBool(trace, "trace", "packets");
    return job;
}

// ------------------------------------------------------------ formatting

/// Nanoseconds as seconds with exactly 9 decimals (no floating point).
std::string
FormatSeconds(int64_t ns)
{
    char buf[40];
    const char* sign = ns < 0 ? "-" : "";
    const uint64_t a = ns < 0 ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
    std::snprintf(buf,
                  sizeof(buf),
                  "%s%" PRIu64 ".%09" PRIu64,
                  sign,
                  static_cast<uint64_t>(a / 1000000000),
                  static_cast<uint64_t>(a % 1000000000));
    return buf;
}

std::string
FormatRate(double bps)
{
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.6f", bps);
    return buf;
}

/// RFC 4180 field: quoted only when it must be.
std::string
CsvField(const std::string& s)
{
    if (s.find_first_of(",\"\r\n") == std::string::npos)
    {
        return s;
    }
    std::string out = "\"";
    for (char c : s)
    {
        out += c;
        if (c == '"')
        {
            out += '"';
        }
    }
    return out + "\"";
}

/// A CSV file written in one pass; any write error is fatal (exit 1).
class CsvWriter
{
  public:
    CsvWriter(const std::filesystem::path& path, const char* header)
        : m_path(path)
    {
        m_file = std::fopen(path.c_str(), "w");
        if (!m_file)
        {
            std::fprintf(stderr, "qlab-ns3-run: cannot write %s: %s\n", path.c_str(),
                         std::strerror(errno));
            std::exit(kExitIoError);
        }
        m_buffer.resize(1 << 20);
        std::setvbuf(m_file, m_buffer.data(), _IOFBF, m_buffer.size());
        Line(header);
    }

    ~CsvWriter()
    {
        Close();
    }

    void Line(const std::string& line)
    {
        if (std::fputs(line.c_str(), m_file) < 0 || std::fputc('\n', m_file) == EOF)
        {
            Fail();
        }
    }

    void Close()
    {
        if (m_file)
        {
            if (std::fclose(m_file) != 0)
            {
                m_file = nullptr;
                Fail();
            }
            m_file = nullptr;
        }
    }

  private:
    void Fail()
    {
        std::fprintf(stderr, "qlab-ns3-run: error writing %s\n", m_path.c_str());
        std::exit(kExitIoError);
    }

    std::filesystem::path m_path;
    std::FILE* m_file = nullptr;
    std::vector<char> m_buffer;
};

// ------------------------------------------------------------------ run

const std::map<std::string, std::string> kTcpVariants = {
    {"NewReno", "ns3::TcpNewReno"},
    {"Cubic", "ns3::TcpCubic"},
};

void
ConfigureTcp(const Job& job)
{
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(TypeId::LookupByName(kTcpVariants.at(job.tcpVariant))));
    // ns-2's NewReno recovery (RFC 6582) rather than ns-3's default PRR.
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(job.sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(job.timestamps));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(job.windowScaling));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(NanoSeconds(job.minRtoNs)));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(NanoSeconds(job.synTimeoutNs)));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", EnumValue(TcpSocketState::Off));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(job.initialCwndSegments));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(job.delayedAckCount));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(job.rcvBufBytes));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(job.sndBufBytes));
    // A bulk task never gives up (as in ns-2): ns-3's defaults abort a
    // connection after 6 SYN or 6 consecutive data retransmissions, which
    // happens under heavy congestion.  The SYN backoff is 2^k * ConnTimeout,
    // computed as an int shift, so its count stays well below 31.
    Config::SetDefault("ns3::TcpSocket::ConnCount", UintegerValue(kSynRetries));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(kDataRetries));
}

/**
 * ns3-fifo's packet limit: droptail's limit_pkts as the core's parser reads
 * it (its default when absent).  The parameters were already validated with
 * QlabQueueDisc::ValidateConfig("droptail", ...).
 */
uint32_t
Ns3FifoLimitPkts(const Job& job)
{
    const struct qcore_disc_ops* ops = qcore_find(kNs3FifoCounterpart.c_str());
    NS_ABORT_MSG_IF(!ops, "the core has no " << kNs3FifoCounterpart);
    std::vector<uint64_t> params(ops->params_size / sizeof(uint64_t) + 2, 0);
    char err[QCORE_ERRLEN] = "";
    NS_ABORT_MSG_IF(qcore_params_defaults(ops, params.data(), err, sizeof(err)), err);
    for (const auto& [name, value] : job.disciplineParamList)
    {
        NS_ABORT_MSG_IF(
            qcore_params_set(ops, params.data(), name.c_str(), value.c_str(), err, sizeof(err)),
            err);
    }
    for (uint32_t i = 0; i < ops->nparams; i++)
    {
        const struct qcore_param_desc& d = ops->params[i];
        if (std::strcmp(d.name, kNs3FifoLimitParam) == 0 && d.kind == QCORE_PARAM_U32)
        {
            uint32_t limit;
            std::memcpy(&limit, reinterpret_cast<const char*>(params.data()) + d.offset,
                        sizeof(limit));
            return limit;
        }
    }
    NS_FATAL_ERROR(kNs3FifoCounterpart << " has no u32 parameter " << kNs3FifoLimitParam);
}

struct FlowState
{
    Ptr<QlabBulkSender> sender; // bulk flows
    Ptr<QlabBulkSink> sink;
    Ptr<QlabUdpSender> udpSender; // UDP flows
    Ptr<QlabUdpSink> udpSink;
    bool completed = false;
    int64_t endNs = 0;
};

class Runner
{
  public:
    Runner(const Job& job, const std::filesystem::path& outDir)
        : m_job(job),
          m_outDir(outDir)
    {
    }

    void Build();
    void Run();
    void WriteFlows();
    void WriteRunInfo(double wallSeconds);

  private:
    void OnFlowComplete(std::size_t index);
    void SampleQueue(uint64_t k);
    void WriteQueueSample();
    void OnBandEvent(Ptr<const QueueDiscItem> item,
                     QlabQueueDisc::Event event,
                     uint32_t band,
                     const char* reason);
    void WritePacketEvent(Ptr<const QueueDiscItem> item,
                          const char* name,
                          uint32_t band,
                          bool sojourn,
                          const char* reason);
    // ns3-fifo: the FifoQueueDisc's own traces, as band 0.
    void OnFifoEnqueue(Ptr<const QueueDiscItem> item);
    void OnFifoDequeue(Ptr<const QueueDiscItem> item);
    void OnFifoDropBeforeEnqueue(Ptr<const QueueDiscItem> item, const char* reason);
    void OnFifoDropAfterDequeue(Ptr<const QueueDiscItem> item, const char* reason);
    void OnFifoMark(Ptr<const QueueDiscItem> item, const char* reason);

    const Job& m_job;
    std::filesystem::path m_outDir;

    std::vector<FlowState> m_flows;
    std::size_t m_completed = 0;
    Ptr<QlabQueueDisc> m_disc; // the discipline under test, or
    Ptr<QueueDisc> m_fifo;     // ns3-fifo's FifoQueueDisc
    std::unordered_map<uint32_t, uint64_t> m_flowBySource; // IPv4 source -> flow_id

    std::unique_ptr<CsvWriter> m_queues;
    std::unique_ptr<CsvWriter> m_packets;
    int64_t m_lastSampleNs = -1;
    uint64_t m_packetSeq = 0;
    int64_t m_endNs = 0;
};

void
Runner::Build()
{
    const Job& job = m_job;
    const std::size_t n = job.flows.size();

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(job.seed);
    ConfigureTcp(job);

    uint32_t maxIp = 0; // largest IP packet a flow sends
    for (const FlowSpec& f : job.flows)
    {
        maxIp = std::max(maxIp, f.udp ? f.pktBytes : f.segBytes + kHeaderAllowanceBytes);
    }
    const uint16_t mtu = static_cast<uint16_t>(std::max<uint32_t>(kDefaultMtu, maxIp));

    NodeContainer routers;
    routers.Create(2);
    NodeContainer sources;
    sources.Create(n);
    NodeContainer sinks;
    sinks.Create(n);

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", DataRateValue(DataRate(job.accessRateBps)));
    access.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    access.SetChannelAttribute("Delay", TimeValue(NanoSeconds(job.accessDelayNs)));

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", DataRateValue(DataRate(job.bottleneckRateBps)));
    bottleneck.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    bottleneck.SetChannelAttribute("Delay", TimeValue(NanoSeconds(job.bottleneckDelayNs)));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));

    std::vector<NetDeviceContainer> left(n);
    std::vector<NetDeviceContainer> right(n);
    NetDeviceContainer accessDevices;
    for (std::size_t i = 0; i < n; i++)
    {
        left[i] = access.Install(sources.Get(i), routers.Get(0));
        right[i] = access.Install(routers.Get(1), sinks.Get(i));
        accessDevices.Add(left[i]);
        accessDevices.Add(right[i]);
    }
    NetDeviceContainer core = bottleneck.Install(routers.Get(0), routers.Get(1));

    InternetStackHelper stack;
    stack.Install(routers);
    stack.Install(sources);
    stack.Install(sinks);

    // Queue discs before addresses: Ipv4AddressHelper::Assign would install
    // ns-3's default queue disc on devices without one.
    TrafficControlHelper lossless;
    lossless.SetRootQueueDisc("ns3::FifoQueueDisc",
                              "MaxSize",
                              QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, kLosslessPkts)));
    lossless.Install(accessDevices);
    lossless.Install(core.Get(1));

    TrafficControlHelper tested;
    if (job.discipline == kNs3Fifo)
    {
        tested.SetRootQueueDisc(
            "ns3::FifoQueueDisc",
            "MaxSize",
            QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, Ns3FifoLimitPkts(job))));
        QueueDiscContainer discs = tested.Install(core.Get(0));
        m_fifo = discs.Get(0);
        m_fifo->Initialize();
    }
    else
    {
        tested.SetRootQueueDisc("ns3::QlabQueueDisc",
                                "Discipline",
                                StringValue(job.discipline),
                                "Params",
                                StringValue(job.disciplineParams),
                                "Seed",
                                UintegerValue(job.seed));
        QueueDiscContainer discs = tested.Install(core.Get(0));
        m_disc = DynamicCast<QlabQueueDisc>(discs.Get(0));
        NS_ABORT_MSG_IF(!m_disc, "the bottleneck queue disc is not a QlabQueueDisc");
        m_disc->Initialize(); // bands exist from now on (idempotent later)
    }

    Ipv4AddressHelper leftAddresses("10.0.0.0", "255.255.255.252");
    Ipv4AddressHelper rightAddresses("10.128.0.0", "255.255.255.252");
    Ipv4AddressHelper coreAddresses("192.168.0.0", "255.255.255.252");
    coreAddresses.Assign(core);

    m_flows.resize(n);
    for (std::size_t i = 0; i < n; i++)
    {
        const FlowSpec& f = job.flows[i];
        Ipv4InterfaceContainer l = leftAddresses.Assign(left[i]);
        leftAddresses.NewNetwork();
        Ipv4InterfaceContainer r = rightAddresses.Assign(right[i]);
        rightAddresses.NewNetwork();
        m_flowBySource[l.GetAddress(0).Get()] = f.flowId;
        const uint8_t tos = static_cast<uint8_t>((f.cls << 5) | (f.prec << 3));

        if (f.udp)
        {
            Ptr<QlabUdpSink> sink = CreateObject<QlabUdpSink>();
            sink->Setup(InetSocketAddress(Ipv4Address::GetAny(), kSinkPort));
            sinks.Get(i)->AddApplication(sink);
            sink->SetStartTime(Seconds(0));
            Ptr<QlabUdpSender> sender = CreateObject<QlabUdpSender>();
            sender->Setup(InetSocketAddress(r.GetAddress(1), kSinkPort),
                          f.pktBytes,
                          f.intervalNs,
                          f.onPeriods,
                          tos);
            sources.Get(i)->AddApplication(sender);
            sender->SetStartTime(NanoSeconds(f.startNs));
            m_flows[i].udpSender = sender;
            m_flows[i].udpSink = sink;
            // Done once the last datagram had time to arrive; it ended sending at stopNs.
            Simulator::Schedule(NanoSeconds(f.stopNs + kUdpDrainNs),
                                &Runner::OnFlowComplete,
                                this,
                                i);
            continue;
        }

        Ptr<QlabBulkSink> sink = CreateObject<QlabBulkSink>();
        sink->Setup(InetSocketAddress(Ipv4Address::GetAny(), kSinkPort),
                    f.segBytes,
                    f.bytes,
                    MakeCallback(&Runner::OnFlowComplete, this, i));
        sinks.Get(i)->AddApplication(sink);
        sink->SetStartTime(Seconds(0));

        Ptr<QlabBulkSender> sender = CreateObject<QlabBulkSender>();
        sender->Setup(InetSocketAddress(r.GetAddress(1), kSinkPort), f.segBytes, f.bytes, tos);
        sources.Get(i)->AddApplication(sender);
        sender->SetStartTime(NanoSeconds(f.startNs));

        m_flows[i].sender = sender;
        m_flows[i].sink = sink;
        if (f.bytes == 0)
        {
            // Nothing to deliver: complete as soon as the flow starts.
            Simulator::Schedule(NanoSeconds(f.startNs), &Runner::OnFlowComplete, this, i);
        }
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    m_queues = std::make_unique<CsvWriter>(m_outDir / "queues.csv",
                                           "time_s,band,backlog_pkts,backlog_bytes,enqueued_pkts,"
                                           "dequeued_pkts,dropped_pkts,drop_prob");
    if (job.tracePackets)
    {
        m_packets = std::make_unique<CsvWriter>(
            m_outDir / "packets.csv",
            "seq,time_s,event,band,len_bytes,flow_id,sojourn_s,reason");
        if (m_disc)
        {
            m_disc->TraceConnectWithoutContext("BandEvent",
                                               MakeCallback(&Runner::OnBandEvent, this));
        }
        else
        {
            m_fifo->TraceConnectWithoutContext("Enqueue",
                                               MakeCallback(&Runner::OnFifoEnqueue, this));
            m_fifo->TraceConnectWithoutContext("Dequeue",
                                               MakeCallback(&Runner::OnFifoDequeue, this));
            m_fifo->TraceConnectWithoutContext(
                "DropBeforeEnqueue",
                MakeCallback(&Runner::OnFifoDropBeforeEnqueue, this));
            m_fifo->TraceConnectWithoutContext("DropAfterDequeue",
                                               MakeCallback(&Runner::OnFifoDropAfterDequeue, this));
            m_fifo->TraceConnectWithoutContext("Mark", MakeCallback(&Runner::OnFifoMark, this));
        }
    }
}

void
Runner::OnFlowComplete(std::size_t index)
{
    FlowState& flow = m_flows[index];
    if (flow.completed)
    {
        return;
    }
    flow.completed = true;
    // A UDP flow ends when its sender stops; it completes kUdpDrainNs later.
    flow.endNs = m_job.flows[index].udp ? m_job.flows[index].stopNs
                                        : Simulator::Now().GetNanoSeconds();
    m_completed++;
    if (m_job.stopWhenDone && m_completed == m_flows.size())
    {
        Simulator::Stop();
    }
}

void
Runner::SampleQueue(uint64_t k)
{
    WriteQueueSample();
    const int64_t next = static_cast<int64_t>(k + 1) * m_job.queueSampleIntervalNs;
    if (next <= m_job.durationNs)
    {
        Simulator::Schedule(NanoSeconds(next) - Simulator::Now(), &Runner::SampleQueue, this, k + 1);
    }
}

void
Runner::WriteQueueSample()
{
    const int64_t now = Simulator::Now().GetNanoSeconds();
    if (now == m_lastSampleNs)
    {
        return;
    }
    m_lastSampleNs = now;
    const std::string time = FormatSeconds(now);
    char buf[256];
    if (m_fifo)
    {
        const QueueDisc::Stats& s = m_fifo->GetStats();
        std::snprintf(buf,
                      sizeof(buf),
                      ",0,%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",NA",
                      m_fifo->GetNPackets(),
                      m_fifo->GetNBytes(),
                      s.nTotalEnqueuedPackets,
                      s.nTotalDequeuedPackets - s.nTotalDroppedPacketsAfterDequeue,
                      s.nTotalDroppedPackets);
        m_queues->Line(time + buf);
        return;
    }
    for (uint32_t b = 0; b < m_disc->GetNBands(); b++)
    {
        const QlabQueueDisc::BandCounters& c = m_disc->GetBandCounters(b);
        std::snprintf(buf,
                      sizeof(buf),
                      ",%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",NA",
                      b,
                      m_disc->GetBandBacklogPkts(b),
                      m_disc->GetBandBacklogBytes(b),
                      c.enqueuedPkts,
                      c.dequeuedPkts,
                      c.droppedPkts);
        m_queues->Line(time + buf);
    }
}

void
Runner::OnBandEvent(Ptr<const QueueDiscItem> item,
                    QlabQueueDisc::Event event,
                    uint32_t band,
                    const char* reason)
{
    const char* name = "enq";
    bool sojourn = false;
    switch (event)
    {
    case QlabQueueDisc::Event::ENQUEUE:
        name = "enq";
        break;
    case QlabQueueDisc::Event::DEQUEUE:
        name = "deq";
        sojourn = true;
        break;
    case QlabQueueDisc::Event::DROP_ARRIVAL:
        name = "drop";
        break;
    case QlabQueueDisc::Event::DROP_HEAD:
        name = "drop";
        sojourn = true;
        break;
    case QlabQueueDisc::Event::MARK:
        name = "mark";
        break;
    }

    WritePacketEvent(item, name, band, sojourn, reason);
}

void
Runner::OnFifoEnqueue(Ptr<const QueueDiscItem> item)
{
    WritePacketEvent(item, "enq", 0, false, nullptr);
}

void
Runner::OnFifoDequeue(Ptr<const QueueDiscItem> item)
{
    WritePacketEvent(item, "deq", 0, true, nullptr);
}

/// FifoQueueDisc's drop reason in the core's vocabulary.
const char*
FifoReason(const char* reason)
{
    return std::strcmp(reason, FifoQueueDisc::LIMIT_EXCEEDED_DROP) == 0
               ? QlabQueueDisc::OVERFLOW_DROP
               : reason;
}

void
Runner::OnFifoDropBeforeEnqueue(Ptr<const QueueDiscItem> item, const char* reason)
{
    WritePacketEvent(item, "drop", 0, false, FifoReason(reason));
}

void
Runner::OnFifoDropAfterDequeue(Ptr<const QueueDiscItem> item, const char* reason)
{
    WritePacketEvent(item, "drop", 0, true, FifoReason(reason));
}

void
Runner::OnFifoMark(Ptr<const QueueDiscItem> item, const char* /* reason */)
{
    WritePacketEvent(item, "mark", 0, false, nullptr);
}

void
Runner::WritePacketEvent(Ptr<const QueueDiscItem> item,
                         const char* name,
                         uint32_t band,
                         bool sojourn,
                         const char* reason)
{
    const Time now = Simulator::Now();
    std::string flow = "NA";
    Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
    if (ip)
    {
        auto it = m_flowBySource.find(ip->GetHeader().GetSource().Get());
        if (it != m_flowBySource.end())
        {
            flow = std::to_string(it->second);
        }
    }
    const std::string sojournText =
        sojourn ? FormatSeconds((now - item->GetTimeStamp()).GetNanoSeconds()) : "NA";

    char buf[64];
    std::snprintf(buf, sizeof(buf), "%" PRIu64 ",", m_packetSeq++);
    std::string line = buf;
    line += FormatSeconds(now.GetNanoSeconds());
    line += ",";
    line += name;
    std::snprintf(buf, sizeof(buf), ",%" PRIu32 ",%" PRIu32 ",", band, item->GetSize());
    line += buf;
    line += flow + "," + sojournText + "," + (reason ? CsvField(reason) : "NA");
    m_packets->Line(line);
}

void
Runner::Run()
{
    Simulator::Stop(NanoSeconds(m_job.durationNs));
    Simulator::Schedule(Seconds(0), &Runner::SampleQueue, this, 0);
    Simulator::Run();
    m_endNs = Simulator::Now().GetNanoSeconds();
    WriteQueueSample(); // the state at the end (skipped if already sampled now)
    m_queues->Close();
    if (m_packets)
    {
        m_packets->Close();
    }
}

void
Runner::WriteFlows()
{
    std::vector<std::size_t> order(m_flows.size());
    for (std::size_t i = 0; i < order.size(); i++)
    {
        order[i] = i;
    }
    std::sort(order.begin(), order.end(), [this](std::size_t a, std::size_t b) {
        return m_job.flows[a].flowId < m_job.flows[b].flowId;
    });

    CsvWriter out(m_outDir / "flows.csv",
                  "flow_id,app,group,cls,prec,seg_bytes,bytes_goal,bytes_delivered,start_s,end_s,"
                  "completed,fct_s,goodput_bps,tx_packets,retx_packets,rx_packets,lost_packets,"
                  "delay_mean_s,delay_max_s");
    for (std::size_t i : order)
    {
        const FlowSpec& f = m_job.flows[i];
        const FlowState& s = m_flows[i];
        uint64_t goal;
        uint64_t delivered;
        uint64_t tx;
        uint64_t retx;
        if (f.udp)
        {
            goal = s.udpSender->GetScheduledPackets() * f.segBytes;
            delivered = s.udpSink->GetRxBytes();
            tx = s.udpSender->GetTxPackets();
            retx = 0;
        }
        else
        {
            goal = f.bytes;
            delivered = s.sink->GetDeliveredBytes();
            tx = s.sender->GetTxSegments();
            retx = s.sender->GetRetxSegments();
        }
        const int64_t end = s.completed ? s.endNs : m_endNs;
        const int64_t elapsed = end - f.startNs;
        const double goodput =
            elapsed > 0 ? 8.0 * static_cast<double>(delivered) / (static_cast<double>(elapsed) / 1e9)
                        : 0.0;
        char buf[256];
        std::snprintf(buf, sizeof(buf), "%" PRIu64 ",", f.flowId);
        std::string line = buf + CsvField(f.app) + "," + CsvField(f.group);
        std::snprintf(buf,
                      sizeof(buf),
                      ",%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",",
                      f.cls,
                      f.prec,
                      f.segBytes,
                      goal,
                      delivered);
        line += buf;
        line += FormatSeconds(f.startNs) + ",";
        line += (s.completed ? FormatSeconds(s.endNs) : "NA") + ",";
        line += s.completed ? "1," : "0,";
        line += (s.completed && !f.udp ? FormatSeconds(s.endNs - f.startNs) : "NA") + ",";
        line += FormatRate(goodput);
        std::snprintf(buf, sizeof(buf), ",%" PRIu64 ",%" PRIu64, tx, retx);
        line += buf;
        if (f.udp)
        {
            const uint64_t rx = s.udpSink->GetRxPackets();
            std::snprintf(buf, sizeof(buf), ",%" PRIu64 ",%" PRIu64 ",", rx, tx - rx);
            line += buf;
            // The mean, rounded to the nearest nanosecond.
            line += rx ? FormatSeconds((s.udpSink->GetDelaySumNs() + static_cast<int64_t>(rx / 2)) /
                                       static_cast<int64_t>(rx))
                       : std::string("NA");
            line += ",";
            line += rx ? FormatSeconds(s.udpSink->GetDelayMaxNs()) : std::string("NA");
        }
        else
        {
            line += ",NA,NA,NA,NA";
        }
        out.Line(line);
    }
    out.Close();
}

void
Runner::WriteRunInfo(double wallSeconds)
{
    nlohmann::ordered_json info;
    info["sim_end_s"] = static_cast<double>(m_endNs) / 1e9;
    info["all_completed"] = m_completed == m_flows.size();
    info["versions"] = {{"ns3", QLAB_NS3_VERSION}, {"compiler", __VERSION__}};
    info["wall_time_s"] = wallSeconds;
    const std::filesystem::path path = m_outDir / "runner.json";
    std::ofstream out(path);
    out << info.dump(2) << "\n";
    out.close();
    if (!out)
    {
        std::fprintf(stderr, "qlab-ns3-run: error writing %s\n", path.c_str());
        std::exit(kExitIoError);
    }
}

[[noreturn]] void
BadJob(const std::string& file, const std::string& message)
{
    std::fprintf(stderr, "qlab-ns3-run: %s: %s\n", file.c_str(), message.c_str());
    std::exit(kExitBadJob);
}

} // namespace

int
main(int argc, char* argv[])
{
    if (argc != 3)
    {
        std::fprintf(stderr, "usage: qlab-ns3-run JOB.json OUTDIR\n");
        return kExitBadJob;
    }
    const std::string jobPath = argv[1];
    const std::filesystem::path outDir = argv[2];

    std::ifstream in(jobPath);
    if (!in)
    {
        BadJob(jobPath, std::string("cannot read: ") + std::strerror(errno));
    }
    std::stringstream text;
    text << in.rdbuf();

    Job job;
    try
    {
        job = ParseJob(json::parse(text.str()));
    }
    catch (const json::parse_error& e)
    {
        BadJob(jobPath, std::string("invalid JSON: ") + e.what());
    }
    catch (const JobError& e)
    {
        BadJob(jobPath, e.what());
    }

    if (!kTcpVariants.count(job.tcpVariant))
    {
        std::string known;
        for (const auto& [name, type] : kTcpVariants)
        {
            known += (known.empty() ? "" : ", ") + name;
        }
        BadJob(jobPath, "tcp.variant: unknown \"" + job.tcpVariant + "\" (known: " + known + ")");
    }
    std::string error;
    // ns3-fifo takes exactly droptail's parameters; FifoQueueDisc ignores cls/prec.
    const bool ns3Fifo = job.discipline == kNs3Fifo;
    const std::string coreDiscipline = ns3Fifo ? kNs3FifoCounterpart : job.discipline;
    if (!qcore_find(coreDiscipline.c_str()))
    {
        QlabQueueDisc::ValidateConfig(job.discipline, "", &error); // lists the known names
        BadJob(jobPath, "discipline.kind: " + error + " or the ns-3 kind " + kNs3Fifo);
    }
    if (!QlabQueueDisc::ValidateConfig(coreDiscipline, job.disciplineParams, &error))
    {
        BadJob(jobPath, "discipline.params: " + error);
    }
    for (std::size_t i = 0; i < job.flows.size() && !ns3Fifo; i++)
    {
        const FlowSpec& f = job.flows[i];
        if (!QlabQueueDisc::ValidatePacketClass(job.discipline,
                                                job.disciplineParams,
                                                static_cast<uint8_t>(f.cls),
                                                static_cast<uint8_t>(f.prec),
                                                &error))
        {
            BadJob(jobPath, "flows[" + std::to_string(i) + "] (cls/prec): " + error);
        }
    }

    std::error_code ec;
    std::filesystem::create_directories(outDir, ec);
    if (ec)
    {
        std::fprintf(stderr, "qlab-ns3-run: cannot create %s: %s\n", outDir.c_str(),
                     ec.message().c_str());
        return kExitIoError;
    }

    const auto wallStart = std::chrono::steady_clock::now();
    Runner runner(job, outDir);
    runner.Build();
    runner.Run();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    runner.WriteFlows();
    runner.WriteRunInfo(wall);
    Simulator::Destroy();
    return 0;
}
