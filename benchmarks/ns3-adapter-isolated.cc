/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ns3-adapter-isolated - the per-packet cost of one queue disc's
 * Enqueue/Dequeue, isolated from the rest of a simulation, for
 * benchmarks/ns3-adapter-isolated.sh (which runs it under callgrind).
 *
 *   qlab-ns3-adapter-isolated KIND [PACKETS]      (default 5000 packets)
 *
 * KIND: "fifo" (ns-3's FifoQueueDisc), "ns3-prio" (ns-3's PrioQueueDisc,
 * three FifoQueueDisc children, its default priomap), or a discipline of the
 * core run through its typed queue disc ns3::Qlab<Name>QueueDisc, created as
 * qlab-ns3-run creates it (qlab-network.cc: ObjectFactory, every attribute,
 * AssignStreams(seed), Initialize): "droptail", "prio" (Bands 3), "ncq", or
 * any other core discipline (its defaults).  Every buffer limit is 1000
 * packets, above the largest backlog, so nothing is dropped.
 *
 * Packets: PACKETS Ipv4QueueDiscItems, made before the measurement from a
 * fixed generator (the same for every KIND): 80% TCP (1448-, 536- and
 * 100-byte segments, pure ACKs, an occasional SYN), 20% UDP (1200 and 160
 * bytes); ToS 0x00/0x20/0x40 with ECT(0) on some (cls 0-2, which prio
 * with 3 bands accepts); 32 flows; each with the SocketPriorityTag an ns-3
 * socket adds (Socket::IpTos2Priority), which PrioQueueDisc classifies by.
 *
 * Measurement: one simulator event per operation, 1 us apart: packets
 * arrive in bursts of 1-32 (from the same generator) and the queue is then
 * served until it holds at most 0-15 packets; at the end it is emptied.
 * Each Enqueue runs inside qlab_bench_enqueue() and each Dequeue inside
 * qlab_bench_dequeue(), the functions callgrind's --toggle-collect names,
 * so only QueueDisc::Enqueue/Dequeue (and the call) are counted.  Every
 * item stays referenced by the packet list, so no packet is freed inside
 * the measurement.  Prints "packets P enqueued E dequeued D dropped X";
 * exit 1 if a packet was dropped or not returned.
 */
#include "qlab-queue-disc.h"

#include "ns3/core-module.h"
#include "ns3/fifo-queue-disc.h"
#include "ns3/ipv4-header.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/network-module.h"
#include "ns3/prio-queue-disc.h"
#include "ns3/socket.h"
#include "ns3/tcp-header.h"
#include "ns3/traffic-control-module.h"
#include "ns3/udp-header.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

constexpr uint32_t kLimitPkts = 1000;

/// SplitMix64: the packet mix and the burst pattern, fixed for every KIND.
struct Rng
{
    uint64_t s;

    uint32_t Next(uint32_t n)
    {
        uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return static_cast<uint32_t>((z ^ (z >> 31)) % n);
    }
};

Ptr<QueueDiscItem>
MakeItem(Rng& rng)
{
    const uint32_t flow = rng.Next(32);
    const uint8_t tosClass[] = {0x00, 0x20, 0x40};
    uint8_t tos = tosClass[rng.Next(3)];
    if (rng.Next(4) == 0)
    {
        tos |= 0x02; // ECT(0)
    }
    const uint32_t kind = rng.Next(10);
    Ptr<Packet> p;
    uint8_t proto;
    if (kind < 8)
    {
        const uint32_t sizes[] = {1448, 1448, 1448, 536, 100, 0, 0, 0};
        const uint32_t payload = sizes[rng.Next(8)];
        p = Create<Packet>(payload);
        TcpHeader tcp;
        tcp.SetSourcePort(static_cast<uint16_t>(49152 + flow));
        tcp.SetDestinationPort(5001);
        tcp.SetSequenceNumber(SequenceNumber32(rng.Next(1u << 30)));
        tcp.SetAckNumber(SequenceNumber32(rng.Next(1u << 30)));
        tcp.SetWindowSize(65535);
        tcp.SetFlags(payload == 0 && rng.Next(50) == 0 ? TcpHeader::SYN : TcpHeader::ACK);
        p->AddHeader(tcp);
        proto = 6;
    }
    else
    {
        p = Create<Packet>(rng.Next(2) ? 1200 : 160);
        UdpHeader udp;
        udp.SetSourcePort(static_cast<uint16_t>(40000 + flow));
        udp.SetDestinationPort(9);
        p->AddHeader(udp);
        proto = 17;
    }
    SocketPriorityTag prio;
    prio.SetPriority(Socket::IpTos2Priority(tos));
    p->AddPacketTag(prio);

    Ipv4Header h;
    h.SetSource(Ipv4Address(0x0a000001 + flow));
    h.SetDestination(Ipv4Address(0x0a010001));
    h.SetProtocol(proto);
    h.SetTos(tos);
    h.SetTtl(63);
    h.SetPayloadSize(p->GetSize());
    h.SetIdentification(static_cast<uint16_t>(rng.Next(65536)));
    return Create<Ipv4QueueDiscItem>(p, Address(), 0x0800, h);
}

Ptr<QueueDisc>
MakeFifo()
{
    Ptr<FifoQueueDisc> q = CreateObject<FifoQueueDisc>();
    q->SetAttribute("MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, kLimitPkts)));
    return q;
}

Ptr<QueueDisc>
MakeQueueDisc(const std::string& kind)
{
    if (kind == "fifo")
    {
        Ptr<QueueDisc> q = MakeFifo();
        q->Initialize();
        return q;
    }
    if (kind == "ns3-prio")
    {
        Ptr<PrioQueueDisc> q = CreateObject<PrioQueueDisc>();
        for (int b = 0; b < 3; b++)
        {
            Ptr<QueueDiscClass> c = CreateObject<QueueDiscClass>();
            c->SetQueueDisc(MakeFifo());
            q->AddQueueDiscClass(c);
        }
        q->Initialize();
        return q;
    }
    TypeId tid;
    if (!QlabQueueDisc::LookupTypedTypeId(kind, &tid))
    {
        std::fprintf(stderr, "unknown kind %s (fifo, ns3-prio or a core discipline)\n",
                     kind.c_str());
        std::exit(2);
    }
    // As qlab-network.cc creates a plan's queue: attributes, seed, Initialize.
    ObjectFactory f(tid.GetName());
    const struct qcore_disc_ops* ops = qcore_find(kind.c_str());
    for (uint32_t i = 0; i < ops->nparams; i++)
    {
        const std::string name = ops->params[i].name;
        if (name == "limit_pkts")
        {
            f.Set("LimitPkts", UintegerValue(kLimitPkts));
        }
        else if (kind == "prio" && name == "bands")
        {
            f.Set("Bands", UintegerValue(3));
        }
    }
    Ptr<QlabQueueDisc> q = f.Create<QlabQueueDisc>();
    q->AssignStreams(1);
    q->Initialize();
    return q;
}

struct Bench
{
    Ptr<QueueDisc> disc;
    std::vector<Ptr<QueueDiscItem>> items;
    std::size_t next = 0;
    uint64_t enqueued = 0;
    uint64_t dequeued = 0;
    uint64_t lost = 0;
};

Bench g_bench;

} // namespace

// The measured calls (callgrind --toggle-collect): not inlined, C names.
extern "C" __attribute__((noinline)) void
qlab_bench_enqueue()
{
    Bench& b = g_bench;
    if (b.disc->Enqueue(b.items[b.next++]))
    {
        b.enqueued++;
    }
}

extern "C" __attribute__((noinline)) void
qlab_bench_dequeue()
{
    Bench& b = g_bench;
    if (b.disc->Dequeue())
    {
        b.dequeued++;
    }
    else
    {
        b.lost++;
    }
}

int
main(int argc, char** argv)
{
    if (argc < 2 || argc > 3)
    {
        std::fprintf(stderr, "usage: %s KIND [PACKETS]\n", argv[0]);
        return 2;
    }
    const std::string kind = argv[1];
    const uint32_t packets = argc == 3 ? static_cast<uint32_t>(std::atoi(argv[2])) : 5000;
    Bench& b = g_bench;
    b.disc = MakeQueueDisc(kind);
    Rng rng{1};
    for (uint32_t i = 0; i < packets; i++)
    {
        b.items.push_back(MakeItem(rng));
    }

    // The operation sequence: bursts of arrivals, then service down to a
    // small backlog; one event per operation, 1 us apart.
    Rng pattern{2};
    uint64_t t = 0;
    uint32_t backlog = 0;
    uint32_t scheduled = 0;
    while (scheduled < packets)
    {
        const uint32_t burst = 1 + pattern.Next(32);
        for (uint32_t i = 0; i < burst && scheduled < packets; i++, scheduled++, backlog++)
        {
            Simulator::Schedule(NanoSeconds(t += 1000), &qlab_bench_enqueue);
        }
        const uint32_t keep = scheduled < packets ? pattern.Next(16) : 0;
        for (; backlog > keep; backlog--)
        {
            Simulator::Schedule(NanoSeconds(t += 1000), &qlab_bench_dequeue);
        }
    }
    Simulator::Run();
    const QueueDisc::Stats& s = b.disc->GetStats();
    std::printf("packets %u enqueued %lu dequeued %lu dropped %u\n", packets,
                static_cast<unsigned long>(b.enqueued), static_cast<unsigned long>(b.dequeued),
                s.nTotalDroppedPackets);
    const bool ok = b.enqueued == packets && b.dequeued == packets && b.lost == 0 &&
                    s.nTotalDroppedPackets == 0;
    b.disc->Dispose();
    b.disc = nullptr;
    b.items.clear();
    Simulator::Destroy();
    return ok ? 0 : 1;
}
