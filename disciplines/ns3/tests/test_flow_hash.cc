/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_flow_hash - the flow hash the ns-3 adapter gives the core, in a real
 * run of a plan: every packet arriving at a traced discipline must carry a
 * 5-tuple of the plan (a flow's data direction, or the reverse one for its
 * ACKs: the ports the plan gave, bound by the applications), and the core
 * must have been given qcore_flow_hash of that 5-tuple, or 0 when the
 * discipline declares QCORE_IGNORES_FLOW_HASH.  S-RD counts flows by this
 * hash, so this is what makes its decisions the same in every backend.
 *
 *     qlab-ns3-test-flow-hash PLAN.json
 *
 * Builds the plan's network as qlab-ns3-run does (qlab-network.h), runs it
 * and prints one line per check, then "N passed, N failed"; exit 1 on
 * failure, 2 on a bad plan.
 */
#include "qlab-network.h"
#include "qlab-plan.h"

#include "ns3/core-module.h"
#include "ns3/ipv4-queue-disc-item.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

using namespace ns3;

namespace
{

using Tuple = std::tuple<uint32_t, uint32_t, uint16_t, uint16_t, uint8_t>;

struct Check
{
    std::map<Tuple, uint32_t> flowOf; // both directions of every flow
    std::vector<bool> readsHash;      // per traced queue
    uint64_t packets = 0;
    uint64_t hashed = 0;
    uint64_t wrongHash = 0;
    uint64_t unknownTuple = 0;
    std::set<uint32_t> flowsSeen;
    std::string firstProblem;

    void OnClassified(std::size_t queue, Ptr<const QueueDiscItem> item, const struct qcore_pkt* pkt)
    {
        packets++;
        Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
        const Ipv4Header& h = ip->GetHeader();
        uint8_t ports[4] = {0, 0, 0, 0};
        ip->GetPacket()->CopyData(ports, 4);
        const Tuple t{h.GetSource().Get(), h.GetDestination().Get(),
                      static_cast<uint16_t>(ports[0] << 8 | ports[1]),
                      static_cast<uint16_t>(ports[2] << 8 | ports[3]), h.GetProtocol()};
        auto it = flowOf.find(t);
        if (it == flowOf.end())
        {
            unknownTuple++;
            if (firstProblem.empty())
            {
                firstProblem = "a packet " + qlab::FormatIpv4(std::get<0>(t)) + ":" +
                               std::to_string(std::get<2>(t)) + " -> " +
                               qlab::FormatIpv4(std::get<1>(t)) + ":" +
                               std::to_string(std::get<3>(t)) + " of no flow of the plan";
            }
            return;
        }
        flowsSeen.insert(it->second);
        const uint32_t expected =
            readsHash[queue] ? qcore_flow_hash(std::get<0>(t), std::get<1>(t), std::get<2>(t),
                                               std::get<3>(t), std::get<4>(t))
                             : 0;
        hashed += readsHash[queue];
        if (pkt->flow_hash != expected)
        {
            wrongHash++;
            if (firstProblem.empty())
            {
                firstProblem = "flow " + std::to_string(it->second) + ": the core got " +
                               std::to_string(pkt->flow_hash) + ", qcore_flow_hash gives " +
                               std::to_string(expected);
            }
        }
    }
};

} // namespace

int
main(int argc, char* argv[])
{
    if (argc != 2)
    {
        std::fprintf(stderr, "usage: qlab-ns3-test-flow-hash PLAN.json\n");
        return 2;
    }
    std::ifstream in(argv[1]);
    std::stringstream text;
    text << in.rdbuf();
    qlab::Plan plan;
    try
    {
        plan = qlab::ParsePlan(nlohmann::json::parse(text.str()));
    }
    catch (const std::exception& e)
    {
        std::fprintf(stderr, "qlab-ns3-test-flow-hash: %s: %s\n", argv[1], e.what());
        return 2;
    }

    Check check;
    for (const qlab::FlowSpec& f : plan.flows)
    {
        const uint32_t s = plan.nodes[f.src].address;
        const uint32_t d = plan.nodes[f.dst].address;
        const uint8_t proto = f.udp ? 17 : 6;
        check.flowOf[Tuple{s, d, f.srcPort, f.dstPort, proto}] = f.flowId;
        check.flowOf[Tuple{d, s, f.dstPort, f.srcPort, proto}] = f.flowId;
    }
    qlab::Network network(plan);
    network.Build();
    const std::vector<qlab::Network::TracedQueue>& queues = network.GetTracedQueues();
    std::size_t discs = 0;
    for (std::size_t q = 0; q < queues.size(); q++)
    {
        const qlab::TracedQueueSpec& t = plan.traced[q];
        const qlab::LinkSpec& link = plan.links[t.link];
        const qlab::QueueSpec& spec = t.atA ? link.queueA : link.queueB;
        check.readsHash.push_back(spec.kind == qlab::QueueSpec::Kind::CORE &&
                                  !(spec.ops->ignores & QCORE_IGNORES_FLOW_HASH));
        if (queues[q].disc)
        {
            discs++;
            queues[q].disc->TraceConnectWithoutContext("Classified",
                                                       MakeCallback(&Check::OnClassified, &check, q));
        }
    }
    Simulator::Stop(NanoSeconds(plan.durationNs));
    Simulator::Run();
    Simulator::Destroy();

    int passed = 0;
    int failed = 0;
    auto report = [&](bool ok, const std::string& what) {
        (ok ? passed : failed)++;
        std::printf("%s %s%s\n", ok ? "ok  " : "FAIL", what.c_str(),
                    ok || check.firstProblem.empty() ? "" : (": " + check.firstProblem).c_str());
    };
    report(check.packets > 0 && check.unknownTuple == 0 && !check.flowsSeen.empty(),
           "every packet at " + std::to_string(discs) + " traced discipline(s) carries a plan "
               "flow's 5-tuple (" + std::to_string(check.packets) + " packets, " +
               std::to_string(check.flowsSeen.size()) + " of " +
               std::to_string(plan.flows.size()) + " flows)");
    report(check.wrongHash == 0,
           "the core got qcore_flow_hash of the plan's 5-tuple (" + std::to_string(check.hashed) +
               " packets hashed; 0 where the discipline ignores it)");
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
