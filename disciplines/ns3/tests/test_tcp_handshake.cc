/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_tcp_handshake.cc - Karn's rule on the handshake and RFC 6298 section
 * 5.7 in qlab's TCP (qlab-tcp-socket.h), with qlab's bulk applications.
 *
 *     qlab-ns3-test-tcp-handshake [--unpatched]
 *
 * Each case is one 100 kB transfer over a point-to-point link (10 Mb/s,
 * 10 ms one way, so a round trip of about 20 ms), TCP set as qlab's
 * scenarios set it (NewReno, no SACK/timestamps/window scaling, SYN timeout
 * 1 s, minimum RTO 0.2 s, initial window 2), with chosen segments dropped
 * once on arrival: SYNs, the SYN-ACK, and the first two data segments (so
 * that no duplicate ACK arrives and the first data segment is resent by its
 * retransmission timer: the "first data RTO" is the time between its two
 * transmissions).  What must hold:
 *
 *   - a clean handshake still gives an RTT sample (about 20 ms) and the
 *     usual RTO (the 0.2 s minimum);
 *   - after a lost SYN, a lost SYN-ACK or two lost SYNs, the first RTT
 *     sample comes from data (about 20 ms), not from the first SYN (1 s or
 *     3 s), and the first data RTO is exactly 3 s (RFC 6298 section 5.7).
 *
 * ns-3 3.37 without qlab's fix (--unpatched: HandshakeKarn = false) samples
 * the RTT back to the first SYN: first sample 1.02 s / 3.02 s, first data
 * RTO 3.06 s / 9.06 s; those checks fail, the clean case passes.
 * tests/test_runner.sh runs both and expects exactly that.
 *
 * Prints one line per check; exits 0 when all hold, 1 otherwise.
 */
#include "qlab-bulk-apps.h"
#include "qlab-tcp-socket.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>

using namespace ns3;

namespace
{

constexpr uint16_t kPort = 5001;
constexpr uint16_t kSenderPort = 10000;
constexpr uint64_t kBytes = 100000;
constexpr uint32_t kSegmentBytes = 1000;

/**
 * Drops, once each, the n-th arrivals of chosen segment kinds: SYN (without
 * ACK), SYN-ACK, and data segments by sequence number.
 */
class DropOnce : public ErrorModel
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::QlabTestDropOnce").SetParent<ErrorModel>();
        return tid;
    }

    uint32_t dropSyns = 0;           //!< the first this many SYNs
    uint32_t dropSynAcks = 0;        //!< the first this many SYN-ACKs
    std::set<uint32_t> dropDataSeqs; //!< data segments starting here, the first time

  private:
    bool DoCorrupt(Ptr<Packet> p) override
    {
        Ptr<Packet> copy = p->Copy();
        PppHeader ppp;
        Ipv4Header ip;
        TcpHeader tcp;
        copy->RemoveHeader(ppp);
        copy->RemoveHeader(ip);
        if (ip.GetProtocol() != TcpL4Protocol::PROT_NUMBER)
        {
            return false;
        }
        copy->RemoveHeader(tcp);
        const uint8_t flags = tcp.GetFlags();
        if ((flags & TcpHeader::SYN) && !(flags & TcpHeader::ACK) && m_syns++ < dropSyns)
        {
            return true;
        }
        if ((flags & TcpHeader::SYN) && (flags & TcpHeader::ACK) && m_synAcks++ < dropSynAcks)
        {
            return true;
        }
        if (copy->GetSize() > 0 && dropDataSeqs.erase(tcp.GetSequenceNumber().GetValue()))
        {
            return true;
        }
        return false;
    }

    void DoReset() override
    {
    }

    uint32_t m_syns = 0;
    uint32_t m_synAcks = 0;
};

/// What a transfer showed.
struct Observed
{
    bool completed = false;
    int64_t firstRttNs = -1;     //!< the first SRTT the socket reported (its first sample)
    int64_t firstDataTxNs = -1;  //!< first transmission of the first data segment
    int64_t firstDataRetxNs = -1; //!< its first retransmission
    uint32_t synRetx = 0;
};

/// Watches the sender's socket (its traces exist once the application started).
class Watcher
{
  public:
    explicit Watcher(Ptr<QlabBulkSender> sender)
        : m_sender(sender)
    {
    }

    void Changed()
    {
        Ptr<QlabTcpSocket> socket = m_sender->GetSocket();
        if (!m_connected && socket)
        {
            m_connected = true;
            socket->TraceConnectWithoutContext("RTT", MakeCallback(&Watcher::Rtt, this));
            socket->TraceConnectWithoutContext("Tx", MakeCallback(&Watcher::Tx, this));
        }
        if (socket)
        {
            seen.synRetx = socket->GetSnapshot().synRetx;
        }
    }

    Observed seen;

  private:
    void Rtt(Time /* old */, Time now)
    {
        if (seen.firstRttNs < 0 && now.IsStrictlyPositive())
        {
            seen.firstRttNs = now.GetNanoSeconds();
        }
    }

    void Tx(Ptr<const Packet> payload, const TcpHeader& header, Ptr<const TcpSocketBase>)
    {
        if (payload->GetSize() == 0 || header.GetSequenceNumber().GetValue() != 1)
        {
            return;
        }
        const int64_t now = Simulator::Now().GetNanoSeconds();
        if (seen.firstDataTxNs < 0)
        {
            seen.firstDataTxNs = now;
        }
        else if (seen.firstDataRetxNs < 0)
        {
            seen.firstDataRetxNs = now;
        }
    }

    Ptr<QlabBulkSender> m_sender;
    bool m_connected = false;
};

void
ConfigureTcp(bool patched)
{
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(1)));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::ConnCount", UintegerValue(24));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(1000));
    Config::SetDefault("ns3::QlabTcpSocket::HandshakeKarn", BooleanValue(patched));
}

void
SetTrue(bool* flag)
{
    *flag = true;
}

/// One transfer with the given drops: on the way to the sink (SYNs, data)
/// and on the way back (SYN-ACKs).
Observed
Transfer(uint32_t dropSyns, uint32_t dropSynAcks, bool dropFirstData)
{
    NodeContainer nodes;
    nodes.Create(2);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue("10Mbps"));
    p2p.SetChannelAttribute("Delay", StringValue("10ms"));
    NetDeviceContainer devices = p2p.Install(nodes);
    InternetStackHelper stack;
    stack.SetIpv6StackInstall(false);
    stack.Install(nodes);
    Ipv4AddressHelper addresses("10.1.0.0", "255.255.255.0");
    Ipv4InterfaceContainer ifs = addresses.Assign(devices);

    Ptr<DropOnce> toSink = CreateObject<DropOnce>();
    toSink->dropSyns = dropSyns;
    if (dropFirstData)
    {
        toSink->dropDataSeqs = {1, 1 + kSegmentBytes};
    }
    devices.Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(toSink));
    Ptr<DropOnce> toSender = CreateObject<DropOnce>();
    toSender->dropSynAcks = dropSynAcks;
    devices.Get(0)->SetAttribute("ReceiveErrorModel", PointerValue(toSender));

    bool done = false;
    Ptr<QlabBulkSink> sink = CreateObject<QlabBulkSink>();
    sink->Setup(InetSocketAddress(Ipv4Address::GetAny(), kPort), kSegmentBytes, kBytes,
                MakeBoundCallback(&SetTrue, &done));
    nodes.Get(1)->AddApplication(sink);
    Ptr<QlabBulkSender> sender = CreateObject<QlabBulkSender>();
    sender->Setup(InetSocketAddress(ifs.GetAddress(1), kPort), kSenderPort, kSegmentBytes, kBytes,
                  0);
    nodes.Get(0)->AddApplication(sender);
    Watcher watcher(sender);
    sender->SetTcpChangeCallback(MakeCallback(&Watcher::Changed, &watcher));

    Simulator::Stop(Seconds(60));
    Simulator::Run();
    watcher.seen.completed = done;
    Simulator::Destroy();
    return watcher.seen;
}

int g_failed = 0;

void
Check(const std::string& name, bool ok, const std::string& measured)
{
    std::printf("%s %s (%s)\n", ok ? "ok  " : "FAIL", name.c_str(), measured.c_str());
    g_failed += ok ? 0 : 1;
}

std::string
Ms(int64_t ns)
{
    char text[64];
    std::snprintf(text, sizeof(text), "%.3f ms", ns / 1e6);
    return text;
}

/// The checks of a case with a retransmitted SYN or SYN-ACK.
void
CheckLostHandshake(const std::string& what, const Observed& o, uint32_t synRetx)
{
    Check(what + ": the transfer completes", o.completed, o.completed ? "yes" : "no");
    Check(what + ": " + std::to_string(synRetx) + " SYN(s) sent again", o.synRetx == synRetx,
          std::to_string(o.synRetx));
    Check(what + ": no RTT sample from the handshake (first sample from data, < 50 ms)",
          o.firstRttNs > 0 && o.firstRttNs < 50000000, "first SRTT " + Ms(o.firstRttNs));
    const int64_t rto = o.firstDataRetxNs - o.firstDataTxNs;
    Check(what + ": first data RTO is 3 s (RFC 6298 section 5.7)",
          o.firstDataTxNs >= 0 && o.firstDataRetxNs >= 0 && rto == QlabTcpSocket::kSynLossRtoNs,
          "first data RTO " + Ms(rto));
}

} // namespace

int
main(int argc, char* argv[])
{
    bool patched = true;
    if (argc == 2 && std::strcmp(argv[1], "--unpatched") == 0)
    {
        patched = false;
    }
    else if (argc != 1)
    {
        std::fprintf(stderr, "usage: qlab-ns3-test-tcp-handshake [--unpatched]\n");
        return 2;
    }
    ConfigureTcp(patched);
    std::printf("qlab TCP, HandshakeKarn = %s\n", patched ? "true" : "false (ns-3 3.37)");

    // A clean handshake: its sample stands (Karn's rule drops only retransmitted ones).
    const Observed clean = Transfer(0, 0, false);
    Check("clean handshake: the transfer completes", clean.completed, clean.completed ? "yes" : "no");
    Check("clean handshake: the SYN-ACK gives the first RTT sample (15-50 ms)",
          clean.firstRttNs > 15000000 && clean.firstRttNs < 50000000,
          "first SRTT " + Ms(clean.firstRttNs));
    const Observed cleanRto = Transfer(0, 0, true);
    const int64_t rto = cleanRto.firstDataRetxNs - cleanRto.firstDataTxNs;
    Check("clean handshake: first data RTO is the 200 ms minimum", rto == 200000000,
          "first data RTO " + Ms(rto));

    CheckLostHandshake("one lost SYN", Transfer(1, 0, true), 1);
    CheckLostHandshake("two lost SYNs", Transfer(2, 0, true), 2);
    CheckLostHandshake("a lost SYN-ACK", Transfer(0, 1, true), 1);

    std::printf("%s\n", g_failed ? "some checks failed" : "all checks passed");
    return g_failed ? 1 : 0;
}
