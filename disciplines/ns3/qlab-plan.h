/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-plan.h - a resolved plan (docs/jobs.md, docs/job.schema.json) as the
 * ns-3 runner reads it: typed, checked, with names resolved to indices.
 *
 * ParsePlan() reads only what the runner uses and checks it defensively
 * (qlab validates every plan first, but a runner must not build a wrong
 * network from a plan it was handed by hand): types and ranges of every
 * field it reads, references between nodes, links, routes, flows and traced
 * queues, every core discipline's parameters through the core itself (its
 * parser, qcore_configure, check_pkt for the flows' classes), a path for
 * every flow.  A mistake throws PlanError whose message starts with the
 * field's path, e.g. "links[3].queues.L.params.thresh: expected a decimal
 * with at most 6 places between 0 and 1 (fraction), got '1.5'".
 */
#ifndef QLAB_PLAN_H
#define QLAB_PLAN_H

#include "qcore.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace qlab
{

/// A mistake in the plan: the message starts with the field's path.
class PlanError : public std::runtime_error
{
  public:
    using std::runtime_error::runtime_error;
};

/// One parameter of a core discipline, as its ns-3 attribute takes it.
struct ParamSetting
{
    const struct qcore_param_desc* desc; //!< the core's table entry
    uint64_t number;                     //!< U32, U64: the value; BOOL: 0 or 1
    std::string text;                    //!< PPM, ENUM, U32_LIST: the core's syntax
};

/// The queue at one end of a link (what that node sends over it).
struct QueueSpec
{
    enum class Kind
    {
        LOSSLESS, //!< a FIFO that never drops
        CORE,     //!< a discipline of the core
        NS3,      //!< one of ns-3's own queue discs (the plan's ns3-* kinds)
    };
    Kind kind = Kind::LOSSLESS;
    const struct qcore_disc_ops* ops = nullptr; //!< CORE
    std::vector<ParamSetting> params;           //!< CORE: every parameter, in table order
    std::vector<uint64_t> coreParams;           //!< CORE: the configured params struct
    uint64_t seed = 0;                          //!< CORE: seed of the core's generator
    std::string ns3Kind;                        //!< NS3: the plan's kind, e.g. "ns3-codel"
    std::string typeId;                         //!< NS3: e.g. "ns3::CoDelQueueDisc"
    /// NS3: attribute name and value as ns-3 reads it from text ("100p",
    /// "5000000ns", "0.125", "false"): the kind's fixed settings, then the
    /// plan's parameters
    std::vector<std::pair<std::string, std::string>> attributes;
    uint32_t quantumBytes = 0; //!< NS3, ns3-fq-codel: FqCoDelQueueDisc::SetQuantum (no attribute)
};

struct NodeSpec
{
    std::string id;
    bool router = false;
    uint32_t address = 0;          //!< IPv4, host byte order
    std::vector<uint32_t> links;   //!< indices into Plan::links, in plan order
    bool wireless = false;         //!< a host of Plan::wireless (no links)
};

/// The plan's `wireless` (docs/jobs.md): hosts without links on one ad hoc
/// radio channel with a gateway router, which relays their datagrams.
struct WirelessSpec
{
    bool present = false;
    uint32_t gateway = 0;           //!< node index (a router)
    uint32_t gatewayAddress = 0;    //!< its radio interface's IPv4, host order
    std::pair<int64_t, int64_t> gatewayPositionMm;
    std::vector<uint32_t> nodes;    //!< node indices (hosts), plan order
    std::vector<std::pair<int64_t, int64_t>> positionsMm; //!< per node
    std::string dataMode;           //!< e.g. DsssRate2Mbps (802.11b)
    int64_t txPowerMdbm = 0;
    int64_t rxSensitivityMdbm = 0;
    int64_t antennaHeightMm = 0;
};

struct LinkSpec
{
    std::string id;
    uint32_t a = 0; //!< node index
    uint32_t b = 0; //!< node index
    uint64_t rateBps = 0;
    int64_t delayNs = 0;
    uint32_t mtuBytes = 0;
    QueueSpec queueA; //!< what a sends to b
    QueueSpec queueB; //!< what b sends to a

    /// The other end of the link seen from `node`.
    uint32_t Peer(uint32_t node) const
    {
        return node == a ? b : a;
    }
};

/// At a router, packets to net/len leave over link.
struct RouteSpec
{
    uint32_t node = 0;
    uint32_t net = 0;
    uint8_t len = 0;
    uint32_t link = 0;
};

struct FlowSpec
{
    uint32_t flowId = 0;
    bool udp = false;     //!< cbr, onoff, voip, poisson; else bulk (TCP)
    bool poisson = false; //!< UDP sends at Poisson times (docs/jobs.md, "poisson")
    uint32_t src = 0; //!< node index (a host)
    uint32_t dst = 0; //!< node index (a host)
    uint16_t srcPort = 0;
    uint16_t dstPort = 0;
    uint8_t tos = 0;
    int64_t startNs = 0;
    // bulk
    uint32_t segBytes = 0;
    uint64_t bytes = 0;
    int64_t stopNs = -1; //!< bulk: the sender stops (aborts) here; -1: never
    // UDP
    uint32_t pktBytes = 0;
    int64_t intervalNs = 0;      //!< cbr, onoff, voip
    double meanIntervalNs = 0;   //!< poisson: mean time between datagrams
    uint64_t poissonSeed = 0;    //!< poisson: the stream's splitmix64 seed
    /// poisson: each on-period's own mean gap (a Markov-modulated source); empty: meanIntervalNs for all
    std::vector<double> periodMeanIntervalsNs;
    double sizeMeanBytes = 0; //!< poisson: mean IP length of exponential sizes; 0: every datagram pktBytes
    uint64_t sizeSeed = 0;    //!< poisson with sizeMeanBytes: the sizes' splitmix64 seed
    std::vector<std::pair<int64_t, int64_t>> onPeriodsNs; //!< [start, end), sorted, disjoint

    /// UDP: when the sender stops (the end of its last on-period, or its start).
    int64_t UdpStopNs() const
    {
        return onPeriodsNs.empty() ? startNs : onPeriodsNs.back().second;
    }
};

struct TcpSpec
{
    std::string variant;           //!< NewReno, Cubic, Bbr
    std::string congestionTypeId;  //!< its ns-3 TcpCongestionOps, e.g. "ns3::TcpNewReno"
    bool sack = false;
    bool timestamps = false;
    bool windowScaling = false;
    uint32_t initialCwndSegments = 0;
    uint32_t delayedAckCount = 0;
    int64_t minRtoNs = 0;
    int64_t synTimeoutNs = 0;
    uint32_t rcvBufBytes = 0;
    uint32_t sndBufBytes = 0;
    /// false: connections start established (qlab-handshake-shortcut.h)
    bool handshake = true;
};

/// A traced queue, LINK:NODE.
struct TracedQueueSpec
{
    std::string name;
    uint32_t link = 0;
    bool atA = true; //!< the queue at the link's a end (else b)
};

struct Plan
{
    uint64_t seed = 0;
    int64_t durationNs = 0;
    bool stopWhenDone = false;
    int64_t udpDrainNs = 0;
    TcpSpec tcp;
    std::vector<NodeSpec> nodes;
    std::vector<LinkSpec> links;
    std::vector<RouteSpec> routes;
    std::vector<FlowSpec> flows; //!< in plan order
    int64_t queueSampleIntervalNs = 0;
    bool tracePackets = false;
    std::vector<TracedQueueSpec> traced; //!< sorted by name (the facts' order)
    std::vector<std::size_t> tcpTraced;  //!< trace.tcp: indices into flows (bulk), plan order
    int64_t tcpSampleIntervalNs = 0;     //!< valid when tcpTraced is not empty
    WirelessSpec wireless;               //!< present: the run needs qlab-ns3-run-wireless

    /// The queue at `node`'s end of a link.
    const QueueSpec& QueueAt(const LinkSpec& link, uint32_t node) const
    {
        return node == link.a ? link.queueA : link.queueB;
    }
};

/// TCP segment payload plus this must fit a link's MTU (IPv4 + TCP headers
/// + the largest options), so no runner fragments (docs/jobs.md).
constexpr uint32_t kTcpHeaderAllowanceBytes = 80;
/// IPv4 + UDP headers: a datagram's payload is pkt_bytes minus this.
constexpr uint32_t kUdpHeaderBytes = 28;

/// The plan in `doc`, checked; PlanError naming the field otherwise.
Plan ParsePlan(const nlohmann::json& doc);

/// "a.b.c.d" of a host-order IPv4 address.
std::string FormatIpv4(uint32_t address);

} // namespace qlab

#endif /* QLAB_PLAN_H */
