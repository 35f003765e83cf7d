/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-bulk-apps.cc - sender and sink of a qlab bulk flow (see qlab-bulk-apps.h).
 */
#include "qlab-bulk-apps.h"

#include "qlab-tcp-socket.h"

#include "ns3/abort.h"
#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("QlabBulkApps");

NS_OBJECT_ENSURE_REGISTERED(QlabBulkSender);
NS_OBJECT_ENSURE_REGISTERED(QlabBulkSink);

// ---------------------------------------------------------------- sender

TypeId
QlabBulkSender::GetTypeId()
{
    static TypeId tid = TypeId("ns3::QlabBulkSender")
                            .SetParent<Application>()
                            .SetGroupName("Applications")
                            .AddConstructor<QlabBulkSender>();
    return tid;
}

QlabBulkSender::QlabBulkSender()
    : m_localPort(0),
      m_segmentBytes(536),
      m_goalBytes(0),
      m_tos(0),
      m_synsSent(0),
      m_connected(false),
      m_closed(false),
      m_handedBytes(0),
      m_anySent(false),
      m_txSegments(0),
      m_retxSegments(0)
{
}

QlabBulkSender::~QlabBulkSender() = default;

void
QlabBulkSender::Setup(const Address& peer,
                      uint16_t localPort,
                      uint32_t segmentBytes,
                      uint64_t bytes,
                      uint8_t tos)
{
    m_peer = peer;
    m_localPort = localPort;
    m_segmentBytes = segmentBytes;
    m_goalBytes = bytes;
    m_tos = tos;
}

void
QlabBulkSender::AssignStreams(int64_t stream)
{
    m_stream = stream;
}

uint64_t
QlabBulkSender::GetTxSegments() const
{
    return m_txSegments;
}

uint64_t
QlabBulkSender::GetRetxSegments() const
{
    return m_retxSegments;
}

Ptr<QlabTcpSocket>
QlabBulkSender::GetSocket() const
{
    return m_socket;
}

void
QlabBulkSender::SetTcpChangeCallback(Callback<void> changed)
{
    m_tcpChanged = changed;
}

void
QlabBulkSender::DoDispose()
{
    m_socket = nullptr;
    m_tcpChanged = Callback<void>();
    Application::DoDispose();
}

void
QlabBulkSender::StartApplication()
{
    NS_LOG_FUNCTION(this);
    m_socket = QlabTcpSocket::Create(GetNode());
    if (m_stream >= 0)
    {
        m_socket->AssignStreams(m_stream);
    }
    // Per-flow MSS: set before Connect, while the socket is still closed.
    m_socket->SetAttribute("SegmentSize", UintegerValue(m_segmentBytes));
    m_socket->TraceConnectWithoutContext("Tx", MakeCallback(&QlabBulkSender::Transmitted, this));
    if (!m_tcpChanged.IsNull())
    {
        m_socket->TraceConnectWithoutContext("State",
                                             MakeCallback(&QlabBulkSender::StateChanged, this));
        m_socket->TraceConnectWithoutContext(
            "CongState",
            MakeCallback(&QlabBulkSender::CongStateChanged, this));
    }
    NS_ABORT_MSG_IF(m_socket->Bind(InetSocketAddress(Ipv4Address::GetAny(), m_localPort)) != 0,
                    "QlabBulkSender: cannot bind TCP port " << m_localPort);
    m_socket->SetConnectCallback(MakeCallback(&QlabBulkSender::ConnectionSucceeded, this),
                                 MakeCallback(&QlabBulkSender::ConnectionFailed, this));
    m_socket->SetSendCallback(MakeCallback(&QlabBulkSender::SendData, this));
    // TcpSocketBase::Connect takes the IP ToS from the peer address (and
    // overrides an earlier SetIpTos), so the flow's ToS travels there.
    InetSocketAddress peer = InetSocketAddress::ConvertFrom(m_peer);
    peer.SetTos(m_tos);
    m_socket->Connect(peer);
}

void
QlabBulkSender::StopApplication()
{
    NS_LOG_FUNCTION(this);
    if (m_socket && !m_closed)
    {
        m_socket->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
        m_closed = true;
        m_socket->Close();
    }
}

void
QlabBulkSender::Kill()
{
    NS_LOG_FUNCTION(this);
    m_closed = true;
    if (m_socket)
    {
        m_socket->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
        m_socket->Abort();
    }
}

void
QlabBulkSender::ConnectionSucceeded(Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << socket);
    m_connected = true;
    SendData(socket, socket->GetTxAvailable());
}

void
QlabBulkSender::ConnectionFailed(Ptr<Socket> /* socket */)
{
    // The flow stays incomplete; flows.csv reports it.
    NS_LOG_WARN("QlabBulkSender: connection to the sink failed at " << Simulator::Now());
}

void
QlabBulkSender::SendData(Ptr<Socket> socket, uint32_t /* available */)
{
    if (!m_connected || m_closed)
    {
        return;
    }
    // Fill the send buffer; TCP sends as its window allows and calls back
    // here when buffer space frees up.  Bounded: each round hands over at
    // least one byte or stops.
    while (m_handedBytes < m_goalBytes)
    {
        const uint64_t remaining = m_goalBytes - m_handedBytes;
        const uint32_t room = socket->GetTxAvailable();
        const uint32_t chunk = static_cast<uint32_t>(std::min<uint64_t>(remaining, room));
        if (chunk == 0)
        {
            return;
        }
        const int sent = socket->Send(Create<Packet>(chunk));
        if (sent <= 0)
        {
            return;
        }
        m_handedBytes += static_cast<uint64_t>(sent);
    }
    // Everything is in the send buffer: TCP sends the FIN after the data.
    m_closed = true;
    socket->Close();
}

void
QlabBulkSender::Transmitted(Ptr<const Packet> payload,
                            const TcpHeader& header,
                            Ptr<const TcpSocketBase> /* socket */)
{
    const uint32_t len = payload->GetSize();
    if ((header.GetFlags() & TcpHeader::SYN) && m_synsSent++ > 0 && !m_tcpChanged.IsNull())
    {
        m_tcpChanged(); // a SYN sent again
    }
    if (len == 0)
    {
        return; // SYN, FIN or pure ACK
    }
    m_txSegments++;
    const SequenceNumber32 start = header.GetSequenceNumber();
    const SequenceNumber32 end = start + len;
    if (m_anySent && start < m_highestSent)
    {
        m_retxSegments++;
        if (!m_tcpChanged.IsNull())
        {
            m_tcpChanged(); // a data segment sent again
        }
    }
    if (!m_anySent || end > m_highestSent)
    {
        m_highestSent = end;
        m_anySent = true;
    }
}

void
QlabBulkSender::StateChanged(TcpSocket::TcpStates_t /* from */, TcpSocket::TcpStates_t /* to */)
{
    m_tcpChanged();
}

void
QlabBulkSender::CongStateChanged(TcpSocketState::TcpCongState_t /* from */,
                                 TcpSocketState::TcpCongState_t /* to */)
{
    m_tcpChanged();
}

// ---------------------------------------------------------------- sink

TypeId
QlabBulkSink::GetTypeId()
{
    static TypeId tid = TypeId("ns3::QlabBulkSink")
                            .SetParent<Application>()
                            .SetGroupName("Applications")
                            .AddConstructor<QlabBulkSink>();
    return tid;
}

QlabBulkSink::QlabBulkSink()
    : m_segmentBytes(536),
      m_goalBytes(0),
      m_deliveredBytes(0),
      m_complete(false),
      m_firstRxNs(0),
      m_lastRxNs(0)
{
}

QlabBulkSink::~QlabBulkSink() = default;

void
QlabBulkSink::Setup(const Address& local,
                    uint32_t segmentBytes,
                    uint64_t goalBytes,
                    Callback<void> done)
{
    m_local = local;
    m_segmentBytes = segmentBytes;
    m_goalBytes = goalBytes;
    m_done = done;
}

void
QlabBulkSink::AssignStreams(int64_t stream)
{
    m_stream = stream;
}

uint64_t
QlabBulkSink::GetDeliveredBytes() const
{
    return m_deliveredBytes;
}

bool
QlabBulkSink::IsComplete() const
{
    return m_complete;
}

int64_t
QlabBulkSink::GetFirstRxNs() const
{
    return m_firstRxNs;
}

int64_t
QlabBulkSink::GetLastRxNs() const
{
    return m_lastRxNs;
}

void
QlabBulkSink::DoDispose()
{
    m_listener = nullptr;
    m_connection = nullptr;
    m_done = Callback<void>();
    Application::DoDispose();
}

void
QlabBulkSink::StartApplication()
{
    NS_LOG_FUNCTION(this);
    Ptr<QlabTcpSocket> listener = QlabTcpSocket::Create(GetNode());
    if (m_stream >= 0)
    {
        listener->AssignStreams(m_stream);
    }
    m_listener = listener;
    // The accepted socket is a copy of the listener, so it inherits the MSS.
    m_listener->SetAttribute("SegmentSize", UintegerValue(m_segmentBytes));
    NS_ABORT_MSG_IF(m_listener->Bind(m_local) != 0, "QlabBulkSink: cannot bind " << m_local);
    m_listener->Listen();
    m_listener->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                  MakeCallback(&QlabBulkSink::Accepted, this));
}

void
QlabBulkSink::StopApplication()
{
    NS_LOG_FUNCTION(this);
    if (m_connection)
    {
        m_connection->Close();
    }
    if (m_listener)
    {
        m_listener->Close();
    }
}

void
QlabBulkSink::Accepted(Ptr<Socket> socket, const Address& /* from */)
{
    NS_LOG_FUNCTION(this << socket);
    m_connection = socket;
    socket->SetRecvCallback(MakeCallback(&QlabBulkSink::Received, this));
    // One connection per sink: stop listening (no packet is sent; the
    // connection has its own endpoint since the SYN), so a host that sinks
    // many flows keeps few endpoints to search per packet.
    m_listener->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                  MakeNullCallback<void, Ptr<Socket>, const Address&>());
    m_listener->Close();
    m_listener = nullptr;
}

void
QlabBulkSink::Received(Ptr<Socket> socket)
{
    // Drain what TCP has delivered in order; bounded by the receive buffer.
    Ptr<Packet> packet;
    const uint64_t before = m_deliveredBytes;
    while ((packet = socket->Recv()))
    {
        if (packet->GetSize() == 0)
        {
            break;
        }
        m_deliveredBytes += packet->GetSize();
    }
    if (m_deliveredBytes > before)
    {
        const int64_t now = Simulator::Now().GetNanoSeconds();
        m_firstRxNs = before == 0 ? now : m_firstRxNs;
        m_lastRxNs = now;
    }
    if (!m_complete && m_deliveredBytes >= m_goalBytes)
    {
        m_complete = true;
        if (!m_done.IsNull())
        {
            m_done();
        }
    }
}

} // namespace ns3
