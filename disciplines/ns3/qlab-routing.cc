/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-routing.cc - static routing of a qlab plan (see qlab-routing.h).
 */
#include "qlab-routing.h"

#include "ns3/abort.h"
#include "ns3/ipv4-route.h"
#include "ns3/log.h"
#include "ns3/names.h"
#include "ns3/node.h"
#include "ns3/output-stream-wrapper.h"

#include <algorithm>
#include <ostream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("QlabRouting");

NS_OBJECT_ENSURE_REGISTERED(QlabRouting);

TypeId
QlabRouting::GetTypeId()
{
    static TypeId tid = TypeId("ns3::QlabRouting")
                            .SetParent<Ipv4RoutingProtocol>()
                            .SetGroupName("Internet")
                            .AddConstructor<QlabRouting>();
    return tid;
}

QlabRouting::QlabRouting() = default;

QlabRouting::~QlabRouting() = default;

void
QlabRouting::DoDispose()
{
    m_ipv4 = nullptr;
    m_default = nullptr;
    m_hosts.clear();
    m_networks.clear();
    m_routes.clear();
    Ipv4RoutingProtocol::DoDispose();
}

Ptr<Ipv4Route>
QlabRouting::RouteVia(uint32_t interface)
{
    auto it = m_routes.find(interface);
    if (it != m_routes.end())
    {
        return it->second;
    }
    NS_ABORT_MSG_IF(!m_ipv4 || interface >= m_ipv4->GetNInterfaces() ||
                        m_ipv4->GetNAddresses(interface) == 0,
                    "QlabRouting: interface " << interface << " has no address yet");
    Ptr<Ipv4Route> route = Create<Ipv4Route>();
    route->SetGateway(Ipv4Address::GetAny()); // point-to-point: the peer is the next hop
    route->SetSource(m_ipv4->GetAddress(interface, 0).GetLocal());
    route->SetOutputDevice(m_ipv4->GetNetDevice(interface));
    m_routes.emplace(interface, route);
    return route;
}

void
QlabRouting::SetDefaultRoute(uint32_t interface)
{
    m_default = RouteVia(interface);
}

void
QlabRouting::AddHostRoute(Ipv4Address host, uint32_t interface)
{
    m_hosts[host.Get()] = RouteVia(interface);
}

void
QlabRouting::AddNetworkRoute(Ipv4Address net, Ipv4Mask mask, uint32_t interface)
{
    NetworkRoute r{net.Get() & mask.Get(), mask.Get(), RouteVia(interface)};
    // Longest prefix first; equal lengths keep the order they were added in.
    auto at = std::find_if(m_networks.begin(), m_networks.end(), [&](const NetworkRoute& x) {
        return mask.GetPrefixLength() > Ipv4Mask(x.mask).GetPrefixLength();
    });
    m_networks.insert(at, r);
}

Ptr<Ipv4Route>
QlabRouting::Lookup(Ipv4Address destination) const
{
    if (m_default)
    {
        return m_default;
    }
    const uint32_t d = destination.Get();
    auto host = m_hosts.find(d);
    if (host != m_hosts.end())
    {
        return host->second;
    }
    for (const NetworkRoute& r : m_networks)
    {
        if ((d & r.mask) == r.net)
        {
            return r.route;
        }
    }
    return nullptr;
}

Ptr<Ipv4Route>
QlabRouting::RouteOutput(Ptr<Packet> /* p */,
                         const Ipv4Header& header,
                         Ptr<NetDevice> /* oif */,
                         Socket::SocketErrno& sockerr)
{
    Ptr<Ipv4Route> route = Lookup(header.GetDestination());
    sockerr = route ? Socket::ERROR_NOTERROR : Socket::ERROR_NOROUTETOHOST;
    return route;
}

bool
QlabRouting::RouteInput(Ptr<const Packet> p,
                        const Ipv4Header& header,
                        Ptr<const NetDevice> idev,
                        UnicastForwardCallback ucb,
                        MulticastForwardCallback /* mcb */,
                        LocalDeliverCallback lcb,
                        ErrorCallback /* ecb */)
{
    const Ipv4Address destination = header.GetDestination();
    if (m_local.count(destination.Get()))
    {
        lcb(p, header, m_ipv4->GetInterfaceForDevice(idev));
        return true;
    }
    if (m_default)
    {
        return false; // a host forwards nothing
    }
    Ptr<Ipv4Route> route = Lookup(destination);
    if (!route)
    {
        return false; // Ipv4L3Protocol drops it (DROP_NO_ROUTE)
    }
    ucb(route, p, header);
    return true;
}

void
QlabRouting::NotifyInterfaceUp(uint32_t /* interface */)
{
}

void
QlabRouting::NotifyInterfaceDown(uint32_t /* interface */)
{
}

void
QlabRouting::NotifyAddAddress(uint32_t /* interface */, Ipv4InterfaceAddress address)
{
    m_local.insert(address.GetLocal().Get());
}

void
QlabRouting::NotifyRemoveAddress(uint32_t /* interface */, Ipv4InterfaceAddress address)
{
    // The address may remain on another interface.
    for (uint32_t i = 0; i < m_ipv4->GetNInterfaces(); i++)
    {
        for (uint32_t j = 0; j < m_ipv4->GetNAddresses(i); j++)
        {
            if (m_ipv4->GetAddress(i, j).GetLocal() == address.GetLocal())
            {
                return;
            }
        }
    }
    m_local.erase(address.GetLocal().Get());
}

void
QlabRouting::SetIpv4(Ptr<Ipv4> ipv4)
{
    NS_ABORT_MSG_IF(m_ipv4, "QlabRouting: SetIpv4 called twice");
    m_ipv4 = ipv4;
    // Interfaces that exist already (the loopback) bring their addresses.
    for (uint32_t i = 0; i < m_ipv4->GetNInterfaces(); i++)
    {
        for (uint32_t j = 0; j < m_ipv4->GetNAddresses(i); j++)
        {
            m_local.insert(m_ipv4->GetAddress(i, j).GetLocal().Get());
        }
    }
}

void
QlabRouting::PrintRoutingTable(Ptr<OutputStreamWrapper> stream, Time::Unit /* unit */) const
{
    std::ostream& os = *stream->GetStream();
    Ptr<Node> node = m_ipv4->GetObject<Node>();
    os << "Node: " << node->GetId() << ", QlabRouting" << std::endl;
    if (m_default)
    {
        os << "default via interface " << m_ipv4->GetInterfaceForDevice(m_default->GetOutputDevice())
           << std::endl;
    }
    for (const auto& [host, route] : m_hosts)
    {
        os << Ipv4Address(host) << "/32 via interface "
           << m_ipv4->GetInterfaceForDevice(route->GetOutputDevice()) << std::endl;
    }
    for (const NetworkRoute& r : m_networks)
    {
        os << Ipv4Address(r.net) << "/" << Ipv4Mask(r.mask).GetPrefixLength() << " via interface "
           << m_ipv4->GetInterfaceForDevice(r.route->GetOutputDevice()) << std::endl;
    }
}

QlabRoutingHelper*
QlabRoutingHelper::Copy() const
{
    return new QlabRoutingHelper(*this);
}

Ptr<Ipv4RoutingProtocol>
QlabRoutingHelper::Create(Ptr<Node> /* node */) const
{
    return CreateObject<QlabRouting>();
}

} // namespace ns3
