/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-wireless.cc - a plan's wireless hosts (docs/jobs.md, wireless): one
 * 802.11b ad hoc channel with two-ray ground propagation shared by the
 * wireless hosts and their gateway router, AODV routing among them.  Linked
 * into qlab-ns3-run-wireless only (with ns-3's wifi, mobility, propagation
 * and AODV): qlab-ns3-run hands a plan with wireless hosts to it, so wired
 * runs link and initialise none of this.
 *
 * The gateway runs AODV on its radio interface only: AODV joins its list
 * routing (after QlabRouting, which routes the wired side and finds no
 * route to the radio side) once its wired interfaces are up, so AODV hears
 * of the radio interface alone.  ns-3's AODV has no gateway mode (a route
 * to a wired destination), so a wireless host sends its datagrams to the
 * gateway's radio address, and the gateway relays them onto the wired path
 * (Network::InstallRelays), as a sensor network's sink does.
 */
#include "qlab-network.h"

#include "ns3/aodv-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/propagation-module.h"
#include "ns3/wifi-module.h"

using namespace ns3;

namespace qlab
{

namespace
{

Vector
Metres(const std::pair<int64_t, int64_t>& mm)
{
    return Vector(static_cast<double>(mm.first) / 1000.0, static_cast<double>(mm.second) / 1000.0, 0.0);
}

void
InstallWireless(const Plan& plan, const NodeContainer& nodes)
{
    const WirelessSpec& w = plan.wireless;
    // the radio's nodes: the gateway first, then the wireless hosts in plan order
    NodeContainer radio;
    radio.Add(nodes.Get(w.gateway));
    for (uint32_t n : w.nodes)
    {
        radio.Add(nodes.Get(n));
    }

    Ptr<ListPositionAllocator> positions = CreateObject<ListPositionAllocator>();
    positions->Add(Metres(w.gatewayPositionMm));
    for (const auto& p : w.positionsMm)
    {
        positions->Add(Metres(p));
    }
    MobilityHelper mobility;
    mobility.SetPositionAllocator(positions);
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mobility.Install(radio);

    YansWifiChannelHelper channel;
    channel.SetPropagationDelay("ns3::ConstantSpeedPropagationDelayModel");
    channel.AddPropagationLoss("ns3::TwoRayGroundPropagationLossModel",
                               "HeightAboveZ",
                               DoubleValue(static_cast<double>(w.antennaHeightMm) / 1000.0));
    YansWifiPhyHelper phy;
    phy.SetChannel(channel.Create());
    const double dbm = static_cast<double>(w.txPowerMdbm) / 1000.0;
    phy.Set("TxPowerStart", DoubleValue(dbm));
    phy.Set("TxPowerEnd", DoubleValue(dbm));
    phy.Set("RxSensitivity", DoubleValue(static_cast<double>(w.rxSensitivityMdbm) / 1000.0));
    WifiHelper wifi;
    wifi.SetStandard(WIFI_STANDARD_80211b);
    wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                 "DataMode", StringValue(w.dataMode),
                                 "ControlMode", StringValue("DsssRate1Mbps"));
    WifiMacHelper mac;
    mac.SetType("ns3::AdhocWifiMac");
    NetDeviceContainer devices = wifi.Install(phy, mac, radio);

    AodvHelper aodv;
    InternetStackHelper stack;
    stack.SetIpv6StackInstall(false);
    stack.SetRoutingHelper(aodv);
    for (uint32_t n : w.nodes)
    {
        stack.Install(nodes.Get(n));
    }
    // AODV at the gateway, behind QlabRouting, before its radio interface exists
    Ptr<Node> gateway = nodes.Get(w.gateway);
    Ptr<Ipv4ListRouting> list =
        DynamicCast<Ipv4ListRouting>(gateway->GetObject<Ipv4>()->GetRoutingProtocol());
    NS_ABORT_MSG_IF(!list, "the gateway has no list routing");
    list->AddRoutingProtocol(aodv.Create(gateway), 0);

    // one /16 for the radio: the hosts' addresses and the gateway's
    const Ipv4Mask mask("/16");
    for (uint32_t i = 0; i < radio.GetN(); i++)
    {
        Ptr<Ipv4> ipv4 = radio.Get(i)->GetObject<Ipv4>();
        const uint32_t address = i == 0 ? w.gatewayAddress : plan.nodes[w.nodes[i - 1]].address;
        const int32_t index = ipv4->AddInterface(devices.Get(i));
        ipv4->AddAddress(index, Ipv4InterfaceAddress(Ipv4Address(address), mask));
        ipv4->SetUp(index);
    }
    // AODV's and the MAC's random variables: streams from the run's seed
    aodv.AssignStreams(radio, 1000);
    wifi.AssignStreams(devices, 2000);
}

struct Register
{
    Register()
    {
        g_installWireless = &InstallWireless;
    }
} registerWireless;

} // namespace

} // namespace qlab
