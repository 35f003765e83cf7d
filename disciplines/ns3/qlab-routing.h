/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-routing.h - the static routing of a qlab plan, with per-packet work
 * independent of the number of interfaces and routes.
 *
 * ns-3's usual setup (Ipv4ListRouting over Ipv4StaticRouting and
 * Ipv4GlobalRouting) scans every interface for local delivery
 * (Ipv4L3Protocol::IsDestinationAddress in the weak ES model) and every host
 * route for forwarding, for every packet: on a dumbbell whose routers have
 * one interface per flow, a packet costs O(flows) at each router.
 * QlabRouting is an Ipv4RoutingProtocol installed on every node that does
 * what a plan says (docs/jobs.md) with hash lookups:
 *   - local delivery when the destination is one of the node's addresses
 *     (a hash set, kept by NotifyAddAddress/NotifyRemoveAddress);
 *   - a host (SetDefaultRoute) sends everything over its one link and
 *     forwards nothing;
 *   - a router reaches the hosts attached to it over their links (a hash
 *     map, AddHostRoute), anything else by the plan's prefix routes, longest
 *     prefix first (AddNetworkRoute; a plan has a few per router).
 * Routes are built once per output interface and shared (next hop 0.0.0.0:
 * every link is point-to-point), so forwarding allocates no route.
 */
#ifndef QLAB_ROUTING_H
#define QLAB_ROUTING_H

#include "ns3/ipv4-routing-helper.h"
#include "ns3/ipv4-routing-protocol.h"
#include "ns3/ipv4.h"

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace ns3
{

class QlabRouting : public Ipv4RoutingProtocol
{
  public:
    static TypeId GetTypeId();
    QlabRouting();
    ~QlabRouting() override;

    /// A host: everything leaves over `interface`; nothing is forwarded.
    void SetDefaultRoute(uint32_t interface);
    /// A router: `host` is attached to it by the link on `interface`.
    void AddHostRoute(Ipv4Address host, uint32_t interface);
    /// A router: packets to net/mask leave over `interface` (longest prefix wins).
    void AddNetworkRoute(Ipv4Address net, Ipv4Mask mask, uint32_t interface);

    Ptr<Ipv4Route> RouteOutput(Ptr<Packet> p,
                               const Ipv4Header& header,
                               Ptr<NetDevice> oif,
                               Socket::SocketErrno& sockerr) override;
    bool RouteInput(Ptr<const Packet> p,
                    const Ipv4Header& header,
                    Ptr<const NetDevice> idev,
                    UnicastForwardCallback ucb,
                    MulticastForwardCallback mcb,
                    LocalDeliverCallback lcb,
                    ErrorCallback ecb) override;
    void NotifyInterfaceUp(uint32_t interface) override;
    void NotifyInterfaceDown(uint32_t interface) override;
    void NotifyAddAddress(uint32_t interface, Ipv4InterfaceAddress address) override;
    void NotifyRemoveAddress(uint32_t interface, Ipv4InterfaceAddress address) override;
    void SetIpv4(Ptr<Ipv4> ipv4) override;
    void PrintRoutingTable(Ptr<OutputStreamWrapper> stream,
                           Time::Unit unit = Time::S) const override;

  protected:
    void DoDispose() override;

  private:
    /// The shared route out of `interface` (source: the interface's address).
    Ptr<Ipv4Route> RouteVia(uint32_t interface);
    /// The route to `destination`, or nullptr.
    Ptr<Ipv4Route> Lookup(Ipv4Address destination) const;

    struct NetworkRoute
    {
        uint32_t net;
        uint32_t mask;
        Ptr<Ipv4Route> route;
    };

    Ptr<Ipv4> m_ipv4;
    std::unordered_set<uint32_t> m_local;                  //!< this node's addresses
    Ptr<Ipv4Route> m_default;                              //!< a host's one route
    std::unordered_map<uint32_t, Ptr<Ipv4Route>> m_hosts;  //!< attached hosts
    std::vector<NetworkRoute> m_networks;                  //!< longest prefix first
    std::unordered_map<uint32_t, Ptr<Ipv4Route>> m_routes; //!< by output interface
};

/// Installs QlabRouting (InternetStackHelper::SetRoutingHelper).
class QlabRoutingHelper : public Ipv4RoutingHelper
{
  public:
    QlabRoutingHelper* Copy() const override;
    Ptr<Ipv4RoutingProtocol> Create(Ptr<Node> node) const override;
};

} // namespace ns3

#endif /* QLAB_ROUTING_H */
