/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-network.h - the ns-3 network a plan describes (docs/jobs.md), built
 * and ready to run: nodes, point-to-point links, the queue at each link end,
 * static routes (QlabRouting), TCP settings and every flow's applications.
 * qlab-ns3-run adds the observation (queue samples, packet events, raw
 * facts); tests use it to look inside a run.  The model is documented at
 * the top of qlab-ns3-run.cc.
 */
#ifndef QLAB_NETWORK_H
#define QLAB_NETWORK_H

#include "qlab-bulk-apps.h"
#include "qlab-handshake-shortcut.h"
#include "qlab-plan.h"
#include "qlab-queue-disc.h"
#include "qlab-tcp-socket.h"
#include "qlab-udp-apps.h"

#include "ns3/net-device.h"
#include "ns3/node-container.h"
#include "ns3/queue-disc.h"
#include "ns3/socket.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace qlab
{

/**
 * Builds a plan's wireless part (Plan::wireless) on nodes that have an
 * internet stack except the wireless hosts: their radios, the gateway's
 * radio (after its wired interfaces are up), routing and addresses.
 * Defined in qlab-wireless.cc, which only qlab-ns3-run-wireless links (with
 * ns-3's wifi, mobility, propagation and AODV); null in qlab-ns3-run, whose
 * wired runs link and initialise nothing of it.
 */
using WirelessInstaller = void (*)(const Plan& plan, const ns3::NodeContainer& nodes);
/// Set by qlab-wireless.cc's static initialiser (null without it).
extern WirelessInstaller g_installWireless;

/// The gateway's port for the k-th wireless flow of a plan (plan order): its
/// relay listens there on the radio address and sends from there on the
/// gateway's own address (docs/jobs.md, "Wireless hosts").
inline uint16_t
RelayPort(uint16_t k)
{
    return static_cast<uint16_t>(20000 + k);
}

class Network
{
  public:
    /// \param plan the plan, checked (ParsePlan); it must outlive the network
    explicit Network(const Plan& plan);

    /**
     * Build everything: the simulator's seed, TCP defaults, nodes, links,
     * stacks, queues, addresses, routes, applications, and the stop when
     * every flow is done (plan.stopWhenDone).
     */
    void Build();

    /// A traced queue: a core discipline (disc) or one of ns-3's own queue discs (native).
    struct TracedQueue
    {
        std::string name; //!< LINK:NODE
        ns3::Ptr<ns3::QlabQueueDisc> disc;
        ns3::Ptr<ns3::QueueDisc> native;
    };

    /// The plan's trace.queues, sorted by name (valid after Build).
    const std::vector<TracedQueue>& GetTracedQueues() const;

    /// What the runner reports of one flow (docs/traces.md, flow_facts).
    struct FlowFacts
    {
        uint64_t txPackets = 0;
        uint64_t retxPackets = 0;
        uint64_t rxPackets = 0; //!< UDP only
        uint64_t rxBytes = 0;
        int64_t firstRxNs = 0; //!< valid when rxBytes > 0
        int64_t lastRxNs = 0;  //!< valid when rxBytes > 0
        int64_t delaySumNs = 0; //!< UDP, valid when rxPackets > 0
        int64_t delayMaxNs = 0; //!< UDP, valid when rxPackets > 0
    };

    /// \param index the flow's index in plan.flows
    FlowFacts GetFlowFacts(std::size_t index) const;

    /**
     * The TCP state of a bulk flow's sender (qlab-tcp-socket.h) and the data
     * segments it retransmitted so far; false before its application started.
     * \param index the flow's index in plan.flows (a bulk flow)
     */
    bool GetTcpSnapshot(std::size_t index,
                        ns3::QlabTcpSocket::Snapshot* snapshot,
                        uint64_t* retxSegments) const;

    /**
     * \param index a bulk flow's index in plan.flows
     * \param changed called when its sender's connection state or congestion
     * state changes or it sends a SYN or a data segment again (set after
     * Build, before running)
     */
    void SetTcpChangeCallback(std::size_t index, ns3::Callback<void> changed);

    /// \param done called once per flow, with its index, when the flow is done
    void SetFlowDoneCallback(ns3::Callback<void, std::size_t> done);

  private:
    void ConfigureTcp() const;
    void BuildLinks();
    void InstallQueues();
    void AssignAddresses();
    void ConfigureRoutes();
    void DeliverWithoutScans();
    void SkipHandshakes();
    void InstallApplications();
    void InstallRelays();
    ns3::Ptr<ns3::QueueDisc> CreateQueueDisc(const QueueSpec& q, int64_t stream) const;
    void FlowDone(std::size_t index);

    const Plan& m_plan;
    ns3::NodeContainer m_nodes;
    /// per link: the device at a (0) and at b (1)
    std::vector<std::pair<ns3::Ptr<ns3::NetDevice>, ns3::Ptr<ns3::NetDevice>>> m_devices;
    /// per link: the IPv4 interface index at a and at b
    std::vector<std::pair<uint32_t, uint32_t>> m_interfaces;
    std::vector<TracedQueue> m_traced;

    struct FlowApps
    {
        ns3::Ptr<ns3::QlabBulkSender> sender;
        ns3::Ptr<ns3::QlabBulkSink> sink;
        ns3::Ptr<ns3::QlabUdpSender> udpSender;
        ns3::Ptr<ns3::QlabUdpSink> udpSink;
        bool done = false;
    };
    std::vector<FlowApps> m_flows;
    std::size_t m_remaining = 0; //!< flows not done yet
    ns3::Callback<void, std::size_t> m_flowDone;
    std::unique_ptr<HandshakeShortcut> m_shortcut; //!< plan.tcp.handshake false
    /// the gateway's relay sockets of the wireless flows: (receive, send)
    std::vector<std::pair<ns3::Ptr<ns3::Socket>, ns3::Ptr<ns3::Socket>>> m_relays;
};

} // namespace qlab

#endif /* QLAB_NETWORK_H */
