/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-ns3-run - run one resolved plan (docs/jobs.md) in ns-3 and write its
 * raw facts (docs/traces.md, "Raw facts: what a runner writes").
 *
 *     qlab-ns3-run PLAN.json OUTDIR
 *
 * Writes OUTDIR/flow_facts.csv, OUTDIR/queue_facts.csv, OUTDIR/packet_facts.csv
 * (when trace.packets), OUTDIR/tcp_facts.csv (when trace.tcp lists flows) and
 * OUTDIR/runner.json; `qlab run-job` checks them
 * against the plan and derives the trace tables.  A bad plan (invalid JSON,
 * a missing or ill-typed field, a reference to nothing, a discipline
 * parameter the core rejects, a flow without a route) is reported on stderr
 * with the field's path and exits 2 (ParsePlan, qlab-plan.h); I/O failures
 * exit 1.
 *
 * The model (built by qlab-network.cc):
 *   - The graph of the plan: one ns-3 node per plan node (node i has id i,
 *     created in plan order), one point-to-point link per plan link (in plan
 *     order; DataRate rate_bps, channel Delay delay_ns, device Mtu
 *     mtu_bytes).  Point-to-point links add a 2-byte PPP header to each IP
 *     packet on the wire (ns-3's model); qlab sets the MTU so that no packet
 *     is fragmented (a TCP segment plus 80 bytes of headers and options,
 *     or a datagram, fits; checked), since ns-3's TCP does not shrink its
 *     payload when options are present.
 *   - The queue at each link end (the root queue disc of the sending node's
 *     device): `lossless`, a FifoQueueDisc of kLosslessPkts packets that
 *     never drops; a core discipline, its typed queue disc
 *     ns3::Qlab<Name>QueueDisc with every parameter set through its
 *     attribute (qlab-queue-disc.h) and its generator seeded with the
 *     queue's seed through AssignStreams; an `ns3-*` kind, one of ns-3's
 *     own queue discs with every attribute from the plan (qlab-plan.cc's
 *     table: `ns3-fifo`, FifoQueueDisc, the reference for the adapter's
 *     cost and its identity with droptail; the native baselines `ns3-codel`,
 *     `ns3-fq-codel`, `ns3-pie`: CoDelQueueDisc, FqCoDelQueueDisc,
 *     PieQueueDisc).  Behind a discipline (core or ns3-*) the device's own
 *     transmit queue holds 1 packet and
 *     flow control stops the queue disc from the start of each
 *     transmission to its end, so the backlog builds in the discipline and
 *     the discipline chooses the next packet when the link falls idle, as
 *     ns-2's queues and queueing theory's servers do (with the device queue
 *     alone a priority discipline would choose one packet early; the M/G/1
 *     validation, scenarios/validation, checks it); elsewhere it keeps
 *     ns-3's default (100 packets) and, with flow control, never drops.
 *   - Addresses and routes: every interface of a node has the node's
 *     address (/32); QlabRouting (qlab-routing.h) on every node delivers
 *     locally by a hash set of the node's addresses, sends a host's packets
 *     over its one link, and forwards at a router by a hash map of the
 *     hosts attached to it, then the plan's prefix routes (longest first):
 *     no list routing, no global routing, no per-packet scan of interfaces
 *     or routes.  Each device hands IPv4 packets straight to
 *     Ipv4L3Protocol::Receive (Network::DeliverWithoutScans), not through
 *     the node's and the traffic-control layer's lists of protocol handlers
 *     (two per device each, scanned per packet).  IPv6 is not installed.
 *   - TCP from plan.tcp, set explicitly (Network::ConfigureTcp): the
 *     variant's congestion control (TcpNewReno, TcpCubic or TcpBbr, which
 *     paces its sender) with RFC 6582 classic recovery (ns-2's NewReno, not
 *     ns-3's default PRR), SACK, timestamps, window scaling, initial cwnd, delayed-ACK
 *     count, min RTO, buffer sizes, SYN retransmission timeout
 *     (ConnTimeout); the segment size is per flow, on both the sender's and
 *     the sink's socket.  ECN is off.  Senders never give up (SYN and data
 *     retry limits raised).  Everything else keeps ns-3 3.37's defaults,
 *     notably DelAckTimeout 0.2 s, LimitedTransmit on, ClockGranularity
 *     1 ms, Nagle off.
 *   - ns3-tcp-fixes.cc carries the upstream fix for ns-3 issue #991, which
 *     otherwise crashes receiver-window-limited runs.  The bulk flows'
 *     sockets are QlabTcpSockets (qlab-tcp-socket.h): Karn's rule on the
 *     handshake and RFC 6298 5.7 (a 3 s RTO for the data after a lost SYN,
 *     until the first RTT sample), where ns-3 3.37 samples the RTT back to
 *     the first SYN.  runner.json's versions name these patches.
 *   - tcp.handshake false: each host's TCP hands the handshake's segments
 *     straight to the peer's (qlab-handshake-shortcut.h): connections start
 *     established at start_ns, no SYN crosses a link.
 *   - Applications, per flow in plan order, the sink on the dst host, then
 *     the sender on the src host, both started at start_ns: QlabBulkSink
 *     listening on dst_port and QlabBulkSender bound to src_port connecting
 *     to the dst host's address:dst_port (qlab-bulk-apps.h), or QlabUdpSink
 *     / QlabUdpSender replaying the plan's on-periods (qlab-udp-apps.h).
 *     The flow's tos is the IPv4 ToS byte of its packets (ACKs carry 0).
 *     A host may carry several flows on distinct ports.
 *   - The run ends at duration_ns, or, with stop_when_done, as soon as every
 *     bulk flow's sink has all its bytes (a 0-byte flow as it starts) and
 *     every UDP flow's last on-period ended udp_drain_ns ago.
 *   - Randomness: ns-3's RngSeedManager gets seed 1, run = plan seed; what
 *     draws from it has a stream fixed by its place in the plan (ns-3's PIE
 *     at a link end, BBR at a flow's ends: qlab-network.cc), so a plan and
 *     its seed give the same run; each core discipline's generator its
 *     queue's seed.  The workload itself is in the plan.
 *
 * Output: integer nanoseconds, no locale; rows sorted as docs/traces.md
 * says.  Queue samples of every trace.queues queue (band rows) are taken at
 * k * queue_sample_interval_ns and once more at the end of the run; for a
 * core discipline from its per-band counters, for an ns3-* queue disc band 0
 * from the QueueDisc's stats (enqueued = nTotalEnqueuedPackets, dequeued =
 * nTotalDequeuedPackets minus drops after dequeue, dropped =
 * nTotalDroppedPackets; FQ-CoDel's flow queues are not bands).  Packet
 * events come from the discipline's BandEvent trace, or an ns3-* queue
 * disc's QueueDisc traces (Enqueue, Dequeue, DropBeforeEnqueue,
 * DropAfterDequeue, Mark; a packet dequeued and then dropped, CoDel's head
 * drop, is one drop with its sojourn, no deq; ns-3's drop reasons written
 * in the core's words, Ns3DropReason); their
 * flow_id is the flow whose 5-tuple (addresses, ports, protocol) the packet
 * carries, NA for the reverse direction (ACKs).  TCP rows of every
 * trace.tcp flow: every tcp_sample_interval_ns from its start until it is
 * done, after each change of its sender's connection or congestion state
 * and each SYN or data segment sent again (once that event is over), and
 * when it is done; sorted by time and flow at the end.  runner.json's
 * wall_time_s covers building the network and running the simulation (not
 * reading the plan or writing the facts).
 */
#include "qlab-network.h"
#include "qlab-plan.h"

#include <unistd.h>
#include "qlab-queue-disc.h"
#include "qlab-tcp-socket.h"

#include "ns3/core-module.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/traffic-control-module.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#ifndef QLAB_NS3_VERSION
#define QLAB_NS3_VERSION "unknown"
#endif

using namespace ns3;
using qlab::Plan;

namespace
{

constexpr int kExitIoError = 1;
constexpr int kExitBadPlan = 2;
constexpr uint8_t kProtoTcp = 6;
constexpr uint8_t kProtoUdp = 17;

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

    void Line(const char* line)
    {
        if (std::fputs(line, m_file) < 0 || std::fputc('\n', m_file) == EOF)
        {
            Fail();
        }
    }

    void Close()
    {
        if (m_file)
        {
            std::FILE* f = m_file;
            m_file = nullptr;
            if (std::fclose(f) != 0)
            {
                Fail();
            }
        }
    }

  private:
    [[noreturn]] void Fail()
    {
        std::fprintf(stderr, "qlab-ns3-run: error writing %s\n", m_path.c_str());
        std::exit(kExitIoError);
    }

    std::filesystem::path m_path;
    std::FILE* m_file = nullptr;
    std::vector<char> m_buffer;
};

/// An IPv4 5-tuple, host byte order.
struct FiveTuple
{
    uint32_t saddr;
    uint32_t daddr;
    uint16_t sport;
    uint16_t dport;
    uint8_t proto;

    bool operator==(const FiveTuple& o) const
    {
        return saddr == o.saddr && daddr == o.daddr && sport == o.sport && dport == o.dport &&
               proto == o.proto;
    }
};

struct FiveTupleHash
{
    std::size_t operator()(const FiveTuple& t) const
    {
        return qcore_flow_hash(t.saddr, t.daddr, t.sport, t.dport, t.proto);
    }
};

/// The 5-tuple an IPv4 packet carries (ports 0 when it has none).
FiveTuple
TupleOf(Ptr<const Ipv4QueueDiscItem> item)
{
    const Ipv4Header& h = item->GetHeader();
    FiveTuple t{h.GetSource().Get(), h.GetDestination().Get(), 0, 0, h.GetProtocol()};
    uint8_t ports[4];
    if ((t.proto == kProtoTcp || t.proto == kProtoUdp) && h.GetFragmentOffset() == 0 &&
        item->GetPacket()->CopyData(ports, 4) == 4)
    {
        t.sport = static_cast<uint16_t>(ports[0] << 8 | ports[1]);
        t.dport = static_cast<uint16_t>(ports[2] << 8 | ports[3]);
    }
    return t;
}

/**
 * A drop reason of one of ns-3's own queue discs in the core's vocabulary
 * (docs/traces.md, packets.reason): `overflow` when the buffer was full
 * (FifoQueueDisc's limit, CoDel's and PIE's limit, FQ-CoDel's overlimit
 * drops from the head of its longest flow queue, a full internal queue),
 * `aqm` for the AQM's own decisions (CoDel's control law, in FQ-CoDel's
 * flow queues too, and PIE's random early drops).  An unknown reason is
 * written as it is, so the trace's check names it.
 */
const char*
Ns3DropReason(const char* reason)
{
    static const std::string child = QueueDisc::CHILD_QUEUE_DISC_DROP;
    static const std::vector<std::pair<std::string, const char*>> reasons = {
        {FifoQueueDisc::LIMIT_EXCEEDED_DROP, QlabQueueDisc::OVERFLOW_DROP},
        {QueueDisc::INTERNAL_QUEUE_DROP, QlabQueueDisc::OVERFLOW_DROP},
        {CoDelQueueDisc::OVERLIMIT_DROP, QlabQueueDisc::OVERFLOW_DROP},
        {CoDelQueueDisc::TARGET_EXCEEDED_DROP, QlabQueueDisc::AQM_DROP},
        {child + CoDelQueueDisc::OVERLIMIT_DROP, QlabQueueDisc::OVERFLOW_DROP},
        {child + CoDelQueueDisc::TARGET_EXCEEDED_DROP, QlabQueueDisc::AQM_DROP},
        {FqCoDelQueueDisc::OVERLIMIT_DROP, QlabQueueDisc::OVERFLOW_DROP},
        {PieQueueDisc::FORCED_DROP, QlabQueueDisc::OVERFLOW_DROP},
        {PieQueueDisc::UNFORCED_DROP, QlabQueueDisc::AQM_DROP},
    };
    for (const auto& [ns3Reason, core] : reasons)
    {
        if (ns3Reason == reason)
        {
            return core;
        }
    }
    return reason;
}

/// A connection state as tcp_facts.csv names it (RFC 793's names).
const char*
TcpStateName(TcpSocket::TcpStates_t state)
{
    return state < TcpSocket::LAST_STATE ? TcpSocket::TcpStateName[state] : "UNKNOWN";
}

/// A congestion state as tcp_facts.csv names it (Linux's tcpi_ca_state names).
const char*
CongStateName(TcpSocketState::TcpCongState_t state)
{
    switch (state)
    {
    case TcpSocketState::CA_OPEN:
        return "open";
    case TcpSocketState::CA_DISORDER:
        return "disorder";
    case TcpSocketState::CA_CWR:
        return "cwr";
    case TcpSocketState::CA_RECOVERY:
        return "recovery";
    case TcpSocketState::CA_LOSS:
        return "loss";
    default:
        return "unknown";
    }
}

/// Which of qlab's TCP patches this run has (runner.json's versions): the
/// #991 fix always; Karn's rule on the handshake and RFC 6298 5.7 unless
/// turned off or changed through NS_ATTRIBUTE_DEFAULT (qlab-tcp-socket.h):
/// "ns3-issue-991,handshake-karn,rfc6298-5.7" as qlab runs it.
std::string
TcpPatches()
{
    Ptr<QlabTcpSocket> probe = CreateObject<QlabTcpSocket>();
    BooleanValue karn;
    TimeValue synLossRto;
    probe->GetAttribute("HandshakeKarn", karn);
    probe->GetAttribute("SynLossRto", synLossRto);
    std::string patches = "ns3-issue-991";
    if (karn.Get())
    {
        patches += ",handshake-karn";
        const int64_t rto = synLossRto.Get().GetNanoSeconds();
        if (rto == QlabTcpSocket::kSynLossRtoNs)
        {
            patches += ",rfc6298-5.7";
        }
        else if (rto != 0)
        {
            patches += ",syn-loss-rto-" + std::to_string(rto) + "ns";
        }
    }
    return patches;
}

/// Runs a plan's network and writes its raw facts.
class Runner
{
  public:
    Runner(const Plan& plan, const std::filesystem::path& outDir)
        : m_plan(plan),
          m_network(plan),
          m_outDir(outDir)
    {
    }

    void Build();
    void Run();
    void WriteFlowFacts();
    void WriteRunnerJson(double wallSeconds);

  private:
    /// One row of tcp_facts.csv.
    struct TcpRow
    {
        int64_t timeNs;
        uint32_t flowId;
        QlabTcpSocket::Snapshot tcp;
        uint64_t retxSegments;
    };

    void BuildTcpTrace();
    void SampleTcp(uint64_t k);
    void OnTcpChange(std::size_t slot);
    void OnFlowDone(std::size_t flow);
    void TcpSample(std::size_t slot);
    void WriteTcpFacts();
    void SampleQueues(uint64_t k);
    void WriteQueueSample();
    void OnBandEvent(std::size_t queue,
                     Ptr<const QueueDiscItem> item,
                     QlabQueueDisc::Event event,
                     uint32_t band,
                     const char* reason);
    void OnNativeEnqueue(std::size_t queue, Ptr<const QueueDiscItem> item);
    void OnNativeDequeue(std::size_t queue, Ptr<const QueueDiscItem> item);
    void OnNativeDropBeforeEnqueue(std::size_t queue, Ptr<const QueueDiscItem> item, const char* r);
    void OnNativeDropAfterDequeue(std::size_t queue, Ptr<const QueueDiscItem> item, const char* r);
    void OnNativeMark(std::size_t queue, Ptr<const QueueDiscItem> item, const char* reason);
    /// One packet_facts row but its seq: "time_ns,queue,event,band,len_bytes,flow_id,sojourn_ns,reason".
    std::string PacketEvent(std::size_t queue,
                            Ptr<const QueueDiscItem> item,
                            const char* event,
                            uint32_t band,
                            bool sojourn,
                            const char* reason) const;
    void WritePacketEvent(std::size_t queue,
                          Ptr<const QueueDiscItem> item,
                          const char* event,
                          uint32_t band,
                          bool sojourn,
                          const char* reason);
    void WriteRow(const std::string& row);
    void FlushDequeue();

    const Plan& m_plan;
    qlab::Network m_network;
    std::filesystem::path m_outDir;

    std::unique_ptr<CsvWriter> m_queueFacts;
    std::unique_ptr<CsvWriter> m_packetFacts;
    std::unordered_map<FiveTuple, uint32_t, FiveTupleHash> m_flowByTuple; // data direction
    // trace.tcp: per traced flow (a slot, in plan.tcpTraced order) its rows
    std::vector<std::vector<TcpRow>> m_tcpRows;
    std::vector<bool> m_tcpDone;
    std::unordered_map<std::size_t, std::size_t> m_tcpSlot; // flow index -> slot
    int64_t m_lastSampleNs = -1;
    uint64_t m_packetSeq = 0;
    /// A native queue disc's dequeue not written yet: ns-3 fires Dequeue for
    /// a packet it then drops (CoDel's and FQ-CoDel's head drops), which is
    /// a drop, not a deq.  Written before the next event of any queue (or at
    /// the end), unless the packet is dropped first.
    Ptr<const QueueDiscItem> m_dequeued;
    std::string m_dequeuedRow;
    int64_t m_endNs = 0;
};

void
Runner::Build()
{
    m_network.Build();
    m_queueFacts = std::make_unique<CsvWriter>(m_outDir / "queue_facts.csv",
                                               "time_ns,queue,band,backlog_pkts,backlog_bytes,"
                                               "enqueued_pkts,dequeued_pkts,dropped_pkts");
    BuildTcpTrace();
    if (!m_plan.tracePackets)
    {
        return;
    }
    uint16_t relays = 0;
    for (const qlab::FlowSpec& f : m_plan.flows)
    {
        const FiveTuple t{m_plan.nodes[f.src].address, m_plan.nodes[f.dst].address, f.srcPort,
                          f.dstPort, f.udp ? kProtoUdp : kProtoTcp};
        m_flowByTuple.emplace(t, f.flowId);
        if (m_plan.nodes[f.src].wireless)
        {
            // the gateway relays it from its own address and the flow's relay port
            const FiveTuple relayed{m_plan.nodes[m_plan.wireless.gateway].address,
                                    m_plan.nodes[f.dst].address, qlab::RelayPort(relays++), f.dstPort,
                                    kProtoUdp};
            m_flowByTuple.emplace(relayed, f.flowId);
        }
    }
    m_packetFacts = std::make_unique<CsvWriter>(
        m_outDir / "packet_facts.csv",
        "seq,time_ns,queue,event,band,len_bytes,flow_id,sojourn_ns,reason");
    const std::vector<qlab::Network::TracedQueue>& queues = m_network.GetTracedQueues();
    for (std::size_t q = 0; q < queues.size(); q++)
    {
        if (queues[q].disc)
        {
            queues[q].disc->TraceConnectWithoutContext(
                "BandEvent", MakeCallback(&Runner::OnBandEvent, this, q));
            continue;
        }
        Ptr<QueueDisc> native = queues[q].native;
        native->TraceConnectWithoutContext("Enqueue",
                                           MakeCallback(&Runner::OnNativeEnqueue, this, q));
        native->TraceConnectWithoutContext("Dequeue",
                                           MakeCallback(&Runner::OnNativeDequeue, this, q));
        native->TraceConnectWithoutContext(
            "DropBeforeEnqueue",
            MakeCallback(&Runner::OnNativeDropBeforeEnqueue, this, q));
        native->TraceConnectWithoutContext(
            "DropAfterDequeue",
            MakeCallback(&Runner::OnNativeDropAfterDequeue, this, q));
        native->TraceConnectWithoutContext("Mark", MakeCallback(&Runner::OnNativeMark, this, q));
    }
}

void
Runner::Run()
{
    Simulator::Stop(NanoSeconds(m_plan.durationNs));
    Simulator::Schedule(Seconds(0), &Runner::SampleQueues, this, 0);
    if (!m_tcpSlot.empty())
    {
        Simulator::Schedule(Seconds(0), &Runner::SampleTcp, this, 0);
    }
    Simulator::Run();
    m_endNs = Simulator::Now().GetNanoSeconds();
    WriteQueueSample(); // the state at the end (skipped if already sampled now)
    m_queueFacts->Close();
    if (m_packetFacts)
    {
        FlushDequeue();
        m_packetFacts->Close();
    }
    if (!m_tcpSlot.empty())
    {
        WriteTcpFacts();
    }
}

void
Runner::BuildTcpTrace()
{
    if (m_plan.tcpTraced.empty())
    {
        return;
    }
    m_tcpRows.resize(m_plan.tcpTraced.size());
    m_tcpDone.assign(m_plan.tcpTraced.size(), false);
    for (std::size_t slot = 0; slot < m_plan.tcpTraced.size(); slot++)
    {
        const std::size_t flow = m_plan.tcpTraced[slot];
        m_tcpSlot.emplace(flow, slot);
        m_network.SetTcpChangeCallback(flow, MakeCallback(&Runner::OnTcpChange, this, slot));
    }
    m_network.SetFlowDoneCallback(MakeCallback(&Runner::OnFlowDone, this));
}

void
Runner::SampleTcp(uint64_t k)
{
    const int64_t now = Simulator::Now().GetNanoSeconds();
    bool running = false;
    for (std::size_t slot = 0; slot < m_plan.tcpTraced.size(); slot++)
    {
        if (!m_tcpDone[slot] && m_plan.flows[m_plan.tcpTraced[slot]].startNs <= now)
        {
            TcpSample(slot);
        }
        running = running || !m_tcpDone[slot];
    }
    const int64_t next = static_cast<int64_t>(k + 1) * m_plan.tcpSampleIntervalNs;
    if (running && next <= m_plan.durationNs)
    {
        Simulator::Schedule(NanoSeconds(next) - Simulator::Now(), &Runner::SampleTcp, this, k + 1);
    }
}

void
Runner::OnTcpChange(std::size_t slot)
{
    // Sampled once the event that changed it is over, so the values settled
    // (TcpSocketBase announces a state before it sets the RTO and windows).
    Simulator::ScheduleNow(&Runner::TcpSample, this, slot);
}

void
Runner::OnFlowDone(std::size_t flow)
{
    auto it = m_tcpSlot.find(flow);
    if (it != m_tcpSlot.end() && !m_tcpDone[it->second])
    {
        TcpSample(it->second); // the state when the last byte arrived
        m_tcpDone[it->second] = true;
    }
}

void
Runner::TcpSample(std::size_t slot)
{
    if (m_tcpDone[slot])
    {
        return;
    }
    const std::size_t flow = m_plan.tcpTraced[slot];
    TcpRow row{Simulator::Now().GetNanoSeconds(), m_plan.flows[flow].flowId, {}, 0};
    if (!m_network.GetTcpSnapshot(flow, &row.tcp, &row.retxSegments))
    {
        return; // not started yet
    }
    std::vector<TcpRow>& rows = m_tcpRows[slot];
    if (!rows.empty())
    {
        const TcpRow& last = rows.back();
        const QlabTcpSocket::Snapshot& a = last.tcp;
        const QlabTcpSocket::Snapshot& b = row.tcp;
        if (last.timeNs == row.timeNs && last.retxSegments == row.retxSegments &&
            a.cwndBytes == b.cwndBytes && a.ssthreshBytes == b.ssthreshBytes &&
            a.haveSrtt == b.haveSrtt && a.srttNs == b.srttNs && a.rtoNs == b.rtoNs &&
            a.state == b.state && a.congState == b.congState && a.synRetx == b.synRetx)
        {
            return; // nothing new at this instant
        }
    }
    rows.push_back(row);
}

void
Runner::WriteTcpFacts()
{
    std::vector<TcpRow> rows;
    for (const std::vector<TcpRow>& flowRows : m_tcpRows)
    {
        rows.insert(rows.end(), flowRows.begin(), flowRows.end());
    }
    // Each flow's rows are in time order; same-time rows of a flow keep theirs.
    std::stable_sort(rows.begin(), rows.end(), [](const TcpRow& x, const TcpRow& y) {
        return x.timeNs != y.timeNs ? x.timeNs < y.timeNs : x.flowId < y.flowId;
    });
    CsvWriter out(m_outDir / "tcp_facts.csv",
                  "time_ns,flow_id,cwnd_bytes,ssthresh_bytes,srtt_ns,rto_ns,retx_packets,"
                  "syn_retx_packets,state,ca_state");
    for (const TcpRow& r : rows)
    {
        char srtt[24] = "NA";
        if (r.tcp.haveSrtt)
        {
            std::snprintf(srtt, sizeof(srtt), "%" PRId64, r.tcp.srttNs);
        }
        char line[256];
        std::snprintf(line, sizeof(line),
                      "%" PRId64 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%s,%" PRId64 ",%" PRIu64
                      ",%" PRIu32 ",%s,%s",
                      r.timeNs, r.flowId, r.tcp.cwndBytes, r.tcp.ssthreshBytes, srtt, r.tcp.rtoNs,
                      r.retxSegments, r.tcp.synRetx, TcpStateName(r.tcp.state),
                      CongStateName(r.tcp.congState));
        out.Line(line);
    }
    out.Close();
}

void
Runner::SampleQueues(uint64_t k)
{
    WriteQueueSample();
    const int64_t next = static_cast<int64_t>(k + 1) * m_plan.queueSampleIntervalNs;
    if (next <= m_plan.durationNs)
    {
        Simulator::Schedule(NanoSeconds(next) - Simulator::Now(), &Runner::SampleQueues, this,
                            k + 1);
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
    char line[512];
    for (const qlab::Network::TracedQueue& q : m_network.GetTracedQueues())
    {
        if (q.native)
        {
            const QueueDisc::Stats& s = q.native->GetStats();
            std::snprintf(line, sizeof(line),
                          "%" PRId64 ",%s,0,%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32
                          ",%" PRIu32,
                          now, q.name.c_str(), q.native->GetNPackets(), q.native->GetNBytes(),
                          s.nTotalEnqueuedPackets,
                          s.nTotalDequeuedPackets - s.nTotalDroppedPacketsAfterDequeue,
                          s.nTotalDroppedPackets);
            m_queueFacts->Line(line);
            continue;
        }
        for (uint32_t b = 0; b < q.disc->GetNBands(); b++)
        {
            const QlabQueueDisc::BandCounters& c = q.disc->GetBandCounters(b);
            std::snprintf(line, sizeof(line),
                          "%" PRId64 ",%s,%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64
                          ",%" PRIu64 ",%" PRIu64,
                          now, q.name.c_str(), b, q.disc->GetBandBacklogPkts(b),
                          q.disc->GetBandBacklogBytes(b), c.enqueuedPkts, c.dequeuedPkts,
                          c.droppedPkts);
            m_queueFacts->Line(line);
        }
    }
}

void
Runner::OnBandEvent(std::size_t queue,
                    Ptr<const QueueDiscItem> item,
                    QlabQueueDisc::Event event,
                    uint32_t band,
                    const char* reason)
{
    switch (event)
    {
    case QlabQueueDisc::Event::ENQUEUE:
        WritePacketEvent(queue, item, "enq", band, false, nullptr);
        break;
    case QlabQueueDisc::Event::DEQUEUE:
        WritePacketEvent(queue, item, "deq", band, true, nullptr);
        break;
    case QlabQueueDisc::Event::DROP_ARRIVAL:
        WritePacketEvent(queue, item, "drop", band, false, reason);
        break;
    case QlabQueueDisc::Event::DROP_HEAD:
        WritePacketEvent(queue, item, "drop", band, true, reason);
        break;
    case QlabQueueDisc::Event::MARK:
        WritePacketEvent(queue, item, "mark", band, false, nullptr);
        break;
    }
}

void
Runner::OnNativeEnqueue(std::size_t queue, Ptr<const QueueDiscItem> item)
{
    WritePacketEvent(queue, item, "enq", 0, false, nullptr);
}

void
Runner::OnNativeDequeue(std::size_t queue, Ptr<const QueueDiscItem> item)
{
    FlushDequeue();
    m_dequeued = item;
    m_dequeuedRow = PacketEvent(queue, item, "deq", 0, true, nullptr);
}

void
Runner::OnNativeDropBeforeEnqueue(std::size_t queue, Ptr<const QueueDiscItem> item, const char* r)
{
    WritePacketEvent(queue, item, "drop", 0, false, Ns3DropReason(r));
}

void
Runner::OnNativeDropAfterDequeue(std::size_t queue, Ptr<const QueueDiscItem> item, const char* r)
{
    if (item == m_dequeued)
    {
        m_dequeued = nullptr; // dropped, not sent: its Dequeue was no deq
    }
    WritePacketEvent(queue, item, "drop", 0, true, Ns3DropReason(r));
}

void
Runner::OnNativeMark(std::size_t queue, Ptr<const QueueDiscItem> item, const char* /* reason */)
{
    WritePacketEvent(queue, item, "mark", 0, false, nullptr);
}

void
Runner::FlushDequeue()
{
    if (m_dequeued)
    {
        m_dequeued = nullptr;
        WriteRow(m_dequeuedRow);
    }
}

void
Runner::WriteRow(const std::string& row)
{
    const std::string line = std::to_string(m_packetSeq++) + "," + row;
    m_packetFacts->Line(line.c_str());
}

void
Runner::WritePacketEvent(std::size_t queue,
                         Ptr<const QueueDiscItem> item,
                         const char* event,
                         uint32_t band,
                         bool sojourn,
                         const char* reason)
{
    FlushDequeue();
    WriteRow(PacketEvent(queue, item, event, band, sojourn, reason));
}

std::string
Runner::PacketEvent(std::size_t queue,
                    Ptr<const QueueDiscItem> item,
                    const char* event,
                    uint32_t band,
                    bool sojourn,
                    const char* reason) const
{
    const int64_t now = Simulator::Now().GetNanoSeconds();
    char flow[16] = "NA";
    Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
    if (ip)
    {
        auto it = m_flowByTuple.find(TupleOf(ip));
        if (it != m_flowByTuple.end())
        {
            std::snprintf(flow, sizeof(flow), "%" PRIu32, it->second);
        }
    }
    char sojournText[24] = "NA";
    if (sojourn)
    {
        std::snprintf(sojournText, sizeof(sojournText), "%" PRId64,
                      now - item->GetTimeStamp().GetNanoSeconds());
    }
    char line[512];
    std::snprintf(line, sizeof(line), "%" PRId64 ",%s,%s,%" PRIu32 ",%" PRIu32 ",%s,%s,%s", now,
                  m_network.GetTracedQueues()[queue].name.c_str(), event, band, item->GetSize(),
                  flow, sojournText, reason ? reason : "NA");
    return line;
}

void
Runner::WriteFlowFacts()
{
    std::vector<std::size_t> order(m_plan.flows.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [this](std::size_t a, std::size_t b) {
        return m_plan.flows[a].flowId < m_plan.flows[b].flowId;
    });
    CsvWriter out(m_outDir / "flow_facts.csv",
                  "flow_id,tx_packets,retx_packets,rx_packets,rx_bytes,first_rx_ns,last_rx_ns,"
                  "delay_sum_ns,delay_max_ns");
    for (std::size_t i : order)
    {
        const qlab::FlowSpec& f = m_plan.flows[i];
        const qlab::Network::FlowFacts facts = m_network.GetFlowFacts(i);
        char rx[24] = "NA";
        char times[48] = "NA,NA";
        char delays[48] = "NA,NA";
        if (f.udp)
        {
            std::snprintf(rx, sizeof(rx), "%" PRIu64, facts.rxPackets);
            if (facts.rxPackets)
            {
                std::snprintf(delays, sizeof(delays), "%" PRId64 ",%" PRId64, facts.delaySumNs,
                              facts.delayMaxNs);
            }
        }
        if (facts.rxBytes)
        {
            std::snprintf(times, sizeof(times), "%" PRId64 ",%" PRId64, facts.firstRxNs,
                          facts.lastRxNs);
        }
        char line[256];
        std::snprintf(line, sizeof(line), "%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%s,%" PRIu64 ",%s,%s",
                      f.flowId, facts.txPackets, facts.retxPackets, rx, facts.rxBytes, times,
                      delays);
        out.Line(line);
    }
    out.Close();
}

void
Runner::WriteRunnerJson(double wallSeconds)
{
    nlohmann::ordered_json info;
    info["end_ns"] = m_endNs;
    info["versions"] = {{"ns3", QLAB_NS3_VERSION},
                        {"ns3-tcp-patches", TcpPatches()},
                        {"compiler", __VERSION__}};
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
BadPlan(const std::string& file, const std::string& message)
{
    std::fprintf(stderr, "qlab-ns3-run: %s: %s\n", file.c_str(), message.c_str());
    std::exit(kExitBadPlan);
}

} // namespace

int
main(int argc, char* argv[])
{
    if (argc != 3)
    {
        std::fprintf(stderr, "usage: qlab-ns3-run PLAN.json OUTDIR\n");
        return kExitBadPlan;
    }
    const std::string planPath = argv[1];
    const std::filesystem::path outDir = argv[2];

    std::ifstream in(planPath);
    if (!in)
    {
        BadPlan(planPath, std::string("cannot read: ") + std::strerror(errno));
    }
    std::stringstream text;
    text << in.rdbuf();
    Plan plan;
    try
    {
        plan = qlab::ParsePlan(nlohmann::json::parse(text.str()));
    }
    catch (const nlohmann::json::parse_error& e)
    {
        BadPlan(planPath, std::string("invalid JSON: ") + e.what());
    }
    catch (const qlab::PlanError& e)
    {
        BadPlan(planPath, e.what());
    }

    if (plan.wireless.present && !qlab::g_installWireless)
    {
        // Wireless hosts: qlab-ns3-run-wireless (beside this binary) runs
        // the plan; this one links nothing of ns-3's wifi.
        const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
        const std::string wireless = (self.parent_path() / "qlab-ns3-run-wireless").string();
        execv(wireless.c_str(), argv);
        std::fprintf(stderr, "qlab-ns3-run: %s: a plan with wireless nodes needs %s: %s\n",
                     planPath.c_str(), wireless.c_str(), std::strerror(errno));
        return kExitBadPlan;
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
    Runner runner(plan, outDir);
    runner.Build();
    runner.Run();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    runner.WriteFlowFacts();
    runner.WriteRunnerJson(wall);
    Simulator::Destroy();
    return 0;
}
