/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-plan.cc - reading and checking a resolved plan (see qlab-plan.h).
 */
#include "qlab-plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <tuple>
#include <unordered_map>

namespace qlab
{

namespace
{

using json = nlohmann::json;

const char* const kSchema = "qlab-plan/1";
const char* const kLossless = "lossless";
constexpr uint64_t kMaxNs = 9000000000000000000ULL;
constexpr uint64_t kMaxRateBps = 1000000000000ULL;
constexpr uint64_t kMaxDelayNs = 1000000000000ULL;
constexpr uint32_t kMaxSegBytes = 65000;
constexpr uint32_t kMaxUdpIpBytes = 65507;
constexpr uint32_t kMinUdpIpBytes = kUdpHeaderBytes + 12; // + sequence number and send time
constexpr uint8_t kProtoTcp = 6;
constexpr uint8_t kProtoUdp = 17;

std::string
Join(const std::string& path, const std::string& key)
{
    return path.empty() ? key : path + "." + key;
}

std::string
Index(const std::string& path, std::size_t i)
{
    return path + "[" + std::to_string(i) + "]";
}

void
ExpectObject(const json& obj, const std::string& path)
{
    if (!obj.is_object())
    {
        throw PlanError((path.empty() ? std::string("plan") : path) + ": expected an object");
    }
}

const json&
Field(const json& obj, const std::string& path, const char* key)
{
    ExpectObject(obj, path);
    auto it = obj.find(key);
    if (it == obj.end())
    {
        throw PlanError(Join(path, key) + ": missing");
    }
    return *it;
}

const json&
Array(const json& obj, const std::string& path, const char* key)
{
    const json& v = Field(obj, path, key);
    if (!v.is_array())
    {
        throw PlanError(Join(path, key) + ": expected an array");
    }
    return v;
}

std::string
String(const json& obj, const std::string& path, const char* key)
{
    const json& v = Field(obj, path, key);
    if (!v.is_string())
    {
        throw PlanError(Join(path, key) + ": expected a string, got " + v.dump());
    }
    return v.get<std::string>();
}

bool
Bool(const json& obj, const std::string& path, const char* key)
{
    const json& v = Field(obj, path, key);
    if (!v.is_boolean())
    {
        throw PlanError(Join(path, key) + ": expected true or false, got " + v.dump());
    }
    return v.get<bool>();
}

/// An integer JSON value in [lo, hi] (a float with an integral value, 1e7, too).
uint64_t
UintValue(const json& v, const std::string& where, uint64_t lo, uint64_t hi)
{
    uint64_t value = 0;
    const std::string range = "an integer between " + std::to_string(lo) + " and " +
                              std::to_string(hi) + ", got " + v.dump();
    if (v.is_number_unsigned())
    {
        value = v.get<uint64_t>();
    }
    else if (v.is_number_integer())
    {
        throw PlanError(where + ": expected " + range);
    }
    else if (v.is_number_float())
    {
        const double d = v.get<double>();
        if (!std::isfinite(d) || d < 0 || d != std::floor(d) || d >= 1.8446744073709552e19)
        {
            throw PlanError(where + ": expected " + range);
        }
        value = static_cast<uint64_t>(d);
    }
    else
    {
        throw PlanError(where + ": expected " + range);
    }
    if (value < lo || value > hi)
    {
        throw PlanError(where + ": expected " + range);
    }
    return value;
}

uint64_t
Uint(const json& obj, const std::string& path, const char* key, uint64_t lo, uint64_t hi)
{
    return UintValue(Field(obj, path, key), Join(path, key), lo, hi);
}

int64_t
Ns(const json& obj, const std::string& path, const char* key, uint64_t lo = 0)
{
    return static_cast<int64_t>(Uint(obj, path, key, lo, kMaxNs));
}

/// "a.b.c.d" as a host-order address; false when malformed.
bool
ParseIpv4(const std::string& text, uint32_t* out)
{
    uint32_t address = 0;
    std::size_t pos = 0;
    for (int part = 0; part < 4; part++)
    {
        std::size_t end = pos;
        uint32_t v = 0;
        while (end < text.size() && end - pos < 4 && text[end] >= '0' && text[end] <= '9')
        {
            v = v * 10 + static_cast<uint32_t>(text[end] - '0');
            end++;
        }
        const std::size_t digits = end - pos;
        if (digits == 0 || digits > 3 || v > 255 || (digits > 1 && text[pos] == '0'))
        {
            return false;
        }
        address = address << 8 | v;
        pos = end;
        if (part < 3)
        {
            if (pos >= text.size() || text[pos] != '.')
            {
                return false;
            }
            pos++;
        }
    }
    if (pos != text.size())
    {
        return false;
    }
    *out = address;
    return true;
}

uint32_t
Ipv4(const json& obj, const std::string& path, const char* key)
{
    const std::string text = String(obj, path, key);
    uint32_t address = 0;
    if (!ParseIpv4(text, &address))
    {
        throw PlanError(Join(path, key) + ": expected an IPv4 address a.b.c.d, got \"" + text +
                        "\"");
    }
    return address;
}

uint32_t
Mask(uint8_t len)
{
    return len == 0 ? 0 : ~uint32_t(0) << (32 - len);
}

/// "a.b.c.d/len" with no host bits set.
void
Cidr(const json& obj, const std::string& path, const char* key, uint32_t* net, uint8_t* len)
{
    const std::string text = String(obj, path, key);
    const std::size_t slash = text.find('/');
    const std::string where = Join(path, key);
    uint32_t address = 0;
    if (slash == std::string::npos || !ParseIpv4(text.substr(0, slash), &address) ||
        slash + 1 == text.size() || text.size() - slash - 1 > 2 ||
        text.find_first_not_of("0123456789", slash + 1) != std::string::npos)
    {
        throw PlanError(where + ": expected an IPv4 prefix a.b.c.d/len, got \"" + text + "\"");
    }
    const int bits = std::stoi(text.substr(slash + 1));
    if (bits > 32)
    {
        throw PlanError(where + ": prefix length " + std::to_string(bits) + " is above 32");
    }
    *len = static_cast<uint8_t>(bits);
    if (address & ~Mask(*len))
    {
        throw PlanError(where + ": \"" + text + "\" has host bits set");
    }
    *net = address;
}

void
OnlyKeys(const json& obj, const std::string& path, std::initializer_list<const char*> keys)
{
    for (const auto& [key, value] : obj.items())
    {
        if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return key == k; }))
        {
            throw PlanError(Join(path, key) + ": not a field of this queue kind");
        }
    }
}

/// How a parameter of one of ns-3's own queue discs becomes its attribute's text.
enum class Ns3Value
{
    PACKETS, //!< integer -> QueueSize "<n>p"
    TIME_NS, //!< integer -> Time "<n>ns"
    UINT,    //!< integer
    DOUBLE,  //!< number
    BOOL,    //!< true/false
    QUANTUM, //!< integer, set by FqCoDelQueueDisc::SetQuantum (not an attribute)
};

/// A parameter of an ns3-* kind: the plan's name, ns-3's attribute, its range.
struct Ns3Param
{
    const char* name;
    const char* attribute;
    Ns3Value value;
    double lo;
    double hi;
};

/**
 * ns-3's own queue discs, the plan's ns3-* kinds (docs/job.schema.json,
 * $defs/queue_ns3-*, where each parameter is described; the ranges here are
 * that schema's).  `fixed` are attributes qlab always sets the same way
 * (documented in disciplines/ns3/README.md): ECN is off because qlab's flows
 * are not ECN-capable, and a disc that drops instead of marking then does
 * exactly what it would do for them anyway.
 */
struct Ns3Kind
{
    const char* kind;
    const char* typeId;
    std::vector<std::pair<const char*, const char*>> fixed;
    std::vector<Ns3Param> params;
};

constexpr double kMaxPkts = 1000000;
constexpr double kMaxTimeNs = 1e12;

const std::vector<Ns3Kind>&
Ns3Kinds()
{
    static const std::vector<Ns3Kind> kinds = {
        {"ns3-fifo", "ns3::FifoQueueDisc", {}, {{"limit_pkts", "MaxSize", Ns3Value::PACKETS, 1, kMaxPkts}}},
        {"ns3-codel",
         "ns3::CoDelQueueDisc",
         {{"UseEcn", "false"}, {"UseL4s", "false"}},
         {{"limit_pkts", "MaxSize", Ns3Value::PACKETS, 1, kMaxPkts},
          {"target_ns", "Target", Ns3Value::TIME_NS, 1, kMaxTimeNs},
          {"interval_ns", "Interval", Ns3Value::TIME_NS, 1, kMaxTimeNs},
          {"min_bytes", "MinBytes", Ns3Value::UINT, 1, 1000000}}},
        {"ns3-fq-codel",
         "ns3::FqCoDelQueueDisc",
         {{"UseEcn", "false"}, {"UseL4s", "false"}, {"Perturbation", "0"},
          {"EnableSetAssociativeHash", "false"}},
         {{"limit_pkts", "MaxSize", Ns3Value::PACKETS, 1, kMaxPkts},
          {"flows", "Flows", Ns3Value::UINT, 1, 65536},
          {"quantum_bytes", nullptr, Ns3Value::QUANTUM, 1, 1000000},
          {"target_ns", "Target", Ns3Value::TIME_NS, 1, kMaxTimeNs},
          {"interval_ns", "Interval", Ns3Value::TIME_NS, 1, kMaxTimeNs},
          {"drop_batch_pkts", "DropBatchSize", Ns3Value::UINT, 1, 65536}}},
        {"ns3-pie",
         "ns3::PieQueueDisc",
         {{"UseEcn", "false"}, {"UseL4s", "false"}},
         {{"limit_pkts", "MaxSize", Ns3Value::PACKETS, 1, kMaxPkts},
          {"target_ns", "QueueDelayReference", Ns3Value::TIME_NS, 1, kMaxTimeNs},
          {"tupdate_ns", "Tupdate", Ns3Value::TIME_NS, 1, kMaxTimeNs},
          {"alpha", "A", Ns3Value::DOUBLE, 0, 100},
          {"beta", "B", Ns3Value::DOUBLE, 0, 100},
          {"max_burst_ns", "MaxBurstAllowance", Ns3Value::TIME_NS, 0, kMaxTimeNs},
          {"dq_rate_estimator", "UseDequeueRateEstimator", Ns3Value::BOOL, 0, 1},
          {"dq_threshold_bytes", "DequeueThreshold", Ns3Value::UINT, 0, 1e9},
          {"cap_drop_adjustment", "UseCapDropAdjustment", Ns3Value::BOOL, 0, 1},
          {"derandomization", "UseDerandomization", Ns3Value::BOOL, 0, 1}}},
    };
    return kinds;
}

/// The plan's tcp.variant and the ns-3 congestion control it runs (docs/jobs.md, "TCP").
const std::vector<std::pair<const char*, const char*>> kTcpVariants = {
    {"NewReno", "ns3::TcpNewReno"},
    {"Cubic", "ns3::TcpCubic"},
    {"Bbr", "ns3::TcpBbr"},
};

std::string
KnownDisciplines()
{
    std::string names;
    for (uint32_t i = 0; qcore_disciplines[i]; i++)
    {
        names += std::string(qcore_disciplines[i]->name) + ", ";
    }
    names += kLossless;
    for (const Ns3Kind& k : Ns3Kinds())
    {
        names += std::string(", ") + k.kind;
    }
    return names;
}

/// One of ns-3's own queue discs: every parameter given, checked, as attribute text.
QueueSpec
ParseNs3Queue(const json& q, const std::string& path, const Ns3Kind& k)
{
    OnlyKeys(q, path, {"kind", "params"});
    QueueSpec spec;
    spec.kind = QueueSpec::Kind::NS3;
    spec.ns3Kind = k.kind;
    spec.typeId = k.typeId;
    for (const auto& [attribute, text] : k.fixed)
    {
        spec.attributes.emplace_back(attribute, text);
    }
    const json& params = Field(q, path, "params");
    const std::string where = Join(path, "params");
    ExpectObject(params, where);
    std::string names;
    for (const Ns3Param& p : k.params)
    {
        names += std::string(names.empty() ? "" : ", ") + p.name;
    }
    for (const auto& [name, value] : params.items())
    {
        if (std::none_of(k.params.begin(), k.params.end(),
                         [&](const Ns3Param& p) { return name == p.name; }))
        {
            throw PlanError(Join(where, name) + ": not a parameter of " + k.kind + " (its parameters: " +
                            names + ")");
        }
    }
    for (const Ns3Param& p : k.params)
    {
        const std::string field = Join(where, p.name);
        if (!params.contains(p.name))
        {
            throw PlanError(field + ": missing (a plan gives every parameter of " + k.kind + ")");
        }
        const json& v = params.at(p.name);
        std::string text;
        switch (p.value)
        {
        case Ns3Value::BOOL:
            if (!v.is_boolean())
            {
                throw PlanError(field + ": expected true or false, got " + v.dump());
            }
            text = v.get<bool>() ? "true" : "false";
            break;
        case Ns3Value::DOUBLE: {
            const double x = v.is_number() ? v.get<double>() : std::nan("");
            if (!std::isfinite(x) || x < p.lo || x > p.hi)
            {
                char range[64];
                std::snprintf(range, sizeof(range), "a number between %g and %g", p.lo, p.hi);
                throw PlanError(field + ": expected " + range + ", got " + v.dump());
            }
            text = v.dump(); // the shortest digits that read back as the same double
            break;
        }
        default: {
            const uint64_t n = UintValue(v, field, static_cast<uint64_t>(p.lo),
                                         static_cast<uint64_t>(p.hi));
            text = std::to_string(n);
            if (p.value == Ns3Value::QUANTUM)
            {
                spec.quantumBytes = static_cast<uint32_t>(n);
                continue;
            }
            text += p.value == Ns3Value::PACKETS ? "p" : p.value == Ns3Value::TIME_NS ? "ns" : "";
            break;
        }
        }
        spec.attributes.emplace_back(p.attribute, text);
    }
    return spec;
}

/// One parameter's JSON value as its attribute setting, checked by the core's parser.
ParamSetting
ParseParam(const struct qcore_param_desc* d, const json& v, const std::string& where)
{
    ParamSetting s{d, 0, ""};
    std::string text;
    switch (d->kind)
    {
    case QCORE_PARAM_U32:
    case QCORE_PARAM_U64:
        s.number = UintValue(v, where, 0, d->kind == QCORE_PARAM_U32 ? UINT32_MAX : UINT64_MAX);
        text = std::to_string(s.number);
        break;
    case QCORE_PARAM_BOOL:
        if (!v.is_boolean())
        {
            throw PlanError(where + ": expected true or false, got " + v.dump());
        }
        s.number = v.get<bool>() ? 1 : 0;
        text = s.number ? "1" : "0";
        break;
    case QCORE_PARAM_PPM: {
        // A number with at most six decimals, as the core's exact decimal.
        const double x = v.is_number() ? v.get<double>() : -1;
        const double scaled = x * 1e6;
        const double ppm = std::round(scaled);
        if (!v.is_number() || !std::isfinite(x) || x < 0 || ppm > UINT32_MAX ||
            std::fabs(scaled - ppm) > 1e-3)
        {
            throw PlanError(where + ": expected a number with at most 6 decimals, got " +
                            v.dump());
        }
        char buf[32];
        qcore_fmt_ppm(buf, sizeof(buf), static_cast<uint32_t>(ppm));
        s.text = text = buf;
        break;
    }
    case QCORE_PARAM_ENUM:
        if (!v.is_string())
        {
            throw PlanError(where + ": expected one of " + d->choices + ", got " + v.dump());
        }
        s.text = text = v.get<std::string>();
        break;
    case QCORE_PARAM_U32_LIST:
        if (!v.is_array())
        {
            throw PlanError(where + ": expected a list of integers, got " + v.dump());
        }
        for (std::size_t i = 0; i < v.size(); i++)
        {
            text += (i ? ":" : "") + std::to_string(UintValue(v[i], Index(where, i), 0, UINT32_MAX));
        }
        s.text = text;
        break;
    }
    struct qcore_param_value parsed = {};
    char err[QCORE_ERRLEN] = "";
    if (qcore_param_parse(d, text.c_str(), &parsed, err, sizeof(err)))
    {
        // The core's message starts with the parameter's name.
        const std::string message = err;
        const std::string name = d->name;
        throw PlanError(where + message.substr(message.compare(0, name.size(), name) == 0
                                                   ? name.size()
                                                   : 0));
    }
    return s;
}

QueueSpec
ParseQueue(const json& q, const std::string& path)
{
    ExpectObject(q, path);
    QueueSpec spec;
    const std::string kind = String(q, path, "kind");
    if (kind == kLossless)
    {
        OnlyKeys(q, path, {"kind"});
        spec.kind = QueueSpec::Kind::LOSSLESS;
        return spec;
    }
    for (const Ns3Kind& k : Ns3Kinds())
    {
        if (kind == k.kind)
        {
            return ParseNs3Queue(q, path, k);
        }
    }
    spec.ops = qcore_find(kind.c_str());
    if (!spec.ops)
    {
        throw PlanError(Join(path, "kind") + ": unknown queue kind \"" + kind +
                        "\" (known: " + KnownDisciplines() + ")");
    }
    OnlyKeys(q, path, {"kind", "params", "seed"});
    spec.kind = QueueSpec::Kind::CORE;
    spec.seed = Uint(q, path, "seed", 0, UINT64_MAX);
    const json& params = Field(q, path, "params");
    const std::string where = Join(path, "params");
    ExpectObject(params, where);
    const struct qcore_disc_ops* ops = spec.ops;
    for (const auto& [name, value] : params.items())
    {
        char err[QCORE_ERRLEN + 200] = "";
        if (qcore_param_index(ops, name.c_str(), err, sizeof(err)) < 0)
        {
            throw PlanError(Join(where, name) + ": " + err);
        }
    }
    // Every parameter, typed, in table order (a plan leaves none to defaults).
    std::vector<struct qcore_param_value> values;
    for (uint32_t i = 0; i < ops->nparams; i++)
    {
        const struct qcore_param_desc* d = &ops->params[i];
        auto it = params.find(d->name);
        if (it == params.end())
        {
            throw PlanError(Join(where, d->name) + ": missing (a plan gives every parameter of " +
                            ops->name + ")");
        }
        spec.params.push_back(ParseParam(d, *it, Join(where, d->name)));
        const ParamSetting& s = spec.params.back();
        struct qcore_param_value v = {};
        char err[QCORE_ERRLEN] = "";
        const std::string text = s.text.empty() ? std::to_string(s.number) : s.text;
        qcore_param_parse(d, text.c_str(), &v, err, sizeof(err)); // accepted above
        v.index = i;
        values.push_back(v);
    }
    // The core's configure sequence: the rules between parameters.
    spec.coreParams.assign(ops->params_size / sizeof(uint64_t) + 2, 0);
    uint32_t nbands = 0;
    char err[QCORE_ERRLEN] = "";
    if (qcore_configure(ops, spec.coreParams.data(), values.data(),
                        static_cast<uint32_t>(values.size()), &nbands, err, sizeof(err)))
    {
        throw PlanError(where + ": " + err);
    }
    return spec;
}

/// The route a router takes to `address`: longest prefix first.
struct RouterTable
{
    std::vector<const RouteSpec*> routes; // longest prefix first

    const RouteSpec* Lookup(uint32_t address) const
    {
        for (const RouteSpec* r : routes)
        {
            if ((address & Mask(r->len)) == r->net)
            {
                return r;
            }
        }
        return nullptr;
    }
};

/**
 * Follow a packet from host `from` to host `to` as the plan routes it (the
 * host's one link, then each router's attached hosts or longest-prefix
 * route), calling visit(link, sender) for every link it crosses.  An empty
 * string, or what is wrong.
 */
template <typename Visit>
std::string
WalkPath(const Plan& plan,
         const std::vector<RouterTable>& tables,
         uint32_t from,
         uint32_t to,
         Visit visit)
{
    const NodeSpec& dst = plan.nodes[to];
    const uint32_t lastLink = dst.links[0];
    uint32_t here = from;
    uint32_t link = 0;
    if (plan.nodes[from].wireless)
    {
        // over the radio to the gateway, which relays onto its wired links
        here = plan.wireless.gateway;
        if (plan.links[lastLink].Peer(to) == here)
        {
            link = lastLink;
        }
        else
        {
            const RouteSpec* r = tables[here].Lookup(dst.address);
            if (!r)
            {
                return "no route at " + plan.nodes[here].id + " to " + dst.id + " (" +
                       FormatIpv4(dst.address) + ")";
            }
            link = r->link;
        }
    }
    else
    {
        link = plan.nodes[from].links[0];
    }
    for (std::size_t hop = 0; hop <= plan.nodes.size(); hop++)
    {
        visit(plan.links[link], here);
        const uint32_t next = plan.links[link].Peer(here);
        if (next == to)
        {
            return "";
        }
        if (!plan.nodes[next].router)
        {
            return "the path from " + plan.nodes[from].id + " reaches host " +
                   plan.nodes[next].id + ", not " + dst.id;
        }
        here = next;
        if (plan.links[lastLink].Peer(to) == here)
        {
            link = lastLink;
            continue;
        }
        const RouteSpec* r = tables[here].Lookup(dst.address);
        if (!r)
        {
            return "no route at " + plan.nodes[here].id + " to " + dst.id + " (" +
                   FormatIpv4(dst.address) + ")";
        }
        link = r->link;
    }
    return "the routes from " + plan.nodes[from].id + " to " + dst.id + " loop";
}

std::pair<int64_t, int64_t>
PositionMm(const json& v, const std::string& path)
{
    if (!v.is_array() || v.size() != 2 || !v[0].is_number_integer() || !v[1].is_number_integer())
    {
        throw PlanError(path + ": expected [x, y], integer millimetres");
    }
    const int64_t x = v[0].get<int64_t>();
    const int64_t y = v[1].get<int64_t>();
    constexpr int64_t kMax = 10000000000LL;
    if (x < -kMax || x > kMax || y < -kMax || y > kMax)
    {
        throw PlanError(path + ": a coordinate beyond 10^7 m");
    }
    return {x, y};
}

void
ParseWireless(const json& doc, Plan& plan, const std::unordered_map<std::string, uint32_t>& nodeIndex)
{
    if (!doc.contains("wireless"))
    {
        return;
    }
    const json& w = Field(doc, "", "wireless");
    const std::string p = "wireless";
    ExpectObject(w, p);
    OnlyKeys(w, p, {"gateway", "gateway_address", "gateway_position_mm", "nodes", "positions_mm",
                    "standard", "data_mode", "tx_power_mdbm", "rx_sensitivity_mdbm", "antenna_height_mm",
                    "routing", "propagation"});
    WirelessSpec& spec = plan.wireless;
    spec.present = true;
    const std::string gateway = String(w, p, "gateway");
    auto g = nodeIndex.find(gateway);
    if (g == nodeIndex.end() || !plan.nodes[g->second].router)
    {
        throw PlanError(p + ".gateway: no router \"" + gateway + "\"");
    }
    spec.gateway = g->second;
    spec.gatewayAddress = Ipv4(w, p, "gateway_address");
    for (const NodeSpec& n : plan.nodes)
    {
        if (n.address == spec.gatewayAddress)
        {
            throw PlanError(p + ".gateway_address: " + FormatIpv4(n.address) + " is node " + n.id + "'s");
        }
    }
    spec.gatewayPositionMm = PositionMm(Field(w, p, "gateway_position_mm"), Join(p, "gateway_position_mm"));
    const json& nodes = Array(w, p, "nodes");
    const json& positions = Array(w, p, "positions_mm");
    if (nodes.empty() || nodes.size() > 256)
    {
        throw PlanError(p + ".nodes: expected 1 to 256 nodes");
    }
    if (positions.size() != nodes.size())
    {
        throw PlanError(p + ".positions_mm: expected one position per node (" +
                        std::to_string(nodes.size()) + "), got " + std::to_string(positions.size()));
    }
    for (std::size_t i = 0; i < nodes.size(); i++)
    {
        const std::string path = Index(p + ".nodes", i);
        if (!nodes[i].is_string())
        {
            throw PlanError(path + ": expected a node id");
        }
        auto it = nodeIndex.find(nodes[i].get<std::string>());
        if (it == nodeIndex.end() || plan.nodes[it->second].router)
        {
            throw PlanError(path + ": no host \"" + nodes[i].get<std::string>() + "\"");
        }
        if (plan.nodes[it->second].wireless)
        {
            throw PlanError(path + ": node \"" + plan.nodes[it->second].id + "\" listed twice");
        }
        plan.nodes[it->second].wireless = true;
        spec.nodes.push_back(it->second);
        spec.positionsMm.push_back(PositionMm(positions[i], Index(p + ".positions_mm", i)));
    }
    if (String(w, p, "standard") != "802.11b")
    {
        throw PlanError(p + ".standard: expected \"802.11b\"");
    }
    spec.dataMode = String(w, p, "data_mode");
    if (spec.dataMode != "DsssRate1Mbps" && spec.dataMode != "DsssRate2Mbps" &&
        spec.dataMode != "DsssRate5_5Mbps" && spec.dataMode != "DsssRate11Mbps")
    {
        throw PlanError(p + ".data_mode: expected DsssRate1Mbps, DsssRate2Mbps, DsssRate5_5Mbps or "
                            "DsssRate11Mbps, got \"" + spec.dataMode + "\"");
    }
    const json& power = Field(w, p, "tx_power_mdbm");
    if (!power.is_number_integer() || power.get<int64_t>() < -10000 || power.get<int64_t>() > 30000)
    {
        throw PlanError(p + ".tx_power_mdbm: expected an integer in [-10000, 30000]");
    }
    spec.txPowerMdbm = power.get<int64_t>();
    const json& sensitivity = Field(w, p, "rx_sensitivity_mdbm");
    if (!sensitivity.is_number_integer() || sensitivity.get<int64_t>() < -120000 ||
        sensitivity.get<int64_t>() > 0)
    {
        throw PlanError(p + ".rx_sensitivity_mdbm: expected an integer in [-120000, 0]");
    }
    spec.rxSensitivityMdbm = sensitivity.get<int64_t>();
    const json& height = Field(w, p, "antenna_height_mm");
    if (!height.is_number_integer() || height.get<int64_t>() < 1 || height.get<int64_t>() > 100000)
    {
        throw PlanError(p + ".antenna_height_mm: expected an integer in [1, 100000]");
    }
    spec.antennaHeightMm = height.get<int64_t>();
    if (String(w, p, "routing") != "aodv")
    {
        throw PlanError(p + ".routing: expected \"aodv\"");
    }
    if (String(w, p, "propagation") != "two_ray_ground")
    {
        throw PlanError(p + ".propagation: expected \"two_ray_ground\"");
    }
}

void
ParseTcp(const json& doc, Plan& plan)
{
    const json& tcp = Field(doc, "", "tcp");
    const std::string p = "tcp";
    plan.tcp.variant = String(tcp, p, "variant");
    std::string known;
    for (const auto& [variant, typeId] : kTcpVariants)
    {
        known += std::string(known.empty() ? "" : ", ") + variant;
        if (plan.tcp.variant == variant)
        {
            plan.tcp.congestionTypeId = typeId;
        }
    }
    if (plan.tcp.congestionTypeId.empty())
    {
        throw PlanError("tcp.variant: expected one of " + known + ", got \"" + plan.tcp.variant +
                        "\"");
    }
    plan.tcp.sack = Bool(tcp, p, "sack");
    plan.tcp.timestamps = Bool(tcp, p, "timestamps");
    plan.tcp.windowScaling = Bool(tcp, p, "window_scaling");
    plan.tcp.initialCwndSegments = Uint(tcp, p, "initial_cwnd_segments", 1, 1000);
    plan.tcp.delayedAckCount = Uint(tcp, p, "delayed_ack_count", 1, 100);
    plan.tcp.minRtoNs = static_cast<int64_t>(Uint(tcp, p, "min_rto_ns", 1, 1000000000000ULL));
    plan.tcp.synTimeoutNs = static_cast<int64_t>(Uint(tcp, p, "syn_timeout_ns", 1, 1000000000000ULL));
    plan.tcp.rcvBufBytes = Uint(tcp, p, "rcv_buf_bytes", 1024, UINT32_MAX);
    plan.tcp.sndBufBytes = Uint(tcp, p, "snd_buf_bytes", 1024, UINT32_MAX);
    // Optional (docs/job.schema.json): absent means the handshake runs.
    plan.tcp.handshake = tcp.contains("handshake") ? Bool(tcp, p, "handshake") : true;
}

void
ParseGraph(const json& doc, Plan& plan, std::unordered_map<std::string, uint32_t>& nodeIndex,
           std::unordered_map<std::string, uint32_t>& linkIndex)
{
    const json& nodes = Array(doc, "", "nodes");
    if (nodes.size() < 2)
    {
        throw PlanError("nodes: expected at least two nodes");
    }
    std::unordered_map<uint32_t, std::string> addresses;
    for (std::size_t i = 0; i < nodes.size(); i++)
    {
        const std::string path = Index("nodes", i);
        ExpectObject(nodes[i], path);
        NodeSpec n;
        n.id = String(nodes[i], path, "id");
        if (n.id.empty())
        {
            throw PlanError(path + ".id: empty");
        }
        if (!nodeIndex.emplace(n.id, static_cast<uint32_t>(i)).second)
        {
            throw PlanError(path + ".id: duplicate node id \"" + n.id + "\"");
        }
        const std::string kind = String(nodes[i], path, "kind");
        if (kind != "host" && kind != "router")
        {
            throw PlanError(path + ".kind: expected \"host\" or \"router\", got \"" + kind + "\"");
        }
        n.router = kind == "router";
        n.address = Ipv4(nodes[i], path, "address");
        auto [seen, fresh] = addresses.emplace(n.address, n.id);
        if (!fresh)
        {
            throw PlanError(path + ".address: " + FormatIpv4(n.address) + " is also node " +
                            seen->second + "'s");
        }
        if (nodes[i].contains("prefix"))
        {
            if (!n.router)
            {
                throw PlanError(path + ".prefix: only routers have a prefix");
            }
            uint32_t net;
            uint8_t len;
            Cidr(nodes[i], path, "prefix", &net, &len); // checked; routes carry what is used
        }
        plan.nodes.push_back(n);
    }

    const json& links = Array(doc, "", "links");
    if (links.empty())
    {
        throw PlanError("links: expected at least one link");
    }
    for (std::size_t i = 0; i < links.size(); i++)
    {
        const std::string path = Index("links", i);
        const json& l = links[i];
        ExpectObject(l, path);
        LinkSpec link;
        link.id = String(l, path, "id");
        if (!linkIndex.emplace(link.id, static_cast<uint32_t>(i)).second)
        {
            throw PlanError(path + ".id: duplicate link id \"" + link.id + "\"");
        }
        uint32_t* ends[2] = {&link.a, &link.b};
        const char* endKeys[2] = {"a", "b"};
        for (int e = 0; e < 2; e++)
        {
            const std::string id = String(l, path, endKeys[e]);
            auto it = nodeIndex.find(id);
            if (it == nodeIndex.end())
            {
                throw PlanError(Join(path, endKeys[e]) + ": no node \"" + id + "\"");
            }
            *ends[e] = it->second;
        }
        if (link.a == link.b)
        {
            throw PlanError(path + ": a link joins two different nodes (both ends are \"" +
                            plan.nodes[link.a].id + "\")");
        }
        link.rateBps = Uint(l, path, "rate_bps", 1, kMaxRateBps);
        link.delayNs = static_cast<int64_t>(Uint(l, path, "delay_ns", 0, kMaxDelayNs));
        link.mtuBytes = Uint(l, path, "mtu_bytes", 68, 65535);
        const json& queues = Field(l, path, "queues");
        const std::string qpath = Join(path, "queues");
        ExpectObject(queues, qpath);
        const std::string& idA = plan.nodes[link.a].id;
        const std::string& idB = plan.nodes[link.b].id;
        for (const auto& [key, value] : queues.items())
        {
            if (key != idA && key != idB)
            {
                throw PlanError(Join(qpath, key) + ": not an end of the link (its ends are " +
                                idA + " and " + idB + ")");
            }
        }
        link.queueA = ParseQueue(Field(queues, qpath, idA.c_str()), Join(qpath, idA));
        link.queueB = ParseQueue(Field(queues, qpath, idB.c_str()), Join(qpath, idB));
        plan.nodes[link.a].links.push_back(static_cast<uint32_t>(i));
        plan.nodes[link.b].links.push_back(static_cast<uint32_t>(i));
        plan.links.push_back(std::move(link));
    }
    ParseWireless(doc, plan, nodeIndex);
    for (const NodeSpec& n : plan.nodes)
    {
        if (n.wireless)
        {
            if (!n.links.empty())
            {
                throw PlanError("wireless.nodes: host \"" + n.id + "\" has links (a wireless host has none)");
            }
            continue;
        }
        if (!n.router && n.links.size() != 1)
        {
            throw PlanError("nodes: host \"" + n.id + "\" has " + std::to_string(n.links.size()) +
                            " links (a host has exactly one)");
        }
    }

    const json& routes = Array(doc, "", "routes");
    for (std::size_t i = 0; i < routes.size(); i++)
    {
        const std::string path = Index("routes", i);
        ExpectObject(routes[i], path);
        RouteSpec r;
        const std::string node = String(routes[i], path, "node");
        auto n = nodeIndex.find(node);
        if (n == nodeIndex.end() || !plan.nodes[n->second].router)
        {
            throw PlanError(path + ".node: no router \"" + node + "\"");
        }
        r.node = n->second;
        Cidr(routes[i], path, "dst", &r.net, &r.len);
        const std::string link = String(routes[i], path, "link");
        auto l = linkIndex.find(link);
        if (l == linkIndex.end())
        {
            throw PlanError(path + ".link: no link \"" + link + "\"");
        }
        const LinkSpec& spec = plan.links[l->second];
        if (spec.a != r.node && spec.b != r.node)
        {
            throw PlanError(path + ".link: link \"" + link + "\" does not touch router " + node +
                            " (it joins " + plan.nodes[spec.a].id + " and " +
                            plan.nodes[spec.b].id + ")");
        }
        r.link = l->second;
        plan.routes.push_back(r);
    }
}

void
ParseFlows(const json& doc, Plan& plan, const std::unordered_map<std::string, uint32_t>& nodeIndex)
{
    const json& flows = Array(doc, "", "flows");
    std::set<uint32_t> ids;
    std::set<std::tuple<uint32_t, uint8_t, uint16_t>> ports; // host, protocol, port
    for (std::size_t i = 0; i < flows.size(); i++)
    {
        const std::string path = Index("flows", i);
        const json& f = flows[i];
        ExpectObject(f, path);
        FlowSpec spec;
        spec.flowId = Uint(f, path, "flow_id", 0, UINT32_MAX);
        if (!ids.insert(spec.flowId).second)
        {
            throw PlanError(path + ".flow_id: duplicate flow_id " + std::to_string(spec.flowId));
        }
        const std::string app = String(f, path, "app");
        if (app != "bulk" && app != "cbr" && app != "onoff" && app != "voip" && app != "poisson")
        {
            throw PlanError(path + ".app: expected bulk, cbr, onoff, voip or poisson, got \"" + app +
                            "\"");
        }
        spec.udp = app != "bulk";
        spec.poisson = app == "poisson";
        uint32_t* ends[2] = {&spec.src, &spec.dst};
        const char* endKeys[2] = {"src", "dst"};
        for (int e = 0; e < 2; e++)
        {
            const std::string id = String(f, path, endKeys[e]);
            auto it = nodeIndex.find(id);
            if (it == nodeIndex.end() || plan.nodes[it->second].router)
            {
                throw PlanError(Join(path, endKeys[e]) + ": no host \"" + id + "\"");
            }
            *ends[e] = it->second;
        }
        if (spec.src == spec.dst)
        {
            throw PlanError(path + ".dst: the same host as src");
        }
        if (plan.nodes[spec.dst].wireless)
        {
            throw PlanError(path + ".dst: a wireless node only sends (\"" + plan.nodes[spec.dst].id + "\")");
        }
        if (plan.nodes[spec.src].wireless && !spec.udp)
        {
            throw PlanError(path + ".app: a flow from a wireless node is UDP (its gateway relays datagrams)");
        }
        spec.srcPort = static_cast<uint16_t>(Uint(f, path, "src_port", 1, 65535));
        spec.dstPort = static_cast<uint16_t>(Uint(f, path, "dst_port", 1, 65535));
        const uint8_t proto = spec.udp ? kProtoUdp : kProtoTcp;
        if (!ports.emplace(spec.src, proto, spec.srcPort).second)
        {
            throw PlanError(path + ".src_port: port " + std::to_string(spec.srcPort) +
                            (spec.udp ? "/udp" : "/tcp") + " is used twice on host " +
                            plan.nodes[spec.src].id);
        }
        if (!ports.emplace(spec.dst, proto, spec.dstPort).second)
        {
            throw PlanError(path + ".dst_port: port " + std::to_string(spec.dstPort) +
                            (spec.udp ? "/udp" : "/tcp") + " is used twice on host " +
                            plan.nodes[spec.dst].id);
        }
        spec.tos = static_cast<uint8_t>(Uint(f, path, "tos", 0, 255));
        spec.startNs = Ns(f, path, "start_ns");
        if (!spec.udp)
        {
            spec.segBytes = Uint(f, path, "seg_bytes", 1, kMaxSegBytes);
            spec.bytes = Uint(f, path, "bytes", 0, 1152921504606846975ULL);
            if (f.contains("stop_ns"))
            {
                spec.stopNs = Ns(f, path, "stop_ns");
                if (spec.stopNs <= spec.startNs)
                {
                    throw PlanError(path + ".stop_ns: expected after start_ns");
                }
            }
        }
        else
        {
            spec.pktBytes = Uint(f, path, "pkt_bytes", kMinUdpIpBytes, kMaxUdpIpBytes);
            if (spec.poisson)
            {
                auto meanGap = [](const json& mean, const std::string& where) {
                    if (!mean.is_number() || !(mean.get<double>() >= 1.0) ||
                        !std::isfinite(mean.get<double>()))
                    {
                        throw PlanError(where + ": expected a number >= 1");
                    }
                    return mean.get<double>();
                };
                if (f.contains("period_mean_intervals_ns") == f.contains("mean_interval_ns"))
                {
                    throw PlanError(path +
                                    ": expected exactly one of mean_interval_ns and period_mean_intervals_ns");
                }
                if (f.contains("mean_interval_ns"))
                {
                    spec.meanIntervalNs = meanGap(f["mean_interval_ns"], Join(path, "mean_interval_ns"));
                }
                else
                {
                    const json& gaps = Array(f, path, "period_mean_intervals_ns");
                    for (std::size_t k = 0; k < gaps.size(); k++)
                    {
                        spec.periodMeanIntervalsNs.push_back(
                            meanGap(gaps[k], Index(Join(path, "period_mean_intervals_ns"), k)));
                    }
                }
                spec.poissonSeed = Uint(f, path, "poisson_seed", 0, UINT64_MAX);
                if (f.contains("size_mean_bytes"))
                {
                    const json& mean = f["size_mean_bytes"];
                    if (!mean.is_number() || !(mean.get<double>() > kMinUdpIpBytes) ||
                        !(mean.get<double>() <= spec.pktBytes))
                    {
                        throw PlanError(path + ".size_mean_bytes: expected a number above " +
                                        std::to_string(kMinUdpIpBytes) + " and at most pkt_bytes");
                    }
                    spec.sizeMeanBytes = mean.get<double>();
                    spec.sizeSeed = Uint(f, path, "size_seed", 0, UINT64_MAX);
                }
            }
            else
            {
                spec.intervalNs = Ns(f, path, "interval_ns", 1);
            }
            const json& periods = Array(f, path, "on_periods_ns");
            int64_t last = spec.startNs;
            for (std::size_t k = 0; k < periods.size(); k++)
            {
                const std::string where = Index(Join(path, "on_periods_ns"), k);
                const json& p = periods[k];
                if (!p.is_array() || p.size() != 2)
                {
                    throw PlanError(where + ": expected [start_ns, end_ns]");
                }
                const int64_t start = static_cast<int64_t>(UintValue(p[0], where, 0, kMaxNs));
                const int64_t end = static_cast<int64_t>(UintValue(p[1], where, 0, kMaxNs));
                if (start < last || end < start)
                {
                    throw PlanError(where + ": periods start at or after start_ns, are sorted, "
                                            "do not overlap and end after they start");
                }
                spec.onPeriodsNs.emplace_back(start, end);
                last = end;
            }
            if (!spec.periodMeanIntervalsNs.empty() &&
                spec.periodMeanIntervalsNs.size() != spec.onPeriodsNs.size())
            {
                throw PlanError(path + ".period_mean_intervals_ns: expected one per on-period");
            }
        }
        plan.flows.push_back(std::move(spec));
    }
}

void
ParseTrace(const json& doc, Plan& plan, const std::unordered_map<std::string, uint32_t>& nodeIndex,
           const std::unordered_map<std::string, uint32_t>& linkIndex)
{
    const json& trace = Field(doc, "", "trace");
    plan.queueSampleIntervalNs = Ns(trace, "trace", "queue_sample_interval_ns", 1);
    plan.tracePackets = Bool(trace, "trace", "packets");
    const json& queues = Array(trace, "trace", "queues");
    std::set<std::string> names;
    for (std::size_t i = 0; i < queues.size(); i++)
    {
        const std::string path = Index("trace.queues", i);
        if (!queues[i].is_string())
        {
            throw PlanError(path + ": expected \"LINK:NODE\", got " + queues[i].dump());
        }
        const std::string name = queues[i].get<std::string>();
        const std::size_t colon = name.find(':');
        auto link = colon == std::string::npos ? linkIndex.end()
                                               : linkIndex.find(name.substr(0, colon));
        auto node = colon == std::string::npos ? nodeIndex.end()
                                               : nodeIndex.find(name.substr(colon + 1));
        if (link == linkIndex.end() || node == nodeIndex.end() ||
            (plan.links[link->second].a != node->second &&
             plan.links[link->second].b != node->second))
        {
            throw PlanError(path + ": no queue \"" + name + "\" (LINK:NODE, NODE an end of LINK)");
        }
        if (!names.insert(name).second)
        {
            throw PlanError(path + ": \"" + name + "\" is listed twice");
        }
        const LinkSpec& l = plan.links[link->second];
        if (plan.QueueAt(l, node->second).kind == QueueSpec::Kind::LOSSLESS)
        {
            throw PlanError(path + ": " + name + " is a lossless queue; only disciplines are traced");
        }
        plan.traced.push_back({name, link->second, l.a == node->second});
    }
    std::sort(plan.traced.begin(), plan.traced.end(),
              [](const TracedQueueSpec& x, const TracedQueueSpec& y) { return x.name < y.name; });

    // trace.tcp (optional): bulk flows whose TCP state is sampled.
    if (!trace.contains("tcp"))
    {
        return;
    }
    const json& tcp = Array(trace, "trace", "tcp");
    std::unordered_map<uint32_t, std::size_t> flowIndex;
    for (std::size_t i = 0; i < plan.flows.size(); i++)
    {
        flowIndex.emplace(plan.flows[i].flowId, i);
    }
    std::set<std::size_t> seen;
    for (std::size_t i = 0; i < tcp.size(); i++)
    {
        const std::string path = Index("trace.tcp", i);
        const uint32_t id = static_cast<uint32_t>(UintValue(tcp[i], path, 0, UINT32_MAX));
        auto flow = flowIndex.find(id);
        if (flow == flowIndex.end() || plan.flows[flow->second].udp)
        {
            throw PlanError(path + ": no bulk (TCP) flow " + std::to_string(id));
        }
        if (!seen.insert(flow->second).second)
        {
            throw PlanError(path + ": flow " + std::to_string(id) + " is listed twice");
        }
        plan.tcpTraced.push_back(flow->second);
    }
    if (!plan.tcpTraced.empty())
    {
        plan.tcpSampleIntervalNs = Ns(trace, "trace", "tcp_sample_interval_ns", 1);
    }
}

/// Every flow has a path both ways (data, and TCP's ACKs); its packets fit
/// every link's MTU and the classes of the disciplines on the way.
void
CheckPaths(const Plan& plan)
{
    std::vector<RouterTable> tables(plan.nodes.size());
    for (const RouteSpec& r : plan.routes)
    {
        tables[r.node].routes.push_back(&r);
    }
    for (RouterTable& t : tables)
    {
        std::stable_sort(t.routes.begin(), t.routes.end(),
                         [](const RouteSpec* x, const RouteSpec* y) { return x->len > y->len; });
    }
    for (std::size_t i = 0; i < plan.flows.size(); i++)
    {
        const FlowSpec& f = plan.flows[i];
        const std::string path = Index("flows", i);
        const uint32_t ipBytes = f.udp ? f.pktBytes : f.segBytes + kTcpHeaderAllowanceBytes;
        std::string problem;
        std::string error = WalkPath(plan, tables, f.src, f.dst, [&](const LinkSpec& link,
                                                                     uint32_t sender) {
            if (!problem.empty())
            {
                return;
            }
            if (ipBytes > link.mtuBytes)
            {
                problem = std::string(f.udp ? "pkt_bytes" : "seg_bytes") + ": " +
                          (f.udp ? "a datagram" : "a segment plus 80 bytes of headers") + " (" +
                          std::to_string(ipBytes) + " bytes) exceeds link " + link.id +
                          "'s MTU (" + std::to_string(link.mtuBytes) + ")";
                return;
            }
            const QueueSpec& q = plan.QueueAt(link, sender);
            if (q.kind == QueueSpec::Kind::CORE && q.ops->check_pkt)
            {
                struct qcore_pkt pkt;
                std::memset(&pkt, 0, sizeof(pkt));
                pkt.len = ipBytes;
                qcore_pkt_set_tos(&pkt, f.tos);
                char err[QCORE_ERRLEN] = "";
                if (q.ops->check_pkt(q.coreParams.data(), &pkt, err, sizeof(err)))
                {
                    problem = "tos: the " + std::string(q.ops->name) + " queue at " +
                              plan.nodes[sender].id + " on link " + link.id + " refuses cls " +
                              std::to_string(pkt.cls) + ", prec " + std::to_string(pkt.prec) +
                              ": " + err;
                }
            }
        });
        if (error.empty() && !problem.empty())
        {
            throw PlanError(path + "." + problem);
        }
        if (error.empty() && !f.udp)
        {
            error = WalkPath(plan, tables, f.dst, f.src, [](const LinkSpec&, uint32_t) {});
        }
        if (!error.empty())
        {
            throw PlanError(path + ": " + error);
        }
    }
}

} // namespace

std::string
FormatIpv4(uint32_t address)
{
    char buf[16];
    std::snprintf(buf, sizeof(buf), "%u.%u.%u.%u", address >> 24, (address >> 16) & 255,
                  (address >> 8) & 255, address & 255);
    return buf;
}

Plan
ParsePlan(const json& doc)
{
    ExpectObject(doc, "");
    Plan plan;
    const std::string schema = String(doc, "", "schema");
    if (schema != kSchema)
    {
        throw PlanError(std::string("schema: expected \"") + kSchema + "\", got \"" + schema +
                        "\"");
    }
    plan.seed = Uint(doc, "", "seed", 0, UINT64_MAX);
    plan.durationNs = Ns(doc, "", "duration_ns", 1);
    plan.stopWhenDone = Bool(doc, "", "stop_when_done");
    plan.udpDrainNs = Ns(doc, "", "udp_drain_ns");
    ParseTcp(doc, plan);
    std::unordered_map<std::string, uint32_t> nodeIndex;
    std::unordered_map<std::string, uint32_t> linkIndex;
    ParseGraph(doc, plan, nodeIndex, linkIndex);
    ParseFlows(doc, plan, nodeIndex);
    ParseTrace(doc, plan, nodeIndex, linkIndex);
    CheckPaths(plan);
    return plan;
}

} // namespace qlab
