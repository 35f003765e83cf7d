/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-network.cc - building the network of a plan (see qlab-network.h and
 * the model at the top of qlab-ns3-run.cc).
 */
#include "qlab-network.h"

#include "qlab-routing.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <initializer_list>


using namespace ns3;

namespace qlab
{

namespace
{

/// Queue discs that never drop: beyond any backlog a run can build.
constexpr uint32_t kLosslessPkts = 1000000;
/// The device transmit queue behind a discipline: the backlog sits in the discipline.
const char* const kDisciplineDeviceQueue = "1p";
/// A bulk task never gives up (as in ns-2): ns-3's defaults abort a
/// connection after 6 SYN or 6 consecutive data retransmissions, which
/// happens under heavy congestion.  The SYN backoff is 2^k * ConnTimeout,
/// computed as an int shift, so its count stays well below 31; the data
/// RTO backoff is capped at 60 s by ns-3.
constexpr uint32_t kSynRetries = 24;
constexpr uint32_t kDataRetries = 1000000000;
/**
 * ns-3 random streams of the run's seed (RngSeedManager run = the plan's
 * seed), assigned by position so a plan always gets the same ones: the queue
 * disc at end e (0: the link's a, 1: b) of plan link l that draws (ns-3's
 * own PIE) stream kQueueStreamBase + 2l + e; the congestion control that
 * draws (ns-3's BBR) of plan flow i stream kTcpStreamBase + 2i at its sender
 * and + 2i + 1 at its sink.  (The wireless part's AODV and MAC: 1000 on,
 * 2000 on, qlab-wireless.cc.)
 */
constexpr int64_t kQueueStreamBase = 1000000;
constexpr int64_t kTcpStreamBase = 2000000;

/**
 * A device's receive callback: an IPv4 packet goes to Ipv4L3Protocol::Receive
 * as Node::ReceiveFromDevice and TrafficControlLayer::Receive would pass it
 * (to = the device's address, a packet for this host); point-to-point links
 * carry nothing else.
 */
bool
DeliverIpv4(Ipv4L3Protocol* ipv4,
            Ptr<NetDevice> device,
            Ptr<const Packet> packet,
            uint16_t protocol,
            const Address& from)
{
    if (protocol != Ipv4L3Protocol::PROT_NUMBER)
    {
        return false;
    }
    ipv4->Receive(device, packet, protocol, from, device->GetAddress(), NetDevice::PACKET_HOST);
    return true;
}

} // namespace

WirelessInstaller g_installWireless = nullptr;

Network::Network(const Plan& plan)
    : m_plan(plan)
{
}

const std::vector<Network::TracedQueue>&
Network::GetTracedQueues() const
{
    return m_traced;
}

void
Network::ConfigureTcp() const
{
    const TcpSpec& tcp = m_plan.tcp;
    // The plan's variant: TcpNewReno, TcpCubic or TcpBbr (BBR paces its own
    // sender: it turns pacing on and sets the pacing rate itself).
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(TypeId::LookupByName(tcp.congestionTypeId)));
    // ns-2's NewReno recovery (RFC 6582) rather than ns-3's default PRR, for every variant.
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(tcp.sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(tcp.timestamps));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(tcp.windowScaling));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(NanoSeconds(tcp.minRtoNs)));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(NanoSeconds(tcp.synTimeoutNs)));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", EnumValue(TcpSocketState::Off));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(tcp.initialCwndSegments));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(tcp.delayedAckCount));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(tcp.rcvBufBytes));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(tcp.sndBufBytes));
    Config::SetDefault("ns3::TcpSocket::ConnCount", UintegerValue(kSynRetries));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(kDataRetries));
}

void
Network::Build()
{
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(m_plan.seed);
    ConfigureTcp();

    // Nodes in plan order (node i has id i), then the links' devices in
    // plan order: the order ns-3 objects and events are created in, which
    // fixes the order of simultaneous events.
    m_nodes.Create(static_cast<uint32_t>(m_plan.nodes.size()));
    BuildLinks();

    InternetStackHelper stack;
    stack.SetIpv6StackInstall(false);
    stack.SetRoutingHelper(QlabRoutingHelper());
    if (!m_plan.wireless.present)
    {
        stack.Install(m_nodes);
    }
    else
    {
        if (!g_installWireless)
        {
            NS_FATAL_ERROR("a plan with wireless nodes needs qlab-ns3-run-wireless");
        }
        // The wireless hosts get their stack from the installer; the
        // gateway a list routing, QlabRouting first (the wired routes; it
        // finds no route to the radio side) and the installer's after it.
        Ipv4ListRoutingHelper list;
        list.Add(QlabRoutingHelper(), 10);
        InternetStackHelper gateway;
        gateway.SetIpv6StackInstall(false);
        gateway.SetRoutingHelper(list);
        for (uint32_t n = 0; n < m_plan.nodes.size(); n++)
        {
            if (n == m_plan.wireless.gateway)
            {
                gateway.Install(m_nodes.Get(n));
            }
            else if (!m_plan.nodes[n].wireless)
            {
                stack.Install(m_nodes.Get(n));
            }
        }
    }

    // Queue discs before interfaces, as TrafficControlHelper expects.
    InstallQueues();
    AssignAddresses();
    if (m_plan.wireless.present)
    {
        g_installWireless(m_plan, m_nodes);
    }
    ConfigureRoutes();
    DeliverWithoutScans();
    if (!m_plan.tcp.handshake)
    {
        SkipHandshakes();
    }
    InstallApplications();
    InstallRelays();
}

namespace
{

/// The gateway relays a wireless flow's datagram onto its wired path as it
/// arrived (same payload: the sender's SeqTsHeader, so the sink's delay is
/// end to end).
void
Relay(Ptr<Socket> out, Ptr<Socket> in)
{
    while (Ptr<Packet> p = in->Recv())
    {
        out->Send(p);
    }
}

} // namespace

void
Network::InstallRelays()
{
    if (!m_plan.wireless.present)
    {
        return;
    }
    Ptr<Node> gateway = m_nodes.Get(m_plan.wireless.gateway);
    const TypeId udp = TypeId::LookupByName("ns3::UdpSocketFactory");
    uint16_t relays = 0;
    for (const FlowSpec& f : m_plan.flows)
    {
        if (!m_plan.nodes[f.src].wireless)
        {
            continue;
        }
        Ptr<Socket> in = Socket::CreateSocket(gateway, udp);
        in->Bind(InetSocketAddress(Ipv4Address(m_plan.wireless.gatewayAddress), RelayPort(relays++)));
        Ptr<Socket> out = Socket::CreateSocket(gateway, udp);
        // the gateway's own address, the flow's relay port: the relayed copy's 5-tuple
        out->Bind(InetSocketAddress(Ipv4Address(m_plan.nodes[m_plan.wireless.gateway].address),
                                   RelayPort(static_cast<uint16_t>(relays - 1))));
        out->SetIpTos(f.tos);
        out->Connect(InetSocketAddress(Ipv4Address(m_plan.nodes[f.dst].address), f.dstPort));
        in->SetRecvCallback(MakeBoundCallback(&Relay, out));
        m_relays.emplace_back(in, out);
    }
}

void
Network::SkipHandshakes()
{
    // Every host's TCP hands its handshake segments straight to the peer's
    // (qlab-handshake-shortcut.h): connections start established.
    m_shortcut = std::make_unique<HandshakeShortcut>();
    for (uint32_t n = 0; n < m_plan.nodes.size(); n++)
    {
        if (!m_plan.nodes[n].router && !m_plan.nodes[n].wireless)
        {
            m_shortcut->Install(m_nodes.Get(n), Ipv4Address(m_plan.nodes[n].address));
        }
    }
}

namespace
{

/// The device started a transmission: the queue disc waits for its end.
void
StopWhileTransmitting(Ptr<NetDeviceQueue> txq, Ptr<const Packet>)
{
    txq->Stop();
}

/// The transmission ended: the queue disc may choose the next packet, once
/// the device has finished with this one (PointToPointNetDevice clears its
/// current packet after this trace fires).
void
WakeWhenIdle(Ptr<NetDeviceQueue> txq, Ptr<const Packet>)
{
    Simulator::ScheduleNow(&NetDeviceQueue::Wake, txq);
}

} // namespace

void
Network::BuildLinks()
{
    PointToPointHelper p2p;
    for (const LinkSpec& link : m_plan.links)
    {
        p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(link.rateBps)));
        p2p.SetDeviceAttribute("Mtu", UintegerValue(link.mtuBytes));
        p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(link.delayNs)));
        NetDeviceContainer d = p2p.Install(m_nodes.Get(link.a), m_nodes.Get(link.b));
        m_devices.emplace_back(d.Get(0), d.Get(1));
        // Behind a discipline the backlog builds in the discipline, and the
        // discipline chooses the next packet when the link falls idle, as a
        // scheduler in queueing theory and ns-2's queues do: the device holds
        // one packet, and flow control stops the queue disc from the start
        // of each transmission to its end.  (With the device queue alone,
        // the queue disc would hand over the next packet as soon as a
        // transmission starts, so a priority discipline would choose one
        // packet early: an urgent packet arriving during a transmission
        // would wait for that one too.)  Elsewhere ns-3's default (100
        // packets).
        const QueueSpec* queues[2] = {&link.queueA, &link.queueB};
        for (int end = 0; end < 2; end++)
        {
            if (queues[end]->kind != QueueSpec::Kind::LOSSLESS)
            {
                Ptr<PointToPointNetDevice> device = DynamicCast<PointToPointNetDevice>(d.Get(end));
                device->GetQueue()->SetMaxSize(QueueSize(kDisciplineDeviceQueue));
                Ptr<NetDeviceQueue> txq =
                    device->GetObject<NetDeviceQueueInterface>()->GetTxQueue(0);
                device->TraceConnectWithoutContext("PhyTxBegin",
                                                   MakeBoundCallback(&StopWhileTransmitting, txq));
                device->TraceConnectWithoutContext("PhyTxEnd",
                                                   MakeBoundCallback(&WakeWhenIdle, txq));
            }
        }
    }
}

Ptr<QueueDisc>
Network::CreateQueueDisc(const QueueSpec& q, int64_t stream) const
{
    switch (q.kind)
    {
    case QueueSpec::Kind::LOSSLESS: {
        ObjectFactory f("ns3::FifoQueueDisc");
        f.Set("MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, kLosslessPkts)));
        return f.Create<QueueDisc>();
    }
    case QueueSpec::Kind::NS3: {
        // ns-3's own queue disc, every attribute from the plan (or qlab's fixed settings)
        ObjectFactory f(q.typeId);
        for (const auto& [attribute, text] : q.attributes)
        {
            f.Set(attribute, StringValue(text));
        }
        Ptr<QueueDisc> disc = f.Create<QueueDisc>();
        if (q.quantumBytes)
        {
            DynamicCast<FqCoDelQueueDisc>(disc)->SetQuantum(q.quantumBytes);
        }
        if (Ptr<PieQueueDisc> pie = DynamicCast<PieQueueDisc>(disc))
        {
            pie->AssignStreams(stream); // its random early drops
        }
        disc->Initialize();
        return disc;
    }
    case QueueSpec::Kind::CORE: {
        // The typed queue disc, every parameter through its attribute.
        ObjectFactory f(QlabQueueDisc::TypedTypeIdName(q.ops->name));
        for (const ParamSetting& p : q.params)
        {
            const std::string attribute = QlabQueueDisc::AttributeName(p.desc->name);
            switch (p.desc->kind)
            {
            case QCORE_PARAM_U32:
            case QCORE_PARAM_U64:
                f.Set(attribute, UintegerValue(p.number));
                break;
            case QCORE_PARAM_BOOL:
                f.Set(attribute, BooleanValue(p.number != 0));
                break;
            default:
                f.Set(attribute, StringValue(p.text));
                break;
            }
        }
        Ptr<QlabQueueDisc> disc = f.Create<QlabQueueDisc>();
        disc->AssignStreams(static_cast<int64_t>(q.seed));
        disc->Initialize(); // bands exist from now on
        return disc;
    }
    }
    return nullptr;
}

void
Network::InstallQueues()
{
    for (std::size_t i = 0; i < m_plan.links.size(); i++)
    {
        const LinkSpec& link = m_plan.links[i];
        const std::pair<const QueueSpec*, Ptr<NetDevice>> ends[2] = {
            {&link.queueA, m_devices[i].first},
            {&link.queueB, m_devices[i].second}};
        for (int64_t e = 0; e < 2; e++)
        {
            const auto& [queue, device] = ends[e];
            const int64_t stream = kQueueStreamBase + 2 * static_cast<int64_t>(i) + e;
            device->GetNode()->GetObject<TrafficControlLayer>()->SetRootQueueDiscOnDevice(
                device, CreateQueueDisc(*queue, stream));
        }
    }
    for (const TracedQueueSpec& t : m_plan.traced)
    {
        Ptr<NetDevice> device = t.atA ? m_devices[t.link].first : m_devices[t.link].second;
        Ptr<QueueDisc> q =
            device->GetNode()->GetObject<TrafficControlLayer>()->GetRootQueueDiscOnDevice(device);
        TracedQueue traced{t.name, DynamicCast<QlabQueueDisc>(q), nullptr};
        if (!traced.disc)
        {
            traced.native = q;
        }
        m_traced.push_back(traced);
    }
}

void
Network::AssignAddresses()
{
    // Every interface of a node carries the node's address (/32: links are
    // point-to-point and routes name links, not subnets).
    const Ipv4Mask host("/32");
    for (std::size_t i = 0; i < m_plan.links.size(); i++)
    {
        const LinkSpec& link = m_plan.links[i];
        uint32_t index[2];
        const std::pair<uint32_t, Ptr<NetDevice>> ends[2] = {{link.a, m_devices[i].first},
                                                             {link.b, m_devices[i].second}};
        for (int e = 0; e < 2; e++)
        {
            Ptr<Ipv4> ipv4 = ends[e].second->GetNode()->GetObject<Ipv4>();
            index[e] = ipv4->AddInterface(ends[e].second);
            ipv4->AddAddress(index[e],
                             Ipv4InterfaceAddress(Ipv4Address(m_plan.nodes[ends[e].first].address),
                                                  host));
            ipv4->SetUp(index[e]);
        }
        m_interfaces.emplace_back(index[0], index[1]);
    }
}

void
Network::ConfigureRoutes()
{
    auto routing = [this](uint32_t node) {
        Ptr<Ipv4RoutingProtocol> r = m_nodes.Get(node)->GetObject<Ipv4>()->GetRoutingProtocol();
        if (Ptr<Ipv4ListRouting> list = DynamicCast<Ipv4ListRouting>(r))
        {
            int16_t priority;
            r = list->GetRoutingProtocol(0, priority); // the gateway's QlabRouting (priority 10)
        }
        return DynamicCast<QlabRouting>(r);
    };
    auto interfaceAt = [this](uint32_t link, uint32_t node) {
        return node == m_plan.links[link].a ? m_interfaces[link].first
                                            : m_interfaces[link].second;
    };
    for (uint32_t n = 0; n < m_plan.nodes.size(); n++)
    {
        const NodeSpec& node = m_plan.nodes[n];
        if (node.wireless)
        {
            continue; // the installer's routing
        }
        if (!node.router)
        {
            routing(n)->SetDefaultRoute(interfaceAt(node.links[0], n));
            continue;
        }
        for (uint32_t l : node.links)
        {
            const uint32_t peer = m_plan.links[l].Peer(n);
            if (!m_plan.nodes[peer].router)
            {
                routing(n)->AddHostRoute(Ipv4Address(m_plan.nodes[peer].address),
                                         interfaceAt(l, n));
            }
        }
    }
    for (const RouteSpec& r : m_plan.routes)
    {
        Ipv4Mask mask(r.len == 0 ? 0 : ~uint32_t(0) << (32 - r.len));
        routing(r.node)->AddNetworkRoute(Ipv4Address(r.net), mask, interfaceAt(r.link, r.node));
    }
}

void
Network::DeliverWithoutScans()
{
    // Node::AddDevice makes a device hand what it receives to
    // Node::NonPromiscReceiveFromDevice, which scans every protocol handler of
    // the node, and Ipv4L3Protocol::AddInterface registers two per device
    // (IPv4 and ARP, both to TrafficControlLayer::Receive, which scans its
    // own two per device): O(interfaces) per packet at a router.  Each
    // device hands IPv4 packets straight to Ipv4L3Protocol::Receive instead,
    // with the arguments that path would have given it.
    for (std::size_t i = 0; i < m_plan.links.size(); i++)
    {
        for (Ptr<NetDevice> device : {m_devices[i].first, m_devices[i].second})
        {
            Ipv4L3Protocol* ipv4 = PeekPointer(device->GetNode()->GetObject<Ipv4L3Protocol>());
            device->SetReceiveCallback(MakeBoundCallback(&DeliverIpv4, ipv4));
        }
    }
}

void
Network::InstallApplications()
{
    m_flows.resize(m_plan.flows.size());
    m_remaining = m_plan.flows.size();
    uint16_t relays = 0;
    for (std::size_t i = 0; i < m_plan.flows.size(); i++)
    {
        const FlowSpec& f = m_plan.flows[i];
        Ptr<Node> src = m_nodes.Get(f.src);
        Ptr<Node> dst = m_nodes.Get(f.dst);
        // a wireless host sends to its gateway's radio, on a port of the
        // flow's own there, and the gateway relays (InstallRelays)
        const bool wireless = m_plan.nodes[f.src].wireless;
        const InetSocketAddress sinkAddress(
            Ipv4Address(wireless ? m_plan.wireless.gatewayAddress : m_plan.nodes[f.dst].address),
            wireless ? RelayPort(relays++) : f.dstPort);
        const InetSocketAddress listen(Ipv4Address::GetAny(), f.dstPort);
        // The sink first, then the sender, each started when the flow starts
        // (the sink before the sender at the same time).
        if (f.udp)
        {
            Ptr<QlabUdpSink> sink = CreateObject<QlabUdpSink>();
            sink->Setup(listen);
            dst->AddApplication(sink);
            sink->SetStartTime(NanoSeconds(f.startNs));
            Ptr<QlabUdpSender> sender = CreateObject<QlabUdpSender>();
            sender->Setup(sinkAddress,
                          f.srcPort,
                          f.pktBytes,
                          f.poisson ? 1 : f.intervalNs,
                          f.onPeriodsNs,
                          f.tos);
            if (f.poisson)
            {
                // one mean gap per period: the flow's, or each state's (Markov-modulated)
                sender->SetPoisson(f.periodMeanIntervalsNs.empty()
                                       ? std::vector<double>(f.onPeriodsNs.size(), f.meanIntervalNs)
                                       : f.periodMeanIntervalsNs,
                                   f.poissonSeed);
                if (f.sizeMeanBytes > 0)
                {
                    sender->SetExponentialSizes(f.sizeMeanBytes, f.sizeSeed);
                }
            }
            src->AddApplication(sender);
            sender->SetStartTime(NanoSeconds(f.startNs));
            m_flows[i].udpSink = sink;
            m_flows[i].udpSender = sender;
            // Done once the last datagrams had time to arrive.
            Simulator::Schedule(NanoSeconds(f.UdpStopNs() + m_plan.udpDrainNs),
                                &Network::FlowDone,
                                this,
                                i);
            continue;
        }
        Ptr<QlabBulkSink> sink = CreateObject<QlabBulkSink>();
        sink->Setup(listen, f.segBytes, f.bytes, MakeCallback(&Network::FlowDone, this, i));
        sink->AssignStreams(kTcpStreamBase + 2 * static_cast<int64_t>(i) + 1);
        dst->AddApplication(sink);
        sink->SetStartTime(NanoSeconds(f.startNs));
        Ptr<QlabBulkSender> sender = CreateObject<QlabBulkSender>();
        sender->Setup(sinkAddress, f.srcPort, f.segBytes, f.bytes, f.tos);
        sender->AssignStreams(kTcpStreamBase + 2 * static_cast<int64_t>(i));
        src->AddApplication(sender);
        sender->SetStartTime(NanoSeconds(f.startNs));
        m_flows[i].sink = sink;
        m_flows[i].sender = sender;
        if (f.bytes == 0)
        {
            // Nothing to deliver: done as it starts.
            Simulator::Schedule(NanoSeconds(f.startNs), &Network::FlowDone, this, i);
        }
        else if (f.stopNs >= 0)
        {
            // Stopped mid-transfer (docs/jobs.md, stop_ns): done then.
            Simulator::Schedule(NanoSeconds(f.stopNs), &QlabBulkSender::Kill, sender);
            Simulator::Schedule(NanoSeconds(f.stopNs), &Network::FlowDone, this, i);
        }
    }
}

void
Network::FlowDone(std::size_t index)
{
    if (m_flows[index].done)
    {
        return;
    }
    m_flows[index].done = true;
    if (!m_flowDone.IsNull())
    {
        m_flowDone(index);
    }
    if (--m_remaining == 0 && m_plan.stopWhenDone)
    {
        Simulator::Stop();
    }
}

bool
Network::GetTcpSnapshot(std::size_t index,
                        QlabTcpSocket::Snapshot* snapshot,
                        uint64_t* retxSegments) const
{
    const Ptr<QlabBulkSender>& sender = m_flows[index].sender;
    if (!sender || !sender->GetSocket())
    {
        return false;
    }
    *snapshot = sender->GetSocket()->GetSnapshot();
    *retxSegments = sender->GetRetxSegments();
    return true;
}

void
Network::SetTcpChangeCallback(std::size_t index, Callback<void> changed)
{
    m_flows[index].sender->SetTcpChangeCallback(changed);
}

void
Network::SetFlowDoneCallback(Callback<void, std::size_t> done)
{
    m_flowDone = done;
}

Network::FlowFacts
Network::GetFlowFacts(std::size_t index) const
{
    const FlowApps& apps = m_flows[index];
    FlowFacts facts;
    if (m_plan.flows[index].udp)
    {
        facts.txPackets = apps.udpSender->GetTxPackets();
        facts.rxPackets = apps.udpSink->GetRxPackets();
        facts.rxBytes = apps.udpSink->GetRxBytes();
        facts.firstRxNs = apps.udpSink->GetFirstRxNs();
        facts.lastRxNs = apps.udpSink->GetLastRxNs();
        facts.delaySumNs = apps.udpSink->GetDelaySumNs();
        facts.delayMaxNs = apps.udpSink->GetDelayMaxNs();
        return facts;
    }
    facts.txPackets = apps.sender->GetTxSegments();
    facts.retxPackets = apps.sender->GetRetxSegments();
    facts.rxBytes = apps.sink->GetDeliveredBytes();
    facts.firstRxNs = apps.sink->GetFirstRxNs();
    facts.lastRxNs = apps.sink->GetLastRxNs();
    return facts;
}

} // namespace qlab
