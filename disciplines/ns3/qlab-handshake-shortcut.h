/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-handshake-shortcut.h - plan tcp.handshake = false: every TCP
 * connection starts established at its flow's start_ns, as the papers' ns-2
 * one-way TCP agents do (they have no handshake at all).
 *
 * How, with ns-3 3.37's unmodified TcpSocketBase: the handshake still runs,
 * with all its option negotiation, but its three segments never enter the
 * network.  Each host's TcpL4Protocol hands what it sends to this shortcut
 * first (its IPv4 down target, wrapped); a segment with SYN set (the SYN and
 * the SYN-ACK), and the first segment the connecting side sends after the
 * SYN-ACK reached it when that segment is a pure ACK (the handshake's third
 * segment), is given straight to the peer host's TcpL4Protocol::Receive as
 * a new event at the same simulated time (never inside the sender's call,
 * so no socket sees its own call re-entered).  Everything else goes to IPv4
 * as before.  So the connection is ESTABLISHED at start_ns on both ends, the
 * first data segment leaves at start_ns plus one time step (TcpSocketBase's
 * send scheduling), and no link, queue, trace or discipline ever sees a
 * SYN, a SYN-ACK or the handshake's ACK.
 *
 * What differs from ns-2's one-way TCP: the handshake takes no time, so it
 * gives no RTT sample (a zero measurement is ignored by ns-3) and the first
 * data segments run on ns-3's initial RTO, 1 s (RFC 6298 section 2.1;
 * RttEstimator InitialEstimation 1 s plus the 1 ms clock granularity);
 * ns-2 starts with rtxcur_init_ = 3 s.  The FIN exchange is unchanged
 * (the sender's FIN rides on its last data segment; the sink never closes).
 */
#ifndef QLAB_HANDSHAKE_SHORTCUT_H
#define QLAB_HANDSHAKE_SHORTCUT_H

#include "ns3/ip-l4-protocol.h"
#include "ns3/ipv4-address.h"
#include "ns3/ipv4-header.h"
#include "ns3/ipv4-interface.h"
#include "ns3/ipv4-route.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/ptr.h"
#include "ns3/tcp-l4-protocol.h"

#include <cstdint>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace qlab
{

class HandshakeShortcut
{
  public:
    /**
     * Wrap the TCP of `node` (a host with one address; its IPv4 stack
     * installed): its handshake segments to any other installed host are
     * delivered directly.  The shortcut must outlive the simulation.
     */
    void Install(ns3::Ptr<ns3::Node> node, ns3::Ipv4Address address);

    /// Handshake segments delivered directly so far (tests).
    uint64_t GetShortcutSegments() const;

  private:
    struct Host
    {
        ns3::Ptr<ns3::Node> node;
        ns3::Ptr<ns3::TcpL4Protocol> tcp;
        ns3::Ptr<ns3::Ipv4Interface> interface; //!< the interface with the host's address
        ns3::IpL4Protocol::DownTargetCallback ipv4; //!< what TcpL4Protocol sent to before
    };

    /// The wrapped down target of host `from`.
    void Send(std::size_t from,
              ns3::Ptr<ns3::Packet> packet,
              ns3::Ipv4Address source,
              ns3::Ipv4Address destination,
              uint8_t protocol,
              ns3::Ptr<ns3::Ipv4Route> route);
    void Deliver(std::size_t to, ns3::Ptr<ns3::Packet> packet, ns3::Ipv4Header header);

    /// A connection seen from the side that connected: its address and port, the peer's.
    using Connection = std::tuple<uint32_t, uint16_t, uint32_t, uint16_t>;

    std::vector<Host> m_hosts;
    std::unordered_map<uint32_t, std::size_t> m_hostByAddress;
    /// Connections whose SYN-ACK was delivered: the connecting side's next
    /// segment, if a pure ACK, completes the handshake.
    std::set<Connection> m_awaitingAck;
    uint64_t m_shortcutSegments = 0;
};

} // namespace qlab

#endif /* QLAB_HANDSHAKE_SHORTCUT_H */
