/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-handshake-shortcut.cc - handshake segments delivered straight to the
 * peer's TCP (see qlab-handshake-shortcut.h).
 */
#include "qlab-handshake-shortcut.h"

#include "ns3/abort.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/simulator.h"
#include "ns3/socket.h"
#include "ns3/tcp-header.h"

using namespace ns3;

namespace qlab
{

namespace
{

/// ns-3's default IPv4 TTL (Ipv4L3Protocol DefaultTtl); nothing reads it here.
constexpr uint8_t kTtl = 64;

} // namespace

void
HandshakeShortcut::Install(Ptr<Node> node, Ipv4Address address)
{
    Ptr<Ipv4L3Protocol> ipv4 = node->GetObject<Ipv4L3Protocol>();
    Ptr<TcpL4Protocol> tcp = node->GetObject<TcpL4Protocol>();
    NS_ABORT_MSG_IF(!ipv4 || !tcp, "HandshakeShortcut: node " << node->GetId() << " has no TCP/IPv4");
    const int32_t index = ipv4->GetInterfaceForAddress(address);
    NS_ABORT_MSG_IF(index < 0, "HandshakeShortcut: node " << node->GetId() << " has no address "
                                                           << address);
    const std::size_t host = m_hosts.size();
    m_hosts.push_back({node, tcp, ipv4->GetInterface(static_cast<uint32_t>(index)),
                       tcp->GetDownTarget()});
    m_hostByAddress[address.Get()] = host;
    tcp->SetDownTarget(MakeCallback(&HandshakeShortcut::Send, this, host));
}

uint64_t
HandshakeShortcut::GetShortcutSegments() const
{
    return m_shortcutSegments;
}

void
HandshakeShortcut::Send(std::size_t from,
                        Ptr<Packet> packet,
                        Ipv4Address source,
                        Ipv4Address destination,
                        uint8_t protocol,
                        Ptr<Ipv4Route> route)
{
    auto peer = m_hostByAddress.find(destination.Get());
    if (protocol != TcpL4Protocol::PROT_NUMBER || peer == m_hostByAddress.end())
    {
        m_hosts[from].ipv4(packet, source, destination, protocol, route);
        return;
    }
    TcpHeader tcp;
    packet->PeekHeader(tcp);
    const uint8_t flags = tcp.GetFlags();
    bool handshake = false;
    if (flags & TcpHeader::SYN)
    {
        handshake = true;
        if (flags & TcpHeader::ACK)
        {
            // A SYN-ACK: the connecting side (the destination) answers with the third segment.
            m_awaitingAck.emplace(destination.Get(), tcp.GetDestinationPort(), source.Get(),
                                  tcp.GetSourcePort());
        }
    }
    else
    {
        auto it = m_awaitingAck.find(
            {source.Get(), tcp.GetSourcePort(), destination.Get(), tcp.GetDestinationPort()});
        if (it != m_awaitingAck.end())
        {
            m_awaitingAck.erase(it);
            handshake = flags == TcpHeader::ACK && packet->GetSize() == tcp.GetSerializedSize();
        }
    }
    if (!handshake)
    {
        m_hosts[from].ipv4(packet, source, destination, protocol, route);
        return;
    }
    m_shortcutSegments++;
    Ipv4Header ip;
    ip.SetSource(source);
    ip.SetDestination(destination);
    ip.SetProtocol(protocol);
    ip.SetPayloadSize(packet->GetSize());
    ip.SetTtl(kTtl);
    // A new event at the same time, in the peer's context: the sending
    // socket finishes its call before the peer reacts.
    Simulator::ScheduleWithContext(m_hosts[peer->second].node->GetId(), Seconds(0),
                                   &HandshakeShortcut::Deliver, this, peer->second,
                                   packet->Copy(), ip);
}

void
HandshakeShortcut::Deliver(std::size_t to, Ptr<Packet> packet, Ipv4Header header)
{
    // The socket tags IPv4 would have consumed on the way out.
    SocketIpTosTag tos;
    packet->RemovePacketTag(tos);
    SocketIpTtlTag ttl;
    packet->RemovePacketTag(ttl);
    SocketPriorityTag priority;
    packet->RemovePacketTag(priority);
    m_hosts[to].tcp->Receive(packet, header, m_hosts[to].interface);
}

} // namespace qlab
