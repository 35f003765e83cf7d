/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-udp-apps.cc - sender and sink of a qlab UDP flow (see qlab-udp-apps.h).
 */
#include "qlab-udp-apps.h"

#include "ns3/abort.h"
#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/seq-ts-header.h"
#include "ns3/simulator.h"
#include "ns3/udp-socket-factory.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("QlabUdpApps");

NS_OBJECT_ENSURE_REGISTERED(QlabUdpSender);
NS_OBJECT_ENSURE_REGISTERED(QlabUdpSink);

// ------------------------------------------------------- poisson stream

double
QlabPoissonStream::NextExponential()
{
    const uint64_t z = qcore_rng_u64(&m_rng);
    const double u = static_cast<double>(z >> 11) * 0x1.0p-53; // [0, 1)
    return -std::log1p(-u);
}

int64_t
QlabPoissonStream::NextGapNs(double meanNs)
{
    return static_cast<int64_t>(std::floor(NextExponential() * meanNs + 0.5));
}

uint32_t
QlabPoissonStream::NextSizeBytes(double meanBytes, uint32_t minBytes, uint32_t maxBytes)
{
    const double extra = std::floor(NextExponential() * (meanBytes - minBytes) + 0.5);
    return extra >= static_cast<double>(maxBytes - minBytes) ? maxBytes
                                                              : minBytes + static_cast<uint32_t>(extra);
}

// ---------------------------------------------------------------- sender

TypeId
QlabUdpSender::GetTypeId()
{
    static TypeId tid = TypeId("ns3::QlabUdpSender")
                            .SetParent<Application>()
                            .SetGroupName("Applications")
                            .AddConstructor<QlabUdpSender>();
    return tid;
}

QlabUdpSender::QlabUdpSender()
    : m_localPort(0),
      m_ipBytes(kMinIpBytes),
      m_intervalNs(1),
      m_tos(0),
      m_txPackets(0),
      m_sizeMeanBytes(0)
{
}

QlabUdpSender::~QlabUdpSender() = default;

void
QlabUdpSender::Setup(const Address& peer,
                     uint16_t localPort,
                     uint32_t ipBytes,
                     int64_t intervalNs,
                     std::vector<std::pair<int64_t, int64_t>> onPeriods,
                     uint8_t tos)
{
    NS_ABORT_MSG_IF(ipBytes < kMinIpBytes, "QlabUdpSender: datagrams need at least "
                                               << kMinIpBytes << " IP bytes");
    NS_ABORT_MSG_IF(intervalNs <= 0, "QlabUdpSender: the interval must be positive");
    for (std::size_t i = 0; i < onPeriods.size(); i++)
    {
        NS_ABORT_MSG_IF(onPeriods[i].first < 0 || onPeriods[i].second < onPeriods[i].first ||
                            (i > 0 && onPeriods[i].first < onPeriods[i - 1].second),
                        "QlabUdpSender: on-periods must be sorted and disjoint");
    }
    m_peer = peer;
    m_localPort = localPort;
    m_ipBytes = ipBytes;
    m_intervalNs = intervalNs;
    m_onPeriods = std::move(onPeriods);
    m_tos = tos;
}

void
QlabUdpSender::SetPoisson(std::vector<double> meanIntervalsNs, uint64_t seed)
{
    NS_ABORT_MSG_IF(meanIntervalsNs.size() != m_onPeriods.size(),
                    "QlabUdpSender: one mean interval per on-period");
    for (double mean : meanIntervalsNs)
    {
        NS_ABORT_MSG_IF(!(mean >= 1.0), "QlabUdpSender: the mean intervals must be >= 1 ns");
    }
    m_poisson = std::make_unique<QlabPoissonStream>(seed);
    m_periodMeansNs = std::move(meanIntervalsNs);
}

void
QlabUdpSender::SetExponentialSizes(double meanBytes, uint64_t seed)
{
    NS_ABORT_MSG_IF(!(meanBytes > kMinIpBytes) || !(meanBytes <= m_ipBytes),
                    "QlabUdpSender: the mean size must be above " << kMinIpBytes
                                                                  << " bytes and at most the largest");
    m_sizes = std::make_unique<QlabPoissonStream>(seed);
    m_sizeMeanBytes = meanBytes;
}

void
QlabUdpSender::SchedulePoisson(std::size_t period, int64_t fromNs)
{
    // fromNs: the last send in `period`, or the period's start.  A draw
    // that lands at or past a period's end is spent; the next period's
    // first gap counts from its start.
    int64_t t = fromNs + m_poisson->NextGapNs(m_periodMeansNs[period]);
    while (t >= m_onPeriods[period].second)
    {
        if (++period == m_onPeriods.size())
        {
            return;
        }
        t = m_onPeriods[period].first + m_poisson->NextGapNs(m_periodMeansNs[period]);
    }
    m_next = Simulator::Schedule(NanoSeconds(t) - Simulator::Now(),
                                 &QlabUdpSender::SendAt,
                                 this,
                                 period,
                                 0);
}

uint64_t
QlabUdpSender::GetTxPackets() const
{
    return m_txPackets;
}

void
QlabUdpSender::DoDispose()
{
    m_socket = nullptr;
    Application::DoDispose();
}

void
QlabUdpSender::StartApplication()
{
    m_socket = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
    NS_ABORT_MSG_IF(m_socket->Bind(InetSocketAddress(Ipv4Address::GetAny(), m_localPort)) != 0,
                    "QlabUdpSender: cannot bind UDP port " << m_localPort);
    // UdpSocketImpl::Connect takes the IP ToS from the peer address.
    InetSocketAddress peer = InetSocketAddress::ConvertFrom(m_peer);
    peer.SetTos(m_tos);
    m_socket->Connect(peer);
    if (m_poisson && !m_onPeriods.empty())
    {
        SchedulePoisson(0, m_onPeriods[0].first);
    }
    else if (!m_poisson && !m_onPeriods.empty())
    {
        m_next = Simulator::Schedule(NanoSeconds(m_onPeriods[0].first) - Simulator::Now(),
                                     &QlabUdpSender::SendAt,
                                     this,
                                     0,
                                     0);
    }
}

void
QlabUdpSender::StopApplication()
{
    Simulator::Cancel(m_next);
    if (m_socket)
    {
        m_socket->Close();
    }
}

void
QlabUdpSender::SendAt(std::size_t period, uint64_t k)
{
    SeqTsHeader header; // stamps Simulator::Now()
    header.SetSeq(static_cast<uint32_t>(m_txPackets));
    const uint32_t ipBytes =
        m_sizes ? m_sizes->NextSizeBytes(m_sizeMeanBytes, kMinIpBytes, m_ipBytes) : m_ipBytes;
    Ptr<Packet> packet = Create<Packet>(ipBytes - kHeaderBytes - header.GetSerializedSize());
    packet->AddHeader(header);
    m_socket->Send(packet);
    m_txPackets++;
    if (m_poisson)
    {
        SchedulePoisson(period, Simulator::Now().GetNanoSeconds());
        return;
    }

    // The next send time, on an integer grid so no error accumulates.
    int64_t next = m_onPeriods[period].first + static_cast<int64_t>(k + 1) * m_intervalNs;
    if (next >= m_onPeriods[period].second)
    {
        if (++period == m_onPeriods.size())
        {
            return;
        }
        next = m_onPeriods[period].first;
        k = 0;
    }
    else
    {
        k++;
    }
    m_next = Simulator::Schedule(NanoSeconds(next) - Simulator::Now(),
                                 &QlabUdpSender::SendAt,
                                 this,
                                 period,
                                 k);
}

// ------------------------------------------------------------------ sink

TypeId
QlabUdpSink::GetTypeId()
{
    static TypeId tid = TypeId("ns3::QlabUdpSink")
                            .SetParent<Application>()
                            .SetGroupName("Applications")
                            .AddConstructor<QlabUdpSink>();
    return tid;
}

QlabUdpSink::QlabUdpSink()
    : m_rxPackets(0),
      m_rxBytes(0),
      m_delaySumNs(0),
      m_delayMaxNs(0),
      m_firstRxNs(0),
      m_lastRxNs(0)
{
}

QlabUdpSink::~QlabUdpSink() = default;

void
QlabUdpSink::Setup(const Address& local)
{
    m_local = local;
}

uint64_t
QlabUdpSink::GetRxPackets() const
{
    return m_rxPackets;
}

uint64_t
QlabUdpSink::GetRxBytes() const
{
    return m_rxBytes;
}

int64_t
QlabUdpSink::GetDelaySumNs() const
{
    return m_delaySumNs;
}

int64_t
QlabUdpSink::GetDelayMaxNs() const
{
    return m_delayMaxNs;
}

int64_t
QlabUdpSink::GetFirstRxNs() const
{
    return m_firstRxNs;
}

int64_t
QlabUdpSink::GetLastRxNs() const
{
    return m_lastRxNs;
}

void
QlabUdpSink::DoDispose()
{
    m_socket = nullptr;
    Application::DoDispose();
}

void
QlabUdpSink::StartApplication()
{
    m_socket = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
    NS_ABORT_MSG_IF(m_socket->Bind(m_local) != 0, "QlabUdpSink: cannot bind");
    m_socket->SetRecvCallback(MakeCallback(&QlabUdpSink::Received, this));
}

void
QlabUdpSink::StopApplication()
{
    if (m_socket)
    {
        m_socket->Close();
    }
}

void
QlabUdpSink::Received(Ptr<Socket> socket)
{
    Ptr<Packet> packet;
    while ((packet = socket->Recv()))
    {
        const int64_t now = Simulator::Now().GetNanoSeconds();
        m_firstRxNs = m_rxPackets == 0 ? now : m_firstRxNs;
        m_lastRxNs = now;
        m_rxPackets++;
        m_rxBytes += packet->GetSize();
        SeqTsHeader header;
        packet->RemoveHeader(header);
        const int64_t delay = (Simulator::Now() - header.GetTs()).GetNanoSeconds();
        m_delaySumNs += delay;
        m_delayMaxNs = std::max(m_delayMaxNs, delay);
    }
}

} // namespace ns3
