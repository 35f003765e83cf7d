/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-tcp-socket.cc - TcpSocketBase with Karn's rule on the handshake and
 * RFC 6298 section 5.7 (see qlab-tcp-socket.h).
 */
#include "qlab-tcp-socket.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/object-factory.h"
#include "ns3/rtt-estimator.h"
#include "ns3/tcp-bbr.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-recovery-ops.h"
#include "ns3/type-id.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("QlabTcpSocket");

NS_OBJECT_ENSURE_REGISTERED(QlabTcpSocket);

TypeId
QlabTcpSocket::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::QlabTcpSocket")
            .SetParent<TcpSocketBase>()
            .SetGroupName("Internet")
            .AddConstructor<QlabTcpSocket>()
            .AddAttribute("HandshakeKarn",
                          "Apply Karn's rule to the handshake (no RTT sample from a SYN or "
                          "SYN-ACK that was sent again) and RFC 6298 section 5.7 (a 3 s RTO for "
                          "the data until the first RTT sample, after a SYN timeout). false: "
                          "ns-3 3.37's behaviour, which samples the RTT back to the first SYN.",
                          BooleanValue(true),
                          MakeBooleanAccessor(&QlabTcpSocket::m_handshakeKarn),
                          MakeBooleanChecker())
            .AddAttribute("SynLossRto",
                          "With HandshakeKarn: the RTO for the data, until the first RTT sample, "
                          "after a SYN or SYN-ACK was sent again (RFC 6298 section 5.7: 3 s). "
                          "0: not re-initialised (ns-3's RTO with no sample: InitialEstimation, "
                          "1 s, plus the clock granularity).",
                          TimeValue(NanoSeconds(kSynLossRtoNs)),
                          MakeTimeAccessor(&QlabTcpSocket::m_synLossRto),
                          MakeTimeChecker(Time(0)));
    return tid;
}

TypeId
QlabTcpSocket::GetInstanceTypeId() const
{
    return GetTypeId();
}

QlabTcpSocket::QlabTcpSocket() = default;

QlabTcpSocket::QlabTcpSocket(const QlabTcpSocket& sock)
    : TcpSocketBase(sock),
      m_handshakeKarn(sock.m_handshakeKarn),
      m_synLossRto(sock.m_synLossRto),
      m_synRetx(0)
{
}

QlabTcpSocket::~QlabTcpSocket() = default;

Ptr<QlabTcpSocket>
QlabTcpSocket::Create(Ptr<Node> node)
{
    Ptr<TcpL4Protocol> tcp = node->GetObject<TcpL4Protocol>();
    NS_ABORT_MSG_IF(!tcp, "QlabTcpSocket::Create: node " << node->GetId() << " has no TCP");
    // What TcpL4Protocol::CreateSocket does, with this class for the socket.
    TypeIdValue rttType;
    TypeIdValue congestionType;
    TypeIdValue recoveryType;
    tcp->GetAttribute("RttEstimatorType", rttType);
    tcp->GetAttribute("SocketType", congestionType);
    tcp->GetAttribute("RecoveryType", recoveryType);
    Ptr<QlabTcpSocket> socket = CreateObject<QlabTcpSocket>();
    socket->SetNode(node);
    socket->SetTcp(tcp);
    socket->SetRtt(ObjectFactory(rttType.Get().GetName()).Create<RttEstimator>());
    socket->SetCongestionControlAlgorithm(
        ObjectFactory(congestionType.Get().GetName()).Create<TcpCongestionOps>());
    socket->SetRecoveryAlgorithm(
        ObjectFactory(recoveryType.Get().GetName()).Create<TcpRecoveryOps>());
    tcp->AddSocket(socket);
    return socket;
}

int64_t
QlabTcpSocket::AssignStreams(int64_t stream)
{
    if (DynamicCast<TcpBbr>(m_congestionControl))
    {
        m_congestionControl->SetAttribute("Stream", UintegerValue(stream));
        return 1;
    }
    return 0;
}

QlabTcpSocket::Snapshot
QlabTcpSocket::GetSnapshot() const
{
    Snapshot s;
    s.cwndBytes = m_tcb->m_cWnd.Get();
    s.ssthreshBytes = m_tcb->m_ssThresh.Get();
    s.haveSrtt = m_rtt->GetNSamples() > 0;
    s.srttNs = s.haveSrtt ? m_rtt->GetEstimate().GetNanoSeconds() : 0;
    s.rtoNs = m_rto.Get().GetNanoSeconds();
    s.state = m_state.Get();
    s.congState = m_tcb->m_congState.Get();
    s.synRetx = m_synRetx;
    return s;
}

void
QlabTcpSocket::Abort()
{
    if (m_endPoint == nullptr && m_endPoint6 == nullptr)
    {
        return;
    }
    if (m_state == SYN_SENT)
    {
        // Still opening: no RST (RFC 793's ABORT in SYN-SENT, and Linux's
        // close with SO_LINGER 0 there, which the mininet backend's senders
        // do): the peer has no connection to reset. A RST would reach the
        // sink's listening socket, which ns-3 3.37 puts into the zero-window
        // persist state (a listening socket's window is 0) and never takes
        // out: its probe 6 s later, with nothing to send, crashes the run.
        NotifyErrorClose();
        DeallocateEndPoint(); // every timer cancelled, the SYN's included
        m_state = CLOSED;
        return;
    }
    // TcpSocketBase::SendRST: the RST, NotifyErrorClose, DeallocateEndPoint
    // (which cancels every timer, the pending-data event included).
    SendRST();
    m_state = CLOSED;
}

Ptr<TcpSocketBase>
QlabTcpSocket::Fork()
{
    return CopyObject<QlabTcpSocket>(this);
}

void
QlabTcpSocket::UpdateRttHistory(const SequenceNumber32& seq, uint32_t sz, bool isRetransmission)
{
    TcpSocketBase::UpdateRttHistory(seq, sz, isRetransmission);
    // Only SendEmptyPacket's SYN branch logs zero-length segments: this is
    // a SYN (SYN_SENT) or SYN-ACK (SYN_RCVD) sent again.
    if (sz != 0 || !isRetransmission || (m_state != SYN_SENT && m_state != SYN_RCVD))
    {
        return;
    }
    m_synRetx++;
    if (!m_handshakeKarn)
    {
        return;
    }
    // The base class searched [seq, seq + count) with count 0 and found
    // nothing: mark the first SYN's entry itself (Karn's rule).
    for (RttHistory& h : m_history)
    {
        if (h.seq == seq && h.count == 0)
        {
            h.retx = true;
        }
    }
}

void
QlabTcpSocket::EstimateRtt(const TcpHeader& tcpHeader)
{
    TcpSocketBase::EstimateRtt(tcpHeader);
    if (!m_handshakeKarn || m_synLossRto.IsZero() || m_synRetx == 0 || m_rtt->GetNSamples() > 0)
    {
        return;
    }
    // The segment completing the handshake: SYN-ACK in SYN_SENT, ACK in
    // SYN_RCVD (TcpSocketBase estimates the RTT before its state machine
    // moves on, and computes the data's RTO from the estimator after).
    const uint8_t flags = tcpHeader.GetFlags();
    const bool synAck = (flags & TcpHeader::SYN) && (flags & TcpHeader::ACK);
    const bool completes = (m_state == SYN_SENT && synAck) ||
                           (m_state == SYN_RCVD && (flags & TcpHeader::ACK) && !synAck);
    if (!completes)
    {
        return;
    }
    // RFC 6298 section 5.7: no sample, RTO 3 s until the first one.
    NS_LOG_LOGIC(this << " SYN sent " << m_synRetx + 1 << " times: data RTO " << m_synLossRto
                      << " (RFC 6298 5.7)");
    m_rtt->SetAttribute("InitialEstimation",
                        TimeValue(Max(m_synLossRto - m_clockGranularity, Time(0))));
    m_rtt->Reset();
}

} // namespace ns3
