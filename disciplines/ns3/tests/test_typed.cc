/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_typed - checks of the typed queue discs ns3::Qlab<Name>QueueDisc that
 * QlabQueueDisc generates from the core's parameter tables:
 *   - every discipline of qcore_disciplines[] has its TypeId, a child of
 *     ns3::QlabQueueDisc with a constructor;
 *   - its own attributes are exactly the core's parameters, 1:1 by the
 *     naming rule, with the core's default, help and unit, and the value
 *     type of the parameter's kind;
 *   - valid values are taken and read back; invalid ones (integers out of
 *     range, malformed or out-of-range decimals, unknown enum choices, bad
 *     lists) are refused and leave the value unchanged;
 *   - refusals stop a program with a message naming the parameter (run in
 *     a child process: NS_FATAL_ERROR aborts);
 *   - defaults configure every discipline; Config::SetDefault works;
 *   - per-band / per-reason statistics, and the ToS -> cls mapping;
 *   - what the core is given (the "Classified" trace): qcore_flow_hash of
 *     the 5-tuple (0 for disciplines that ignore it), the pure-ACK flag, ECT
 *     from the ECN field; qcore_mark_fallback (RED with ecn: an ECT packet
 *     is marked, a Not-ECT one dropped as aqm); AssignStreams seeds the core.
 * The golden vectors go through the typed queue discs in
 * tests/test_golden.sh (qlab-ns3-golden).
 *
 * Prints one line per check and "N passed, N failed"; exit 1 on failure.
 */
#include "qlab-queue-disc.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/core-module.h"
#include "ns3/ipv4-header.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/network-module.h"
#include "ns3/tcp-header.h"
#include "ns3/udp-header.h"

#include <cstdio>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>


using namespace ns3;

namespace
{

int g_passed = 0;
int g_failed = 0;

void
Report(bool ok, const std::string& name, const std::string& detail = "")
{
    if (ok)
    {
        g_passed++;
        std::printf("ok   %s\n", name.c_str());
    }
    else
    {
        g_failed++;
        std::printf("FAIL %s%s%s\n", name.c_str(), detail.empty() ? "" : ": ", detail.c_str());
    }
    std::fflush(stdout);
}

/// Run fn in a child process; return its stderr and whether it died abnormally.
std::string
RunChild(const std::function<void()>& fn, bool* aborted)
{
    std::fflush(stdout);
    std::fflush(stderr);
    int fds[2];
    if (pipe(fds) != 0)
    {
        *aborted = false;
        return "pipe failed";
    }
    const pid_t pid = fork();
    if (pid == 0)
    {
        struct rlimit nocore = {0, 0};
        setrlimit(RLIMIT_CORE, &nocore);
        close(fds[0]);
        dup2(fds[1], 2);
        fn();
        std::fflush(stderr);
        _exit(0);
    }
    close(fds[1]);
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof(buf))) > 0)
    {
        out.append(buf, static_cast<std::size_t>(n));
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    *aborted = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return out;
}

bool
Contains(const std::string& s, const std::string& part)
{
    return s.find(part) != std::string::npos;
}

std::string
Ppm(uint64_t v)
{
    char buf[32];
    qcore_fmt_ppm(buf, sizeof(buf), static_cast<uint32_t>(v));
    return buf;
}

/// The core's default text as the attribute's initial value serializes it.
std::string
ExpectedInitial(const struct qcore_param_desc* d)
{
    if (d->kind == QCORE_PARAM_BOOL)
    {
        return std::strcmp(d->dflt, "1") == 0 ? "true" : "false";
    }
    return d->dflt;
}

std::string
ExpectedValueType(const struct qcore_param_desc* d)
{
    switch (d->kind)
    {
    case QCORE_PARAM_U32:
    case QCORE_PARAM_U64:
        return "ns3::UintegerValue";
    case QCORE_PARAM_BOOL:
        return "BooleanValue"; // sic: ns-3 3.37's boolean checker
    default:
        return "ns3::StringValue";
    }
}

std::string
GetText(Ptr<QlabQueueDisc> disc, const std::string& attr)
{
    StringValue v;
    disc->GetAttribute(attr, v);
    return v.Get();
}

/// Values of the parameter's attribute type that must be accepted / refused.
struct Probe
{
    std::string label;
    Ptr<AttributeValue> value;
    std::string readBack; // accepted values: GetAttribute as text
};

std::vector<Probe>
ValidProbes(const struct qcore_param_desc* d)
{
    std::vector<Probe> p;
    switch (d->kind)
    {
    case QCORE_PARAM_U32:
    case QCORE_PARAM_U64:
        p.push_back({"min", Create<UintegerValue>(d->min), std::to_string(d->min)});
        p.push_back({"max", Create<UintegerValue>(d->max), std::to_string(d->max)});
        break;
    case QCORE_PARAM_BOOL:
        p.push_back({"true", Create<BooleanValue>(true), "true"});
        p.push_back({"false", Create<BooleanValue>(false), "false"});
        break;
    case QCORE_PARAM_PPM:
        p.push_back({"min", Create<StringValue>(Ppm(d->min)), Ppm(d->min)});
        p.push_back({"max", Create<StringValue>(Ppm(d->max)), Ppm(d->max)});
        break;
    case QCORE_PARAM_ENUM: {
        std::string choices = d->choices;
        std::size_t pos = 0;
        while (true)
        {
            const std::size_t bar = choices.find('|', pos);
            const std::string c = choices.substr(pos, bar - pos);
            p.push_back({c, Create<StringValue>(c), c});
            if (bar == std::string::npos)
            {
                break;
            }
            pos = bar + 1;
        }
        break;
    }
    case QCORE_PARAM_U32_LIST: {
        const std::string one = std::to_string(d->max);
        const std::string two = std::to_string(d->min) + ":" + std::to_string(d->max);
        p.push_back({"one value", Create<StringValue>(one), one});
        p.push_back({"list", Create<StringValue>(two), two});
        break;
    }
    }
    return p;
}

std::vector<Probe>
InvalidProbes(const struct qcore_param_desc* d)
{
    std::vector<Probe> p;
    switch (d->kind)
    {
    case QCORE_PARAM_U32:
    case QCORE_PARAM_U64:
        if (d->max < (d->kind == QCORE_PARAM_U32 ? UINT32_MAX : UINT64_MAX))
        {
            p.push_back({"max+1", Create<UintegerValue>(d->max + 1), ""});
        }
        if (d->min > 0)
        {
            p.push_back({"min-1", Create<UintegerValue>(d->min - 1), ""});
        }
        // (not text such as "x": ns-3's UintegerValue aborts on it by itself)
        break;
    case QCORE_PARAM_BOOL:
        p.push_back({"text 'maybe'", Create<StringValue>("maybe"), ""});
        break;
    case QCORE_PARAM_PPM:
        p.push_back({"'1e-3'", Create<StringValue>("1e-3"), ""});
        p.push_back({"'-0.1'", Create<StringValue>("-0.1"), ""});
        p.push_back({"7 places", Create<StringValue>("0.0000001"), ""});
        p.push_back({"'.5'", Create<StringValue>(".5"), ""});
        if (d->max < UINT32_MAX)
        {
            p.push_back({"max+1ppm", Create<StringValue>(Ppm(d->max + 1)), ""});
        }
        if (d->min > 0)
        {
            p.push_back({"min-1ppm", Create<StringValue>(Ppm(d->min - 1)), ""});
        }
        break;
    case QCORE_PARAM_ENUM:
        p.push_back({"unknown choice", Create<StringValue>("bogus"), ""});
        p.push_back({"empty", Create<StringValue>(""), ""});
        break;
    case QCORE_PARAM_U32_LIST:
        p.push_back({"'1::2'", Create<StringValue>("1::2"), ""});
        p.push_back({"empty", Create<StringValue>(""), ""});
        p.push_back({"9 values", Create<StringValue>("1:1:1:1:1:1:1:1:1"), ""});
        p.push_back({"max+1", Create<StringValue>(std::to_string(d->max + 1)), ""});
        break;
    }
    return p;
}

Ptr<QlabQueueDisc>
MakeTyped(const std::string& discipline)
{
    TypeId tid;
    NS_ABORT_UNLESS(QlabQueueDisc::LookupTypedTypeId(discipline, &tid));
    ObjectFactory f;
    f.SetTypeId(tid);
    return DynamicCast<QlabQueueDisc>(f.Create());
}

// ---- per discipline ---------------------------------------------------------

void
CheckDiscipline(const struct qcore_disc_ops* ops)
{
    const std::string disc = ops->name;
    const std::string name = QlabQueueDisc::TypedTypeIdName(disc);

    TypeId tid;
    const bool found = TypeId::LookupByNameFailSafe(name, &tid);
    TypeId viaLookup;
    Report(found && tid.GetParent() == QlabQueueDisc::GetTypeId() && tid.HasConstructor() &&
               QlabQueueDisc::LookupTypedTypeId(disc, &viaLookup) && viaLookup == tid,
           disc + ": TypeId " + name + " registered, child of ns3::QlabQueueDisc");
    if (!found)
    {
        return;
    }

    // Own attributes == the core's table, 1:1.
    std::string problems;
    if (tid.GetAttributeN() != ops->nparams)
    {
        problems += " " + std::to_string(tid.GetAttributeN()) + " attributes for " +
                    std::to_string(ops->nparams) + " parameters;";
    }
    for (uint32_t j = 0; j < ops->nparams; j++)
    {
        const struct qcore_param_desc* d = &ops->params[j];
        const std::string attr = QlabQueueDisc::AttributeName(d->name);
        if (j < tid.GetAttributeN() && tid.GetAttribute(j).name != attr)
        {
            problems += " attribute " + std::to_string(j) + " is " + tid.GetAttribute(j).name +
                        ", not " + attr + ";";
        }
        if (QlabQueueDisc::CoreParamName(attr) != d->name)
        {
            problems += " " + attr + " does not map back to " + d->name + ";";
        }
        TypeId::AttributeInformation info;
        if (!tid.LookupAttributeByName(attr, &info))
        {
            problems += " no attribute " + attr + ";";
            continue;
        }
        if (!Contains(info.help, d->help) || !Contains(info.help, d->unit))
        {
            problems += " " + attr + " help lacks the core's help or unit;";
        }
        const std::string initial = info.initialValue->SerializeToString(info.checker);
        if (initial != ExpectedInitial(d))
        {
            problems += " " + attr + " initial '" + initial + "', core default '" + d->dflt + "';";
        }
        if (info.checker->GetValueTypeName() != ExpectedValueType(d))
        {
            problems += " " + attr + " is a " + info.checker->GetValueTypeName() + ";";
        }
    }
    Report(problems.empty(),
           disc + ": " + std::to_string(ops->nparams) +
               " attributes = the core's parameters (name, default, help, unit, type)",
           problems);

    // Defaults configure the discipline.
    Ptr<QlabQueueDisc> q = MakeTyped(disc);
    q->Initialize();
    std::vector<uint64_t> params(ops->params_size / 8 + 2, 0);
    char err[QCORE_ERRLEN];
    qcore_params_defaults(ops, params.data(), err, sizeof(err));
    std::string readBack;
    for (uint32_t j = 0; j < ops->nparams; j++)
    {
        const struct qcore_param_desc* d = &ops->params[j];
        const std::string v = GetText(q, QlabQueueDisc::AttributeName(d->name));
        if (v != ExpectedInitial(d))
        {
            readBack += " " + std::string(d->name) + "=" + v;
        }
    }
    Report(q->GetDisciplineName() == disc && q->GetNBands() == ops->nbands(params.data()) &&
               readBack.empty(),
           disc + ": defaults initialise (" + std::to_string(q->GetNBands()) + " bands)",
           readBack);
    q->Dispose();

    // Valid values are taken, invalid ones refused and the value kept.
    std::string bad;
    int nValid = 0, nInvalid = 0;
    Ptr<QlabQueueDisc> s = MakeTyped(disc);
    for (uint32_t j = 0; j < ops->nparams; j++)
    {
        const struct qcore_param_desc* d = &ops->params[j];
        const std::string attr = QlabQueueDisc::AttributeName(d->name);
        for (const Probe& p : ValidProbes(d))
        {
            nValid++;
            if (!s->SetAttributeFailSafe(attr, *p.value) || GetText(s, attr) != p.readBack)
            {
                bad += " " + attr + " " + p.label + " refused or not read back;";
            }
        }
        const std::string before = GetText(s, attr);
        for (const Probe& p : InvalidProbes(d))
        {
            nInvalid++;
            if (s->SetAttributeFailSafe(attr, *p.value) || GetText(s, attr) != before)
            {
                bad += " " + attr + " " + p.label + " accepted;";
            }
        }
    }
    Report(bad.empty(),
           disc + ": " + std::to_string(nValid) + " valid values taken, " +
               std::to_string(nInvalid) + " invalid refused",
           bad);
}

// ---- messages ---------------------------------------------------------------

void
CheckMessage(const std::string& label,
             const std::function<void()>& fn,
             const std::vector<std::string>& needles)
{
    bool aborted = false;
    const std::string err = RunChild(fn, &aborted);
    std::string missing;
    for (const std::string& n : needles)
    {
        if (!Contains(err, n))
        {
            missing += " '" + n + "'";
        }
    }
    Report(aborted && missing.empty(),
           label,
           std::string(aborted ? "" : "not refused;") +
               (missing.empty() ? "" : " message lacks" + missing + ": " + err));
}

void
CheckMessages()
{
    CheckMessage(
        "SetAttribute Thresh '1e-3' (malformed decimal) names Thresh and thresh",
        [] { MakeTyped("ncq")->SetAttribute("Thresh", StringValue("1e-3")); },
        {"Thresh", "thresh: expected a decimal with at most 6 places between 0 and 1"});
    CheckMessage(
        "SetAttribute Thresh '1.5' (out of range) names Thresh",
        [] { MakeTyped("ncq")->SetAttribute("Thresh", StringValue("1.5")); },
        {"Thresh", "got '1.5'"});
    CheckMessage(
        "factory SizeBytes 65536 (out of range) names SizeBytes",
        [] {
            ObjectFactory f("ns3::QlabNcqQueueDisc");
            f.Set("SizeBytes", UintegerValue(65536));
        },
        {"SizeBytes"});
    CheckMessage(
        "factory Variant 'bogus' (unknown choice) names Variant and the choices",
        [] {
            ObjectFactory f("ns3::QlabNcqQueueDisc");
            f.Set("Variant", StringValue("bogus"));
        },
        {"Variant", "variant: expected one of journal|conf-literal"});
    CheckMessage(
        "factory WeightsBytes '1::2' (bad list) names WeightsBytes",
        [] {
            ObjectFactory f("ns3::QlabWredQueueDisc");
            f.Set("WeightsBytes", StringValue("1::2"));
        },
        {"WeightsBytes", "weights_bytes: expected"});
    CheckMessage(
        "cross-parameter rule at initialisation: core message + attribute names",
        [] {
            Ptr<QlabQueueDisc> q = MakeTyped("cqaqm");
            q->SetAttribute("THighLocal", UintegerValue(60)); // > BHigh = 50
            q->Initialize();
        },
        {"ns3::QlabCqaqmQueueDisc", "t_high_local", "THighLocal"});
    CheckMessage(
        "ns3::QlabQueueDisc itself runs no discipline",
        [] { CreateObject<QlabQueueDisc>()->Initialize(); },
        {"ns3::QlabQueueDisc runs no discipline", "ns3::QlabNcqQueueDisc"});
    CheckMessage(
        "ns3::QlabQueueDisc has no constructor for ObjectFactory",
        [] { ObjectFactory("ns3::QlabQueueDisc").Create(); },
        {"QlabQueueDisc"});

    // Not a refusal: a valid typed configuration initialises silently.
    bool aborted = true;
    const std::string err = RunChild(
        [] {
            ObjectFactory f("ns3::QlabNcqQueueDisc");
            f.Set("SizeBytes", UintegerValue(141));
            f.Set("Thresh", StringValue("0.05"));
            f.Set("FavorAcks", BooleanValue(true));
            f.Set("Mode", StringValue("probabilistic"));
            f.Create<QueueDisc>()->Initialize();
        },
        &aborted);
    Report(!aborted && err.empty(), "a valid typed configuration initialises silently", err);
}

// ---- Config, statistics, ToS --------------------------------------------------

Ptr<Ipv4QueueDiscItem>
Packet(uint32_t ipLen, uint8_t tos)
{
    Ipv4Header h;
    h.SetTos(tos);
    h.SetPayloadSize(ipLen - 20);
    h.SetProtocol(17);
    return Create<Ipv4QueueDiscItem>(Create<ns3::Packet>(ipLen - 20), Address(), 0x0800, h);
}

void
CheckConfigAndStats()
{
    // Config::SetDefault on a generated attribute, then back.
    const bool refused =
        !Config::SetDefaultFailSafe("ns3::QlabNcqQueueDisc::Thresh", StringValue("2"));
    const bool set = Config::SetDefaultFailSafe("ns3::QlabNcqQueueDisc::Thresh",
                                                StringValue("0.125"));
    const std::string got = GetText(MakeTyped("ncq"), "Thresh");
    Config::SetDefault("ns3::QlabNcqQueueDisc::Thresh", StringValue("0.05"));
    Report(refused && set && got == "0.125" && GetText(MakeTyped("ncq"), "Thresh") == "0.05",
           "Config::SetDefault on a generated attribute (invalid refused)",
           "got " + got);

    // Droptail limit 2: overflow drops counted per band and reason, and
    // reported by QueueDisc::GetStats under the core's reason name.
    Ptr<QlabQueueDisc> dt = MakeTyped("droptail");
    dt->SetAttribute("LimitPkts", UintegerValue(2));
    dt->Initialize();
    for (int i = 0; i < 3; i++)
    {
        dt->Enqueue(Packet(100, 0));
    }
    dt->Dequeue();
    const QlabQueueDisc::BandCounters& c = dt->GetBandCounters(0);
    std::ostringstream os;
    dt->PrintStats(os);
    const std::string printed = os.str();
    Report(c.enqueuedPkts == 2 && c.dequeuedPkts == 1 && c.droppedPkts == 1 &&
               c.droppedByReason[QCORE_REASON_OVERFLOW] == 1 && c.markedPkts == 0 &&
               dt->GetBandBacklogPkts(0) == 1 &&
               dt->GetStats().GetNDroppedPackets(QlabQueueDisc::OVERFLOW_DROP) == 1 &&
               std::string(QlabQueueDisc::GetReasonName(QCORE_REASON_OVERFLOW)) == "overflow" &&
               Contains(printed, "band 0: backlog 1 packets 100 bytes, enqueued 2, dequeued 1, "
                                 "marked 0, dropped 1 (overflow 1)") &&
               Contains(printed, "overflow"),
           "per-band/per-reason counters, GetStats reason names, PrintStats",
           printed);
    dt->Dispose();

    // ToS -> cls: prio with 4 bands puts ToS cls<<5 in band cls.
    Ptr<QlabQueueDisc> pr = MakeTyped("prio");
    pr->SetAttribute("Bands", UintegerValue(4));
    pr->Initialize();
    for (uint8_t cls = 0; cls < 4; cls++)
    {
        for (uint8_t k = 0; k <= cls; k++)
        {
            pr->Enqueue(Packet(60, static_cast<uint8_t>(cls << 5 | 1 << 3)));
        }
    }
    bool tosOk = true;
    for (uint32_t b = 0; b < 4; b++)
    {
        tosOk = tosOk && pr->GetBandCounters(b).enqueuedPkts == b + 1;
    }
    Report(tosOk, "ToS >> 5 selects prio's band (ToS = cls << 5 | prec << 3)");
    pr->Dispose();
}

// ---- what the core is given -------------------------------------------------------

/// An IPv4 packet with a real TCP (flags) or UDP header, as a queue disc sees it.
Ptr<Ipv4QueueDiscItem>
L4Packet(uint8_t proto,
         const char* src,
         const char* dst,
         uint16_t sport,
         uint16_t dport,
         uint32_t payloadBytes,
         uint8_t tcpFlags,
         uint8_t tos)
{
    Ptr<ns3::Packet> p = Create<ns3::Packet>(payloadBytes);
    if (proto == 6)
    {
        TcpHeader t;
        t.SetSourcePort(sport);
        t.SetDestinationPort(dport);
        t.SetFlags(tcpFlags);
        p->AddHeader(t);
    }
    else if (proto == 17)
    {
        UdpHeader u;
        u.SetSourcePort(sport);
        u.SetDestinationPort(dport);
        p->AddHeader(u);
    }
    Ipv4Header h;
    h.SetSource(Ipv4Address(src));
    h.SetDestination(Ipv4Address(dst));
    h.SetProtocol(proto);
    h.SetPayloadSize(p->GetSize());
    h.SetTos(tos);
    return Create<Ipv4QueueDiscItem>(p, Address(), 0x0800, h);
}

std::vector<struct qcore_pkt> g_classified;

void
OnClassified(Ptr<const QueueDiscItem>, const struct qcore_pkt* pkt)
{
    g_classified.push_back(*pkt);
}

/// The metadata the core was given for one packet through a typed queue disc.
struct qcore_pkt
CoreInput(const std::string& discipline, Ptr<Ipv4QueueDiscItem> item)
{
    Ptr<QlabQueueDisc> q = MakeTyped(discipline);
    q->TraceConnectWithoutContext("Classified", MakeCallback(&OnClassified));
    q->Initialize();
    g_classified.clear();
    q->Enqueue(item);
    q->Dispose();
    NS_ABORT_UNLESS(g_classified.size() == 1);
    return g_classified[0];
}

void
CheckClassify()
{
    // The flow hash: qcore_flow_hash of the 5-tuple in host byte order, for
    // a discipline that reads it (S-RD); 0 for one that ignores it.
    const uint32_t s = Ipv4Address("10.1.0.7").Get();
    const uint32_t d = Ipv4Address("10.2.3.4").Get();
    const uint32_t tcpHash = CoreInput("srd", L4Packet(6, "10.1.0.7", "10.2.3.4", 10003, 5002, 100,
                                                       TcpHeader::ACK, 0))
                                 .flow_hash;
    const uint32_t udpHash =
        CoreInput("srd", L4Packet(17, "10.1.0.7", "10.2.3.4", 10003, 5002, 100, 0, 0)).flow_hash;
    const uint32_t icmpHash =
        CoreInput("srd", L4Packet(1, "10.1.0.7", "10.2.3.4", 0, 0, 100, 0, 0)).flow_hash;
    const uint32_t ignored = CoreInput("droptail", L4Packet(6, "10.1.0.7", "10.2.3.4", 10003,
                                                            5002, 100, TcpHeader::ACK, 0))
                                 .flow_hash;
    Report(tcpHash == qcore_flow_hash(s, d, 10003, 5002, 6) &&
               udpHash == qcore_flow_hash(s, d, 10003, 5002, 17) &&
               icmpHash == qcore_flow_hash(s, d, 0, 0, 1) && tcpHash != udpHash && ignored == 0,
           "flow_hash = qcore_flow_hash(5-tuple) for srd (TCP, UDP, ports 0 otherwise), 0 for "
           "droptail (QCORE_IGNORES_FLOW_HASH)",
           "tcp " + std::to_string(tcpHash) + " udp " + std::to_string(udpHash));

    // Pure ACK: the ACK flag, no SYN/FIN/RST, no payload.
    auto flags = [](uint32_t payload, uint8_t tcpFlags) {
        return CoreInput("ncq", L4Packet(6, "10.1.0.1", "10.2.0.1", 10000, 5001, payload,
                                         tcpFlags, 0))
            .flags;
    };
    Report((flags(0, TcpHeader::ACK) & QCORE_PKT_PURE_ACK) &&
               !(flags(100, TcpHeader::ACK) & QCORE_PKT_PURE_ACK) &&
               !(flags(0, TcpHeader::ACK | TcpHeader::SYN) & QCORE_PKT_PURE_ACK) &&
               !(flags(0, TcpHeader::ACK | TcpHeader::FIN) & QCORE_PKT_PURE_ACK) &&
               !(flags(0, 0) & QCORE_PKT_PURE_ACK),
           "QCORE_PKT_PURE_ACK: ACK without payload, SYN, FIN or RST only");

    // qcore_pkt_set_tos: cls, prec and ECT from the ToS byte.
    const struct qcore_pkt ect =
        CoreInput("prio", L4Packet(17, "10.1.0.1", "10.2.0.1", 1, 2, 10, 0, 0x20 | 0x10 | 0x02));
    const struct qcore_pkt notEct =
        CoreInput("prio", L4Packet(17, "10.1.0.1", "10.2.0.1", 1, 2, 10, 0, 0x28));
    Report(ect.cls == 1 && ect.prec == 2 && (ect.flags & QCORE_PKT_ECT) && notEct.cls == 1 &&
               notEct.prec == 1 && !(notEct.flags & QCORE_PKT_ECT),
           "qcore_pkt_set_tos: cls, prec and QCORE_PKT_ECT from the ToS byte");

    // qcore_mark_fallback: RED with ecn marks an ECT packet where it drops a
    // Not-ECT one (aqm), with identical decisions up to that arrival.
    auto redRun = [](uint8_t tos, int* firstEvent, bool* marked, bool* aqmDropped) {
        Ptr<QlabQueueDisc> q = MakeTyped("red");
        q->SetAttribute("WQ", StringValue("1"));
        q->SetAttribute("MinPkts", UintegerValue(2));
        q->SetAttribute("MaxPkts", UintegerValue(6));
        q->SetAttribute("MaxP", StringValue("0.5"));
        q->SetAttribute("Ecn", BooleanValue(true));
        q->AssignStreams(7);
        q->Initialize();
        *firstEvent = -1;
        for (int i = 0; i < 30 && *firstEvent < 0; i++)
        {
            q->Enqueue(L4Packet(17, "10.1.0.1", "10.2.0.1", 1, 2, 972, 0, tos));
            const QlabQueueDisc::BandCounters& c = q->GetBandCounters(0);
            if (c.markedPkts || c.droppedPkts)
            {
                *firstEvent = i;
                *marked = c.markedPkts == 1 && c.droppedPkts == 0;
                *aqmDropped = c.droppedByReason[QCORE_REASON_AQM] == 1 && c.markedPkts == 0;
            }
        }
        q->Dispose();
    };
    int firstEct = -1;
    int firstNotEct = -1;
    bool ectMarked = false;
    bool ectDropped = false;
    bool notEctMarked = false;
    bool notEctDropped = false;
    redRun(0x02, &firstEct, &ectMarked, &ectDropped);
    redRun(0x00, &firstNotEct, &notEctMarked, &notEctDropped);
    Report(firstEct >= 0 && firstEct == firstNotEct && ectMarked && notEctDropped,
           "qcore_mark_fallback: RED ecn=1 marks an ECT packet, drops a Not-ECT one (aqm)",
           "first event " + std::to_string(firstEct) + "/" + std::to_string(firstNotEct));
}

} // namespace

int
main()
{
    uint32_t n = 0;
    for (; qcore_disciplines[n]; n++)
    {
        CheckDiscipline(qcore_disciplines[n]);
    }
    Report(n == 9, "the registry has the nine disciplines (" + std::to_string(n) + ")");
    Report(QlabQueueDisc::AttributeName("size_bytes") == "SizeBytes" &&
               QlabQueueDisc::AttributeName("t_high_local") == "THighLocal" &&
               QlabQueueDisc::AttributeName("k") == "K" &&
               QlabQueueDisc::CoreParamName("UPpm") == "u_ppm" &&
               QlabQueueDisc::TypedTypeIdName("ncq") == "ns3::QlabNcqQueueDisc",
           "naming rule examples");
    CheckMessages();
    CheckConfigAndStats();
    CheckClassify();
    Simulator::Destroy();
    std::printf("%d passed, %d failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
