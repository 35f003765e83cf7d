/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-tcp-socket.h - ns3::QlabTcpSocket: ns-3 3.37's TcpSocketBase with
 * Karn's rule applied to the handshake (a recorded deviation from ns-3 3.37;
 * see TCP-NOTES.md and README.md, "The TCP model").
 *
 * What ns-3 3.37 does: TcpSocketBase logs each SYN (and SYN-ACK) in its RTT
 * history as a zero-length entry [seq, seq + 0).  When the SYN is sent
 * again, UpdateRttHistory(seq, 0, true) looks for the entry containing seq,
 * finds none (nothing lies in an empty range) and leaves the first SYN's
 * entry unmarked, so the SYN-ACK yields an RTT "sample" measured from the
 * FIRST SYN: after one lost SYN (1 s SYN timeout) SRTT = 1.02 s and
 * RTTVAR = 0.51 s, the first data RTO is about 3 s and stays inflated for
 * tens of round trips; after two lost SYNs it is about 9 s.
 *
 * What QlabTcpSocket does (RFC 6298):
 *   - Karn's rule (RFC 6298 section 3) on the handshake: a SYN or SYN-ACK
 *     that was sent again is marked retransmitted in the RTT history, so the
 *     segment that acknowledges it gives no RTT sample.  An unretransmitted
 *     handshake still gives its sample, as before.
 *   - RFC 6298 section 5.7: when the handshake completes after a SYN (or
 *     SYN-ACK) was sent again and no RTT sample exists, the RTO is
 *     re-initialised to 3 s for the data (kSynLossRto), and stays 3 s (with
 *     the usual doubling on each timeout) until the first valid RTT sample,
 *     which then sets SRTT = R, RTTVAR = R/2 (RFC 6298 section 2.2).  qlab's
 *     SYN timeout (plan tcp.syn_timeout_ns, 1 s in the scenarios) is below
 *     3 s, so section 5.7 always applies.  Linux does the same
 *     (TCP_TIMEOUT_FALLBACK, set by tcp_init_metrics() when the handshake
 *     left no RTT sample), so ns-3 and the mininet backend agree.  Implemented by setting the socket's own RTT estimator
 *     to "no sample, estimate 3 s - G" (G: the clock granularity), so every
 *     place TcpSocketBase computes SRTT + max(G, 4 RTTVAR) gives 3 s.
 *
 * The attribute HandshakeKarn (default true) turns both off, giving ns-3
 * 3.37's behaviour: tests/test_tcp_handshake.cc shows its checks fail then;
 * NS_ATTRIBUTE_DEFAULT='ns3::QlabTcpSocket::HandshakeKarn=false' does the
 * same for a whole run.  SynLossRto (default 3 s) is section 5.7's value; 0
 * keeps Karn's rule without section 5.7 (the data then starts on ns-3's
 * no-sample RTO, 1 s): benchmarks/tcp-handshake.py measures what 5.7 costs.
 * runner.json's versions record which TCP ran.
 *
 * Sockets are made by QlabTcpSocket::Create(node), which sets them up as
 * TcpL4Protocol::CreateSocket sets up its own (RTT estimator, congestion
 * control and recovery from the node's TcpL4Protocol attributes); a
 * listening QlabTcpSocket forks QlabTcpSockets.
 */
#ifndef QLAB_TCP_SOCKET_H
#define QLAB_TCP_SOCKET_H

#include "ns3/node.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/tcp-socket-state.h"

#include <cstdint>

namespace ns3
{

class QlabTcpSocket : public TcpSocketBase
{
  public:
    /// RFC 6298 section 5.7: the RTO for the data after a SYN timeout.
    static constexpr int64_t kSynLossRtoNs = 3000000000;

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;

    QlabTcpSocket();
    /// The fork of a listening socket (TcpSocketBase's clone).
    QlabTcpSocket(const QlabTcpSocket& sock);
    ~QlabTcpSocket() override;

    /// A QlabTcpSocket on `node`, set up as TcpL4Protocol::CreateSocket does.
    static Ptr<QlabTcpSocket> Create(Ptr<Node> node);

    /// What the tcp trace reports of the socket (docs/traces.md, tcp_facts).
    struct Snapshot
    {
        uint32_t cwndBytes = 0;
        uint32_t ssthreshBytes = 0;
        bool haveSrtt = false; //!< an RTT sample exists
        int64_t srttNs = 0;    //!< valid when haveSrtt
        int64_t rtoNs = 0;
        TcpStates_t state = CLOSED;
        TcpSocketState::TcpCongState_t congState = TcpSocketState::CA_OPEN;
        uint32_t synRetx = 0; //!< SYNs (or SYN-ACKs) sent again
    };

    Snapshot GetSnapshot() const;

    /**
     * The ns-3 random stream the socket's congestion control draws from, for
     * one that draws (TcpBbr: its probe-bandwidth phase's random start; every
     * TcpBbr has stream 4 otherwise, so every flow would draw the same
     * numbers).  Set before the connection starts.
     * \return the number of streams used (1 for TcpBbr, else 0)
     */
    int64_t AssignStreams(int64_t stream);

    /**
     * Abort the connection, as an application killed mid-transfer: one RST
     * to the peer, every timer cancelled, the endpoint released, state
     * CLOSED; nothing more is sent (no buffered data, no retransmission).
     * A socket still opening (SYN_SENT) sends no RST (RFC 793's ABORT).
     * A socket without an endpoint (never connected, or already released)
     * is left alone.  The plan's bulk stop_ns (docs/jobs.md).
     */
    void Abort();

  protected:
    Ptr<TcpSocketBase> Fork() override;
    void UpdateRttHistory(const SequenceNumber32& seq, uint32_t sz, bool isRetransmission) override;
    void EstimateRtt(const TcpHeader& tcpHeader) override;

  private:
    bool m_handshakeKarn = true;
    Time m_synLossRto;
    uint32_t m_synRetx = 0;
};

} // namespace ns3

#endif /* QLAB_TCP_SOCKET_H */
