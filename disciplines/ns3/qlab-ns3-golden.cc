/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-ns3-golden - the conformance replay (DISCIPLINES.md, "One conformance
 * interface") run through the ns-3 adapter QlabQueueDisc:
 *
 *     qlab-ns3-golden DISC [--param NAME=VALUE]... [--seed N] < events.csv > decisions.csv
 *
 * Same interface and output as the core's qcore-replay, but every decision
 * is what the ns-3 queue disc actually did:
 *   - a standalone typed queue disc, ns3::Qlab<Name>QueueDisc (through an
 *     ObjectFactory, as TrafficControlHelper builds one; no device, no send
 *     callback), with every --param set as its generated attribute
 *     (size_bytes=141 -> "SizeBytes", UintegerValue(141); BOOL ->
 *     BooleanValue; PPM/ENUM/lists -> StringValue) and --seed given to
 *     AssignStreams, gets one Simulator event per input row at t_ns,
 *     same-time rows in input order (ns-3 runs equal-time events in
 *     insertion order);
 *   - `enq` builds an Ipv4QueueDiscItem whose GetSize() is `len` (a 20-byte
 *     IPv4 header plus len - 20 bytes of payload, ToS = cls << 5 | prec << 3
 *     with ECT(0) so that a MARK verdict can set CE) and calls
 *     QueueDisc::Enqueue; `deq` calls QueueDisc::Dequeue directly (never
 *     Peek, so the requeue slot stays empty and nothing is reordered);
 *   - the decision rows come from the adapter's BandEvent trace (band,
 *     verdict, reason, packet identity) cross-checked against QueueDisc's
 *     own Mark / DropBeforeEnqueue / DropAfterDequeue traces, Enqueue's
 *     return value, the CE codepoint and the item Dequeue returns; any
 *     disagreement is a broken adapter (exit 3).
 *
 * The golden events carry cls, prec and an arbitrary flow number, which the
 * adapter's real classifier (ToS byte, 5-tuple hash) cannot reproduce, so a
 * test-only subclass, GoldenQueueDisc, overrides QlabQueueDisc::Classify to
 * read them from a packet tag (GoldenTag) attached to each synthetic packet,
 * and marks IPv4 packets ECN-capable (QCORE_PKT_ECT, they are ECT(0)) as
 * the replay's events implicitly are.  It is registered under a TypeId
 * derived from the discipline's typed one, so the attributes are the
 * generated ones.  The tag also carries the row's packet number, which is
 * how BandEvent reports are tied back to `pkt`.
 *
 * A packet shorter than an IPv4 header (len < 20; the S-RD/RD golden cases
 * use 1-byte packets to probe byte-exact limits) cannot be an
 * Ipv4QueueDiscItem; it is carried as a plain non-IP QueueDiscItem of len
 * bytes (RawItem), which the adapter treats as any non-IP packet.  Such a
 * packet is not ECN-capable: a MARK verdict for it would become an AQM drop
 * in the adapter (qcore_mark_fallback; no golden case marks one).
 *
 * Parameters and packet classes are checked with the core first (its
 * parser, qcore_configure, check_pkt), so a bad one is refused with the
 * core's message and exit 2, as qcore-replay does.
 *
 * Exit status: 0 ok, 2 bad arguments or events, 3 the adapter's behaviour
 * is inconsistent with itself (traces disagree).
 */
#include "qlab-queue-disc.h"


#include "ns3/core-module.h"
#include "ns3/ipv4-header.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/network-module.h"
#include "ns3/tag.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace ns3;

namespace
{

constexpr int kExitUsage = 2;
constexpr int kExitInconsistent = 3;
constexpr uint32_t kIpv4HeaderBytes = 20;
constexpr uint8_t kIpProtocolUdp = 17;
const char* const kEventsHeader = "t_ns,op,len,cls,prec,flow";
const char* const kDecisionsHeader = "t_ns,op,pkt,verdict,band,reason";

[[noreturn]] void
Die(int status, const std::string& message)
{
    std::fprintf(stderr, "qlab-ns3-golden: %s\n", message.c_str());
    std::exit(status);
}

} // namespace

namespace ns3
{

/// The golden event's metadata, carried by each synthetic packet.
class GoldenTag : public Tag
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::QlabGoldenTag")
                                .SetParent<Tag>()
                                .SetGroupName("TrafficControl")
                                .AddConstructor<GoldenTag>();
        return tid;
    }

    TypeId GetInstanceTypeId() const override
    {
        return GetTypeId();
    }

    uint32_t GetSerializedSize() const override
    {
        return 8 + 4 + 1 + 1;
    }

    void Serialize(TagBuffer i) const override
    {
        i.WriteU64(pkt);
        i.WriteU32(flow);
        i.WriteU8(cls);
        i.WriteU8(prec);
    }

    void Deserialize(TagBuffer i) override
    {
        pkt = i.ReadU64();
        flow = i.ReadU32();
        cls = i.ReadU8();
        prec = i.ReadU8();
    }

    void Print(std::ostream& os) const override
    {
        os << "pkt=" << pkt << " cls=" << unsigned(cls) << " prec=" << unsigned(prec)
           << " flow=" << flow;
    }

    uint64_t pkt = 0;  //!< the enq row's packet number
    uint32_t flow = 0; //!< the event's flow (the core's flow_hash)
    uint8_t cls = 0;
    uint8_t prec = 0;
};

/// Test-only: QlabQueueDisc classifying by the GoldenTag instead of ToS/hash.
class GoldenQueueDisc : public QlabQueueDisc
{
  protected:
    void Classify(Ptr<const QueueDiscItem> item, struct qcore_pkt* pkt) const override
    {
        GoldenTag tag;
        if (!item->GetPacket()->PeekPacketTag(tag))
        {
            Die(kExitInconsistent, "a packet reached the queue disc without its golden tag");
        }
        pkt->cls = tag.cls;
        pkt->prec = tag.prec;
        pkt->flow_hash = tag.flow;
        // Golden events carry no flags; the synthetic IPv4 packets are ECT(0).
        Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
        pkt->flags = ip && ip->GetHeader().GetEcn() != Ipv4Header::ECN_NotECT ? QCORE_PKT_ECT : 0;
    }
};

/// A packet shorter than an IPv4 header: a non-IP item of exactly len bytes.
class RawItem : public QueueDiscItem
{
  public:
    RawItem(Ptr<Packet> p)
        : QueueDiscItem(p, Address(), 0)
    {
    }

    void AddHeader() override
    {
    }

    bool Mark() override
    {
        return false;
    }
};

} // namespace ns3

namespace
{

struct EventRow
{
    uint64_t t;
    bool enq;
    uint32_t len;
    uint8_t cls;
    uint8_t prec;
    uint32_t flow;
};

/// Decimal digits only, at most max (as qcore-replay's parse_u64).
bool
ParseU64(const std::string& s, uint64_t max, uint64_t* out)
{
    if (s.empty())
    {
        return false;
    }
    uint64_t v = 0;
    for (char c : s)
    {
        if (c < '0' || c > '9')
        {
            return false;
        }
        const uint64_t d = static_cast<uint64_t>(c - '0');
        if (v > (max - d) / 10)
        {
            return false;
        }
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

std::vector<std::string>
Split(const std::string& line)
{
    std::vector<std::string> cols;
    std::size_t pos = 0;
    for (;;)
    {
        const std::size_t comma = line.find(',', pos);
        if (comma == std::string::npos)
        {
            cols.push_back(line.substr(pos));
            return cols;
        }
        cols.push_back(line.substr(pos, comma - pos));
        pos = comma + 1;
    }
}

/// One BandEvent report.
struct Report
{
    QlabQueueDisc::Event event;
    uint64_t pkt;
    uint32_t band;
    std::string reason;
};

/// One QueueDisc trace report (Mark, DropBeforeEnqueue, DropAfterDequeue).
struct DiscReport
{
    char kind; // 'M' mark, 'B' drop before enqueue, 'A' drop after dequeue
    uint64_t pkt;
    std::string reason;
};

class Golden
{
  public:
    Golden(Ptr<GoldenQueueDisc> disc)
        : m_disc(disc)
    {
        m_disc->TraceConnectWithoutContext("BandEvent", MakeCallback(&Golden::OnBandEvent, this));
        m_disc->TraceConnectWithoutContext("Mark", MakeCallback(&Golden::OnMark, this));
        m_disc->TraceConnectWithoutContext("DropBeforeEnqueue",
                                           MakeCallback(&Golden::OnDropBeforeEnqueue, this));
        m_disc->TraceConnectWithoutContext("DropAfterDequeue",
                                           MakeCallback(&Golden::OnDropAfterDequeue, this));
        m_out = kDecisionsHeader;
        m_out += '\n';
    }

    void Enqueue(EventRow row);
    void Dequeue(uint64_t t);

    const std::string& Output() const
    {
        return m_out;
    }

  private:
    static uint64_t PktOf(Ptr<const QueueDiscItem> item)
    {
        GoldenTag tag;
        if (!item->GetPacket()->PeekPacketTag(tag))
        {
            Die(kExitInconsistent, "a traced packet has no golden tag");
        }
        return tag.pkt;
    }

    void OnBandEvent(Ptr<const QueueDiscItem> item,
                     QlabQueueDisc::Event event,
                     uint32_t band,
                     const char* reason)
    {
        m_reports.push_back({event, PktOf(item), band, reason ? reason : ""});
    }

    void OnMark(Ptr<const QueueDiscItem> item, const char* reason)
    {
        m_discReports.push_back({'M', PktOf(item), reason});
    }

    void OnDropBeforeEnqueue(Ptr<const QueueDiscItem> item, const char* reason)
    {
        m_discReports.push_back({'B', PktOf(item), reason});
    }

    void OnDropAfterDequeue(Ptr<const QueueDiscItem> item, const char* reason)
    {
        m_discReports.push_back({'A', PktOf(item), reason});
    }

    [[noreturn]] void Inconsistent(uint64_t row, const std::string& what) const
    {
        Die(kExitInconsistent, "row " + std::to_string(row) + ": " + what);
    }

    void Line(uint64_t t, const char* op, const std::string& rest)
    {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "%" PRIu64 ",", t);
        m_out += buf;
        m_out += op;
        m_out += ',';
        m_out += rest;
        m_out += '\n';
    }

    Ptr<GoldenQueueDisc> m_disc;
    std::vector<Report> m_reports;
    std::vector<DiscReport> m_discReports;
    uint64_t m_nextPkt = 0;
    uint64_t m_row = 0;
    std::string m_out;
};

void
Golden::Enqueue(EventRow row)
{
    const uint64_t id = m_nextPkt++;
    const uint64_t rowNo = ++m_row;
    GoldenTag tag;
    tag.pkt = id;
    tag.flow = row.flow;
    tag.cls = row.cls;
    tag.prec = row.prec;

    Ptr<QueueDiscItem> item;
    Ptr<Ipv4QueueDiscItem> ipItem;
    if (row.len >= kIpv4HeaderBytes)
    {
        Ptr<Packet> p = Create<Packet>(row.len - kIpv4HeaderBytes);
        p->AddPacketTag(tag);
        Ipv4Header h;
        h.SetSource(Ipv4Address("10.0.0.1"));
        h.SetDestination(Ipv4Address("10.128.0.2"));
        h.SetProtocol(kIpProtocolUdp);
        h.SetPayloadSize(row.len - kIpv4HeaderBytes);
        h.SetTtl(64);
        h.SetTos(static_cast<uint8_t>(((row.cls & 7) << 5) | ((row.prec & 3) << 3)));
        h.SetEcn(Ipv4Header::ECN_ECT0);
        ipItem = Create<Ipv4QueueDiscItem>(p, Address(), Ipv4L3Protocol::PROT_NUMBER, h);
        item = ipItem;
    }
    else
    {
        Ptr<Packet> p = Create<Packet>(row.len);
        p->AddPacketTag(tag);
        item = Create<RawItem>(p);
    }
    if (item->GetSize() != row.len)
    {
        Inconsistent(rowNo,
                     "item size " + std::to_string(item->GetSize()) + " != len " +
                         std::to_string(row.len));
    }

    m_reports.clear();
    m_discReports.clear();
    const bool accepted = m_disc->Enqueue(item);

    // BandEvent: [MARK] ENQUEUE, or DROP_ARRIVAL, all for this packet.
    std::size_t n = m_reports.size();
    bool marked = false;
    for (const Report& r : m_reports)
    {
        if (r.pkt != id)
        {
            Inconsistent(rowNo, "BandEvent about another packet during enqueue");
        }
    }
    if (n == 2 && m_reports[0].event == QlabQueueDisc::Event::MARK &&
        m_reports[1].event == QlabQueueDisc::Event::ENQUEUE && m_reports[0].band == m_reports[1].band)
    {
        marked = true;
    }
    else if (n != 1 || (m_reports[0].event != QlabQueueDisc::Event::ENQUEUE &&
                        m_reports[0].event != QlabQueueDisc::Event::DROP_ARRIVAL))
    {
        Inconsistent(rowNo, "unexpected BandEvent sequence on enqueue");
    }
    const Report& last = m_reports.back();
    const bool dropped = last.event == QlabQueueDisc::Event::DROP_ARRIVAL;

    // Cross-checks with QueueDisc's own view.
    if (accepted == dropped)
    {
        Inconsistent(rowNo, "Enqueue's return value disagrees with BandEvent");
    }
    if (dropped)
    {
        if (m_discReports.size() != 1 || m_discReports[0].kind != 'B' ||
            m_discReports[0].pkt != id || m_discReports[0].reason != last.reason ||
            last.reason.empty())
        {
            Inconsistent(rowNo, "DropBeforeEnqueue trace disagrees with BandEvent");
        }
    }
    else if (marked)
    {
        if (m_discReports.size() != 1 || m_discReports[0].kind != 'M' ||
            m_discReports[0].pkt != id || !ipItem ||
            ipItem->GetHeader().GetEcn() != Ipv4Header::ECN_CE)
        {
            Inconsistent(rowNo, "Mark trace or CE codepoint disagrees with BandEvent");
        }
    }
    else if (!m_discReports.empty())
    {
        Inconsistent(rowNo, "QueueDisc traced a drop or mark of a queued packet");
    }

    Line(row.t,
         "enq",
         std::to_string(id) + "," + (dropped ? "dropped" : marked ? "marked" : "queued") + "," +
             std::to_string(last.band) + "," + last.reason);
}

void
Golden::Dequeue(uint64_t t)
{
    const uint64_t rowNo = ++m_row;
    m_reports.clear();
    m_discReports.clear();
    Ptr<QueueDiscItem> item = m_disc->Dequeue();

    // BandEvent: DROP_HEAD* then DEQUEUE (item returned) or nothing (empty).
    std::size_t heads = 0;
    for (std::size_t i = 0; i < m_reports.size(); i++)
    {
        const Report& r = m_reports[i];
        const bool lastReport = i + 1 == m_reports.size();
        if (r.event == QlabQueueDisc::Event::DROP_HEAD)
        {
            if (heads >= m_discReports.size() || m_discReports[heads].kind != 'A' ||
                m_discReports[heads].pkt != r.pkt || m_discReports[heads].reason != r.reason ||
                r.reason.empty())
            {
                Inconsistent(rowNo, "DropAfterDequeue trace disagrees with BandEvent");
            }
            heads++;
            Line(t,
                 "drop_head",
                 std::to_string(r.pkt) + ",dropped," + std::to_string(r.band) + "," + r.reason);
        }
        else if (r.event == QlabQueueDisc::Event::DEQUEUE && lastReport)
        {
            if (!item || PktOf(item) != r.pkt)
            {
                Inconsistent(rowNo, "Dequeue returned another packet than BandEvent reported");
            }
            Line(t, "deq", std::to_string(r.pkt) + ",sent," + std::to_string(r.band) + ",");
        }
        else
        {
            Inconsistent(rowNo, "unexpected BandEvent sequence on dequeue");
        }
    }
    if (heads != m_discReports.size())
    {
        Inconsistent(rowNo, "QueueDisc traced drops BandEvent did not report");
    }
    if (m_reports.empty() || m_reports.back().event != QlabQueueDisc::Event::DEQUEUE)
    {
        if (item)
        {
            Inconsistent(rowNo, "Dequeue returned a packet BandEvent did not report");
        }
        Line(t, "deq", "-1,empty,,");
    }
}

void
Usage(std::FILE* out)
{
    std::fprintf(out,
                 "usage: qlab-ns3-golden DISC [--param NAME=VALUE]... [--seed N] < "
                 "events.csv > decisions.csv\n"
                 "The conformance replay (qcore-replay's interface and output) through ns-3's "
                 "ns3::Qlab<Name>QueueDisc,\nparameters set as its attributes, --seed through "
                 "AssignStreams.\n"
                 "exit status: 0 ok, 2 bad arguments or events, 3 adapter traces disagree\n");
}

/// One --param as the core's typed value (the core's parser), or exit 2.
struct qcore_param_value
ParseParam(const struct qcore_disc_ops* ops, const std::string& name, const std::string& value)
{
    char err[QCORE_ERRLEN + 200] = "";
    struct qcore_param_value v = {};
    const int index = qcore_param_index(ops, name.c_str(), err, sizeof(err));
    if (index < 0 || qcore_param_parse(&ops->params[index], value.c_str(), &v, err, sizeof(err)))
    {
        Die(kExitUsage, std::string("--param: ") + err);
    }
    v.index = static_cast<uint32_t>(index);
    return v;
}

/// The core's configure sequence on the parameters (cross-parameter rules), or exit 2.
std::vector<uint64_t>
Configure(const struct qcore_disc_ops* ops, const std::vector<struct qcore_param_value>& values)
{
    std::vector<uint64_t> params(ops->params_size / sizeof(uint64_t) + 2, 0);
    uint32_t nbands = 0;
    char err[QCORE_ERRLEN] = "";
    if (qcore_configure(ops, params.data(), values.data(), static_cast<uint32_t>(values.size()),
                        &nbands, err, sizeof(err)))
    {
        Die(kExitUsage, std::string(ops->name) + ": " + err);
    }
    return params;
}

std::vector<EventRow>
ReadEvents(const struct qcore_disc_ops* ops, const std::vector<uint64_t>& params)
{
    std::vector<EventRow> rows;
    std::string line;
    if (!std::getline(std::cin, line))
    {
        Die(kExitUsage, std::string("line 1: missing header ") + kEventsHeader);
    }
    if (!line.empty() && line.back() == '\r')
    {
        line.pop_back();
    }
    if (line != kEventsHeader)
    {
        Die(kExitUsage, std::string("line 1: header must be exactly ") + kEventsHeader);
    }
    std::set<std::pair<uint8_t, uint8_t>> checked;
    uint64_t last = 0;
    for (uint64_t rowNo = 1; std::getline(std::cin, line); rowNo++)
    {
        if (!line.empty() && line.back() == '\r')
        {
            line.pop_back();
        }
        const std::string where =
            "row " + std::to_string(rowNo) + " (line " + std::to_string(rowNo + 1) + "): ";
        const std::vector<std::string> col = Split(line);
        if (col.size() != 6)
        {
            Die(kExitUsage, where + "expected 6 columns (" + kEventsHeader + ")");
        }
        EventRow ev{};
        if (!ParseU64(col[0], INT64_MAX, &ev.t))
        {
            Die(kExitUsage, where + "column t_ns: expected an integer, got '" + col[0] + "'");
        }
        if (ev.t < last)
        {
            Die(kExitUsage, where + "column t_ns: times never decrease");
        }
        last = ev.t;
        if (col[1] == "enq")
        {
            uint64_t v;
            ev.enq = true;
            if (!ParseU64(col[2], 65535, &v) || v == 0)
            {
                Die(kExitUsage, where + "column len: expected an integer 1..65535, got '" +
                                    col[2] + "'");
            }
            ev.len = static_cast<uint32_t>(v);
            const char* names[] = {"cls", "prec", "flow"};
            const uint64_t max[] = {255, 255, UINT32_MAX};
            uint64_t vals[3] = {0, 0, 0};
            for (int i = 0; i < 3; i++)
            {
                if (!col[3 + i].empty() && !ParseU64(col[3 + i], max[i], &vals[i]))
                {
                    Die(kExitUsage, where + "column " + names[i] +
                                        ": expected empty or an integer, got '" + col[3 + i] +
                                        "'");
                }
            }
            ev.cls = static_cast<uint8_t>(vals[0]);
            ev.prec = static_cast<uint8_t>(vals[1]);
            ev.flow = static_cast<uint32_t>(vals[2]);
            if (ops->check_pkt && checked.insert({ev.cls, ev.prec}).second)
            {
                struct qcore_pkt pkt;
                std::memset(&pkt, 0, sizeof(pkt));
                pkt.len = ev.len;
                pkt.cls = ev.cls;
                pkt.prec = ev.prec;
                char err[QCORE_ERRLEN] = "";
                if (ops->check_pkt(params.data(), &pkt, err, sizeof(err)))
                {
                    Die(kExitUsage, where + "column " + err);
                }
            }
        }
        else if (col[1] == "deq")
        {
            for (int i = 2; i < 6; i++)
            {
                if (!col[i].empty())
                {
                    Die(kExitUsage, where + "columns len..flow must be empty on a deq row");
                }
            }
        }
        else
        {
            Die(kExitUsage, where + "column op: expected enq or deq, got '" + col[1] + "'");
        }
        rows.push_back(ev);
    }
    return rows;
}

/**
 * A GoldenQueueDisc running the discipline as its typed queue disc: the
 * object comes from an ObjectFactory of a TypeId derived from
 * ns3::Qlab<Name>QueueDisc, and each parameter is set as the generated
 * attribute, with the attribute's own value type.
 */
Ptr<GoldenQueueDisc>
CreateTyped(const struct qcore_disc_ops* ops,
            const std::vector<std::pair<std::string, std::string>>& assignments,
            uint64_t seed)
{
    TypeId parent;
    if (!QlabQueueDisc::LookupTypedTypeId(ops->name, &parent))
    {
        Die(kExitInconsistent, std::string(ops->name) + ": no typed queue disc");
    }
    const std::string name =
        "ns3::QlabGoldenTyped" + QlabQueueDisc::AttributeName(ops->name) + "QueueDisc";
    const TypeId tid = TypeId(name)
                           .SetParent(parent)
                           .SetGroupName("TrafficControl")
                           .AddConstructor<GoldenQueueDisc>();
    ObjectFactory factory(name);
    for (const auto& [core, value] : assignments)
    {
        const struct qcore_param_desc* d = qcore_params_find(ops, core.c_str());
        const std::string attr = QlabQueueDisc::AttributeName(core);
        uint64_t v = 0;
        switch (d->kind)
        {
        case QCORE_PARAM_U32:
        case QCORE_PARAM_U64:
            ParseU64(value, UINT64_MAX, &v); // the core's parser accepted it
            factory.Set(attr, UintegerValue(v));
            break;
        case QCORE_PARAM_BOOL:
            factory.Set(attr, BooleanValue(value == "1"));
            break;
        default:
            factory.Set(attr, StringValue(value));
            break;
        }
    }
    Ptr<GoldenQueueDisc> disc = DynamicCast<GoldenQueueDisc>(factory.Create());
    if (!disc || disc->GetInstanceTypeId() != tid)
    {
        Die(kExitInconsistent, name + ": the factory did not build a GoldenQueueDisc");
    }
    disc->AssignStreams(static_cast<int64_t>(seed));
    return disc;
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string discipline;
    uint64_t seed = 1;
    std::vector<std::pair<std::string, std::string>> assignments;
    for (int i = 1; i < argc; i++)
    {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h")
        {
            Usage(stdout);
            return 0;
        }
        if (a == "--param" || a == "--seed")
        {
            if (i + 1 == argc)
            {
                Die(kExitUsage, a + " needs a value");
            }
            const std::string v = argv[++i];
            if (a == "--seed")
            {
                if (!ParseU64(v, UINT64_MAX, &seed))
                {
                    Die(kExitUsage, "--seed: expected an integer, got '" + v + "'");
                }
            }
            else
            {
                const std::size_t eq = v.find('=');
                if (eq == std::string::npos || eq == 0)
                {
                    Die(kExitUsage, "--param: expected NAME=VALUE, got '" + v + "'");
                }
                assignments.emplace_back(v.substr(0, eq), v.substr(eq + 1));
            }
        }
        else if (!a.empty() && a[0] == '-')
        {
            Die(kExitUsage, "unknown option '" + a + "'");
        }
        else if (!discipline.empty())
        {
            Die(kExitUsage, "unexpected argument '" + a + "' (one discipline only)");
        }
        else
        {
            discipline = a;
        }
    }
    if (discipline.empty())
    {
        Usage(stderr);
        return kExitUsage;
    }
    const struct qcore_disc_ops* ops = qcore_find(discipline.c_str());
    if (!ops)
    {
        Die(kExitUsage, "unknown discipline '" + discipline + "' (qcore-replay --list)");
    }
    std::vector<struct qcore_param_value> values;
    for (const auto& [name, value] : assignments)
    {
        values.push_back(ParseParam(ops, name, value));
    }
    const std::vector<EventRow> rows = ReadEvents(ops, Configure(ops, values));

    Ptr<GoldenQueueDisc> disc = CreateTyped(ops, assignments, seed);
    disc->Initialize();

    Golden golden(disc);
    for (const EventRow& ev : rows)
    {
        if (ev.enq)
        {
            Simulator::Schedule(NanoSeconds(static_cast<int64_t>(ev.t)), &Golden::Enqueue, &golden,
                                ev);
        }
        else
        {
            Simulator::Schedule(NanoSeconds(static_cast<int64_t>(ev.t)), &Golden::Dequeue,
                                &golden, ev.t);
        }
    }
    Simulator::Run();
    const std::string& out = golden.Output();
    if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0)
    {
        Die(1, "writing decisions: write error");
    }
    disc->Dispose();
    Simulator::Destroy();
    return 0;
}
