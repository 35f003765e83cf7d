/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-queue-disc.cc - ns-3 adapter for the qlab discipline core; see
 * qlab-queue-disc.h for what the core sees and how verdicts are carried out.
 */
#include "qlab-queue-disc.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/drop-tail-queue.h"
#include "ns3/ipv4-header.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <cctype>
#include <cstring>
#include <iostream>
#include <limits>
#include <typeinfo>


namespace ns3
{

NS_LOG_COMPONENT_DEFINE("QlabQueueDisc");

NS_OBJECT_ENSURE_REGISTERED(QlabQueueDisc);

// The typed queue discs, registered with the other TypeIds at static
// initialisation (NS_OBJECT_ENSURE_REGISTERED's mechanism, for a list).
static struct QlabTypedQueueDiscsRegistration
{
    QlabTypedQueueDiscsRegistration()
    {
        QlabQueueDisc::RegisterTypedQueueDiscs();
    }
} g_qlabTypedQueueDiscsRegistration;

namespace
{

constexpr uint8_t kIpProtocolTcp = 6;
constexpr uint8_t kIpProtocolUdp = 17;
// TCP header bytes read for the ports, the data offset and the flags.
constexpr uint32_t kTcpHeadBytes = 14;
constexpr uint32_t kPortBytes = 4;
// TCP flag bits (RFC 9293), byte 13 of the header.
constexpr uint8_t kTcpFin = 0x01;
constexpr uint8_t kTcpSyn = 0x02;
constexpr uint8_t kTcpRst = 0x04;
constexpr uint8_t kTcpAck = 0x10;

// Index = enum qcore_reason; entry 0 (NONE) is never a drop reason.
const char* const kReasonNames[QCORE_REASON__COUNT] = {
    nullptr,
    QlabQueueDisc::OVERFLOW_DROP,
    QlabQueueDisc::AQM_DROP,
    QlabQueueDisc::PRECEDENCE_LOCAL_DROP,
    QlabQueueDisc::PRECEDENCE_CROSS_DROP,
    QlabQueueDisc::DELAY_DROP,
};
static_assert(QCORE_REASON__COUNT == 6, "a new qcore reason needs a named constant here");

// Zeroed memory for one of the core's structs, 8-byte aligned (they hold
// u64 members); one spare word so that even an empty struct has an address.
std::vector<uint64_t>
CoreBuffer(uint32_t bytes)
{
    return std::vector<uint64_t>((bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t) + 1, 0);
}

} // namespace

TypeId
QlabQueueDisc::GetTypeId()
{
    // No constructor: this TypeId runs no discipline; the typed children
    // ns3::Qlab<Name>QueueDisc do.
    static TypeId tid =
        TypeId("ns3::QlabQueueDisc")
            .SetParent<QueueDisc>()
            .SetGroupName("TrafficControl")
            .AddTraceSource("BandEvent",
                            "A packet was enqueued in, dequeued from, dropped from or "
                            "marked in a band.",
                            MakeTraceSourceAccessor(&QlabQueueDisc::m_bandEvent),
                            "ns3::QlabQueueDisc::BandEventTracedCallback")
            .AddTraceSource("Classified",
                            "The metadata the core was given for an arriving packet "
                            "(length, class, precedence, flags, flow hash, time).",
                            MakeTraceSourceAccessor(&QlabQueueDisc::m_classified),
                            "ns3::QlabQueueDisc::ClassifiedTracedCallback");
    return tid;
}

QlabQueueDisc::QlabQueueDisc()
    : QueueDisc(QueueDiscSizePolicy::NO_LIMITS),
      m_seed(1),
      m_ops(nullptr),
      m_nbands(0),
      m_rng{1},
      m_views{},
      m_backlogPkts(0)
{
    NS_LOG_FUNCTION(this);
}

QlabQueueDisc::~QlabQueueDisc()
{
    NS_LOG_FUNCTION(this);
}

void
QlabQueueDisc::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_params.clear();
    m_vars.clear();
    m_stats.clear();
    m_counters.clear();
    m_bands.clear();
    QueueDisc::DoDispose();
}

int64_t
QlabQueueDisc::AssignStreams(int64_t stream)
{
    NS_LOG_FUNCTION(this << stream);
    m_seed = static_cast<uint64_t>(stream);
    qcore_rng_seed(&m_rng, m_seed);
    return 1;
}

const char*
QlabQueueDisc::ReasonName(uint8_t reason)
{
    if (reason == QCORE_REASON_NONE || reason >= QCORE_REASON__COUNT)
    {
        NS_FATAL_ERROR("QlabQueueDisc: the core dropped a packet with invalid reason "
                       << unsigned(reason));
    }
    return kReasonNames[reason];
}

bool
QlabQueueDisc::CheckConfig()
{
    NS_LOG_FUNCTION(this);

    for (uint32_t r = 1; r < QCORE_REASON__COUNT; r++)
    {
        NS_ABORT_MSG_IF(std::strcmp(kReasonNames[r], qcore_reason_names[r]) != 0,
                        "QlabQueueDisc: drop reason " << r << " is '" << qcore_reason_names[r]
                                                      << "' in the core but '" << kReasonNames[r]
                                                      << "' here");
    }
    if (GetNQueueDiscClasses() > 0)
    {
        NS_LOG_ERROR("QlabQueueDisc cannot have classes");
        return false;
    }
    if (GetNPacketFilters() > 0)
    {
        NS_LOG_ERROR("QlabQueueDisc cannot have packet filters (the core classifies)");
        return false;
    }
    if (GetNInternalQueues() > 0)
    {
        NS_LOG_ERROR("QlabQueueDisc creates its own internal queues");
        return false;
    }

    // A bad configuration is the user's mistake: stop with its message
    // (CheckConfig's return value is only asserted, and asserts are off in
    // optimized ns-3 builds).  The TypeId fixes the discipline; the
    // attributes give every parameter.
    const std::string tidName = GetInstanceTypeId().GetName();
    const struct qcore_disc_ops* ops = TypedDiscipline(GetInstanceTypeId());
    if (!ops)
    {
        NS_FATAL_ERROR(tidName << " runs no discipline: create a typed queue disc, "
                                  "ns3::Qlab<Name>QueueDisc (e.g. "
                               << TypedTypeIdName("ncq") << ")");
    }
    std::vector<struct qcore_param_value> values;
    for (uint32_t i = 0; i < ops->nparams; i++)
    {
        NS_ABORT_MSG_IF(i >= m_paramAttributes.size() || !m_paramAttributes[i].set,
                        tidName << ": attribute " << AttributeName(ops->params[i].name)
                                << " was never set");
        values.push_back(m_paramAttributes[i].value);
        values.back().index = i;
    }
    m_params = CoreBuffer(ops->params_size);
    char err[QCORE_ERRLEN] = "";
    if (qcore_configure(ops, m_params.data(), values.data(), static_cast<uint32_t>(values.size()),
                        &m_nbands, err, sizeof(err)))
    {
        // The core's message names core parameters; add their attribute names.
        const std::string error = err;
        std::string names;
        for (uint32_t i = 0; i < ops->nparams; i++)
        {
            const std::string core = ops->params[i].name;
            for (std::size_t at = error.find(core); at != std::string::npos;
                 at = error.find(core, at + 1))
            {
                const std::size_t end = at + core.size();
                const bool word =
                    (at == 0 || !(std::isalnum(error[at - 1]) || error[at - 1] == '_')) &&
                    (end == error.size() || !(std::isalnum(error[end]) || error[end] == '_'));
                if (word)
                {
                    names += (names.empty() ? "" : ", ") + core + " = " + AttributeName(core);
                    break;
                }
            }
        }
        NS_FATAL_ERROR(tidName << ": " << error
                               << (names.empty() ? "" : " (attributes: " + names + ")"));
    }
    m_ops = ops;

    // One FIFO per band.  The core enforces every limit, so the internal
    // queues must never drop: their limit is the largest a QueueSize holds.
    for (uint32_t b = 0; b < m_nbands; b++)
    {
        AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
            "MaxSize",
            QueueSizeValue(
                QueueSize(QueueSizeUnit::PACKETS, std::numeric_limits<uint32_t>::max()))));
    }
    return true;
}

void
QlabQueueDisc::InitializeParams()
{
    NS_LOG_FUNCTION(this);
    m_vars = CoreBuffer(m_ops->vars_size);
    m_stats = CoreBuffer(m_ops->stats_size); // counters start at zero
    m_ops->reset(m_params.data(), m_vars.data());
    qcore_rng_seed(&m_rng, m_seed);
    m_counters.assign(m_nbands, BandCounters());
    m_bands.assign(m_nbands, Band());
    for (uint32_t b = 0; b < m_nbands; b++)
    {
        m_bands[b].queue = PeekPointer(GetInternalQueue(b));
    }
    std::memset(m_views, 0, sizeof(m_views));
    m_backlogPkts = 0;
}

Ptr<QueueDisc::InternalQueue>
QlabQueueDisc::BandQueue(uint32_t band) const
{
    return GetInternalQueue(band);
}

uint32_t
QlabQueueDisc::GetNBands() const
{
    return m_nbands;
}

uint32_t
QlabQueueDisc::GetBandBacklogPkts(uint32_t band) const
{
    NS_ASSERT(band < m_nbands);
    return BandQueue(band)->GetNPackets();
}

uint64_t
QlabQueueDisc::GetBandBacklogBytes(uint32_t band) const
{
    NS_ASSERT(band < m_nbands);
    return BandQueue(band)->GetNBytes();
}

const QlabQueueDisc::BandCounters&
QlabQueueDisc::GetBandCounters(uint32_t band) const
{
    NS_ASSERT(band < m_counters.size());
    return m_counters[band];
}

void
QlabQueueDisc::BandPush(uint32_t band, Ptr<QueueDiscItem> item, uint32_t len, uint64_t arrivalNs)
{
    Band& b = m_bands[band];
    struct qcore_band_view& v = m_views[band];
    if (!b.queue->Enqueue(item))
    {
        NS_FATAL_ERROR("QlabQueueDisc: internal queue of band " << band << " refused a packet");
    }
    const uint32_t size = static_cast<uint32_t>(b.facts.size());
    if (v.backlog_pkts == size)
    {
        // Full (or never used): double the ring, the queued facts in order from 0.
        std::vector<QueuedFacts> grown(size ? 2 * size : 16);
        for (uint32_t i = 0; i < size; i++)
        {
            grown[i] = b.facts[(b.head + i) & (size - 1)];
        }
        b.facts.swap(grown);
        b.head = 0;
    }
    b.facts[(b.head + v.backlog_pkts) & (b.facts.size() - 1)] = {len, arrivalNs};
    if (v.backlog_pkts++ == 0)
    {
        v.head_len = len;
        v.head_arrival_ns = arrivalNs;
    }
    v.backlog_bytes += len;
    m_backlogPkts++;
}

Ptr<QueueDiscItem>
QlabQueueDisc::BandPop(uint32_t band, uint32_t* len)
{
    Band& b = m_bands[band];
    struct qcore_band_view& v = m_views[band];
    Ptr<QueueDiscItem> item = b.queue->Dequeue();
    NS_ABORT_MSG_UNLESS(item, "QlabQueueDisc: internal queue of band " << band << " is empty");
    const uint32_t mask = static_cast<uint32_t>(b.facts.size()) - 1;
    *len = b.facts[b.head].len;
    b.head = (b.head + 1) & mask;
    v.backlog_bytes -= *len;
    if (--v.backlog_pkts)
    {
        v.head_len = b.facts[b.head].len;
        v.head_arrival_ns = b.facts[b.head].arrivalNs;
    }
    else
    {
        v.head_len = 0;
        v.head_arrival_ns = 0;
    }
    m_backlogPkts--;
    return item;
}

bool
QlabQueueDisc::NeedsFlowHash() const
{
    return m_ops && !(m_ops->ignores & QCORE_IGNORES_FLOW_HASH);
}

void
QlabQueueDisc::Classify(Ptr<const QueueDiscItem> item, struct qcore_pkt* pkt) const
{
    // An exact Ipv4QueueDiscItem (every IPv4 packet of ns-3's stack) is
    // recognised by its type alone; dynamic_cast only for other types.
    const QueueDiscItem* raw = PeekPointer(item);
    const Ipv4QueueDiscItem* ip = typeid(*raw) == typeid(Ipv4QueueDiscItem)
                                      ? static_cast<const Ipv4QueueDiscItem*>(raw)
                                      : dynamic_cast<const Ipv4QueueDiscItem*>(raw);
    if (!ip)
    {
        return;
    }
    const Ipv4Header& header = ip->GetHeader();
    qcore_pkt_set_tos(pkt, header.GetTos());

    // The transport header's first bytes, as serialized in the packet: the
    // ports (TCP and UDP), then TCP's data offset and flags.
    const uint8_t proto = header.GetProtocol();
    uint16_t sport = 0;
    uint16_t dport = 0;
    if (header.GetFragmentOffset() == 0 && (proto == kIpProtocolTcp || proto == kIpProtocolUdp))
    {
        Ptr<const Packet> segment = ip->GetPacket();
        const uint32_t size = segment->GetSize();
        uint8_t head[kTcpHeadBytes];
        const uint32_t want = proto == kIpProtocolTcp ? kTcpHeadBytes : kPortBytes;
        if (size >= want && segment->CopyData(head, want) == want)
        {
            sport = static_cast<uint16_t>(head[0] << 8 | head[1]);
            dport = static_cast<uint16_t>(head[2] << 8 | head[3]);
            if (proto == kIpProtocolTcp)
            {
                const uint32_t headerBytes = (head[12] >> 4) * 4u;
                const uint8_t flags = head[13];
                if (size <= headerBytes && (flags & kTcpAck) &&
                    !(flags & (kTcpSyn | kTcpFin | kTcpRst)))
                {
                    pkt->flags |= QCORE_PKT_PURE_ACK;
                }
            }
        }
    }
    if (NeedsFlowHash())
    {
        pkt->flow_hash =
            qcore_flow_hash(header.GetSource().Get(), header.GetDestination().Get(), sport, dport,
                            proto);
    }
}

bool
QlabQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
    NS_LOG_FUNCTION(this << item);
    const struct qcore_disc_ops* ops = m_ops;
    const Time now = Simulator::Now();
    const uint64_t nowNs = static_cast<uint64_t>(now.GetNanoSeconds());

    // The packet's facts, read once: its length here, the rest in Classify.
    struct qcore_pkt pkt;
    std::memset(&pkt, 0, sizeof(pkt));
    pkt.now_ns = nowNs;
    pkt.len = item->GetSize();
    Classify(item, &pkt);
    if (ops->check_pkt)
    {
        char err[QCORE_ERRLEN];
        err[0] = '\0';
        if (ops->check_pkt(m_params.data(), &pkt, err, sizeof(err)))
        {
            NS_FATAL_ERROR(GetInstanceTypeId().GetName()
                           << ": packet cls=" << unsigned(pkt.cls) << " prec=" << unsigned(pkt.prec)
                           << " rejected: " << err);
        }
    }
    if (!m_classified.IsEmpty())
    {
        m_classified(item, &pkt);
    }

    const struct qcore_decision d = qcore_mark_fallback(
        ops->enqueue(m_params.data(), m_vars.data(), m_stats.data(), &pkt, m_views, &m_rng),
        &pkt);
    NS_ABORT_MSG_IF(d.band >= m_nbands,
                    "QlabQueueDisc: the core chose band " << unsigned(d.band) << " of "
                                                          << m_nbands);

    switch (d.verdict)
    {
    case QCORE_DROP: {
        const char* reason = ReasonName(d.reason);
        m_counters[d.band].droppedPkts++;
        m_counters[d.band].droppedByReason[d.reason]++;
        if (!m_bandEvent.IsEmpty())
        {
            m_bandEvent(item, Event::DROP_ARRIVAL, d.band, reason);
        }
        DropBeforeEnqueue(item, reason);
        return false;
    }
    case QCORE_MARK:
        // After qcore_mark_fallback the packet is ECN-capable: the mark must take.
        NS_ABORT_MSG_UNLESS(Mark(item, ECN_MARK),
                            "QlabQueueDisc: an ECN-capable packet could not be marked");
        m_counters[d.band].markedPkts++;
        if (!m_bandEvent.IsEmpty())
        {
            m_bandEvent(item, Event::MARK, d.band, nullptr);
        }
        break;
    case QCORE_QUEUE:
        break;
    default:
        NS_FATAL_ERROR("QlabQueueDisc: the core returned verdict " << unsigned(d.verdict));
    }

    // QueueDisc::Enqueue stamps the item after DoEnqueue returns; stamp it
    // here too, as the band's view has it from the start.
    item->SetTimeStamp(now);
    BandPush(d.band, item, pkt.len, nowNs);
    m_counters[d.band].enqueuedPkts++;
    if (!m_bandEvent.IsEmpty())
    {
        m_bandEvent(item, Event::ENQUEUE, d.band, nullptr);
    }
    return true;
}

Ptr<QueueDiscItem>
QlabQueueDisc::DoDequeue()
{
    NS_LOG_FUNCTION(this);
    const struct qcore_disc_ops* ops = m_ops;
    // Time only for disciplines that read it (0 otherwise, as qcore.h allows).
    const uint64_t now = ops->ignores & QCORE_IGNORES_TIME
                             ? 0
                             : static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
    const bool report = !(ops->ignores & QCORE_IGNORES_DEQUEUED);

    // Every DROP_HEAD removes a packet, so backlog + 1 rounds always end
    // in SERVE or EMPTY unless the core misbehaves.
    const uint32_t rounds = m_backlogPkts + 1;
    for (uint32_t i = 0; i < rounds; i++)
    {
        const struct qcore_deq d = ops->dequeue(m_params.data(), m_vars.data(), m_views, now);
        if (d.action == QCORE_DEQ_EMPTY)
        {
            return nullptr;
        }
        NS_ABORT_MSG_IF(d.action != QCORE_DEQ_SERVE && d.action != QCORE_DEQ_DROP_HEAD,
                        "QlabQueueDisc: the core returned dequeue action " << unsigned(d.action));
        NS_ABORT_MSG_IF(d.band >= m_nbands || m_views[d.band].backlog_pkts == 0,
                        "QlabQueueDisc: the core chose empty or missing band "
                            << unsigned(d.band));

        uint32_t len;
        Ptr<QueueDiscItem> item = BandPop(d.band, &len);
        if (report)
        {
            ops->dequeued(m_params.data(), m_vars.data(), m_stats.data(), d.band, len, now,
                          m_views);
        }
        if (d.action == QCORE_DEQ_SERVE)
        {
            m_counters[d.band].dequeuedPkts++;
            if (!m_bandEvent.IsEmpty())
            {
                m_bandEvent(item, Event::DEQUEUE, d.band, nullptr);
            }
            return item;
        }
        const char* reason = ReasonName(d.reason);
        m_counters[d.band].droppedPkts++;
        m_counters[d.band].droppedByReason[d.reason]++;
        if (!m_bandEvent.IsEmpty())
        {
            m_bandEvent(item, Event::DROP_HEAD, d.band, reason);
        }
        DropAfterDequeue(item, reason);
    }
    NS_FATAL_ERROR("QlabQueueDisc: the core asked for more head drops than packets queued");
    return nullptr;
}

// ---- statistics ---------------------------------------------------------------

const char*
QlabQueueDisc::GetReasonName(uint32_t reason)
{
    return reason > QCORE_REASON_NONE && reason < QCORE_REASON__COUNT ? kReasonNames[reason]
                                                                      : nullptr;
}

std::string
QlabQueueDisc::GetDisciplineName() const
{
    return m_ops ? std::string(m_ops->name) : std::string();
}

void
QlabQueueDisc::PrintStats(std::ostream& os)
{
    os << GetInstanceTypeId().GetName() << " (" << GetDisciplineName() << ", "
       << m_nbands << " bands)" << std::endl;
    GetStats().Print(os);
    os << std::endl;
    for (uint32_t b = 0; b < m_counters.size(); b++)
    {
        const BandCounters& c = m_counters[b];
        os << "band " << b << ": backlog " << GetBandBacklogPkts(b) << " packets "
           << GetBandBacklogBytes(b) << " bytes, enqueued " << c.enqueuedPkts << ", dequeued "
           << c.dequeuedPkts << ", marked " << c.markedPkts << ", dropped " << c.droppedPkts;
        std::string reasons;
        for (uint32_t r = QCORE_REASON_NONE + 1; r < N_REASONS; r++)
        {
            if (c.droppedByReason[r])
            {
                reasons += (reasons.empty() ? "" : ", ") + std::string(kReasonNames[r]) + " " +
                           std::to_string(c.droppedByReason[r]);
            }
        }
        if (!reasons.empty())
        {
            os << " (" << reasons << ")";
        }
        os << std::endl;
    }
}

// ---- typed queue discs: TypeIds generated from the core's parameter tables ----

namespace
{

// A core name the attribute naming can invert: '_'-separated words, each a
// lowercase letter followed by lowercase letters or digits.
bool
IsCoreName(const std::string& name)
{
    bool wordStart = true;
    for (char c : name)
    {
        if (c == '_')
        {
            if (wordStart)
            {
                return false;
            }
            wordStart = true;
        }
        else if (wordStart ? !(c >= 'a' && c <= 'z')
                           : !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
        {
            return false;
        }
        else
        {
            wordStart = false;
        }
    }
    return !wordStart;
}

bool
ParseDecimal(const char* s, uint64_t* out)
{
    uint64_t v = 0;
    if (!s || !*s)
    {
        return false;
    }
    for (; *s; s++)
    {
        if (*s < '0' || *s > '9' || v > (std::numeric_limits<uint64_t>::max() - 9) / 10)
        {
            return false;
        }
        v = v * 10 + static_cast<uint64_t>(*s - '0');
    }
    *out = v;
    return true;
}

std::string
Bound(const struct qcore_param_desc* d, uint64_t v)
{
    if (d->kind == QCORE_PARAM_PPM)
    {
        char buf[32];
        qcore_fmt_ppm(buf, sizeof(buf), static_cast<uint32_t>(v));
        return buf;
    }
    return std::to_string(v);
}

// The accepted values, for the help text and the checker's type information.
std::string
Form(const struct qcore_param_desc* d)
{
    const std::string range = Bound(d, d->min) + ".." + Bound(d, d->max);
    switch (d->kind)
    {
    case QCORE_PARAM_U32:
    case QCORE_PARAM_U64:
        return "integer " + range;
    case QCORE_PARAM_PPM:
        return "decimal with at most 6 places, " + range;
    case QCORE_PARAM_ENUM:
        return std::string("one of ") + d->choices;
    case QCORE_PARAM_BOOL:
        return "boolean";
    case QCORE_PARAM_U32_LIST:
        return "list a:b:... of up to " + std::to_string(QCORE_MAX_BANDS) + " integers " +
               range + " (one value: all)";
    }
    return "?";
}

/**
 * The checker of a StringValue attribute (PPM, ENUM, U32_LIST): the core's
 * own parser decides, and its message (naming the parameter, the expected
 * form and range) is printed when a value is refused; ns-3 then fails with
 * the attribute's name.
 */
class CoreParamChecker : public StringChecker
{
  public:
    CoreParamChecker(const struct qcore_param_desc* desc, std::string where)
        : m_desc(desc),
          m_where(std::move(where))
    {
    }

    bool Check(const AttributeValue& value) const override
    {
        const StringValue* v = dynamic_cast<const StringValue*>(&value);
        if (!v)
        {
            return false;
        }
        struct qcore_param_value parsed = {};
        char err[QCORE_ERRLEN] = "";
        if (qcore_param_parse(m_desc, v->Get().c_str(), &parsed, err, sizeof(err)) == 0)
        {
            return true;
        }
        // AttributeChecker::CreateValidValue checks a refused StringValue
        // twice (as given, then after a string round trip): print once.
        if (m_repeat != v->Get())
        {
            std::cerr << m_where << ": " << err << std::endl;
            m_repeat = v->Get();
        }
        else
        {
            m_repeat.clear();
        }
        return false;
    }

    std::string GetValueTypeName() const override
    {
        return "ns3::StringValue";
    }

    bool HasUnderlyingTypeInformation() const override
    {
        return true;
    }

    std::string GetUnderlyingTypeInformation() const override
    {
        return Form(m_desc);
    }

    Ptr<AttributeValue> Create() const override
    {
        return ns3::Create<StringValue>();
    }

    bool Copy(const AttributeValue& source, AttributeValue& destination) const override
    {
        const StringValue* src = dynamic_cast<const StringValue*>(&source);
        StringValue* dst = dynamic_cast<StringValue*>(&destination);
        if (!src || !dst)
        {
            return false;
        }
        *dst = *src;
        return true;
    }

  private:
    const struct qcore_param_desc* m_desc;
    std::string m_where; //!< "ns3::QlabNcqQueueDisc::Thresh"
    mutable std::string m_repeat; //!< the value just refused, not to print twice
};

} // namespace

/**
 * Accessor of a generated attribute: keeps the typed value qcore_configure()
 * takes (struct qcore_param_value) in QlabQueueDisc::m_paramAttributes.
 * Integers and booleans arrive typed; the string kinds (PPM, ENUM, U32_LIST)
 * go through the core's parser, which their checker has already run, and
 * keep their text for GetAttribute.
 */
class QlabQueueDisc::ParamAccessor : public AttributeAccessor
{
  public:
    ParamAccessor(uint32_t index, const struct qcore_param_desc* desc)
        : m_index(index),
          m_desc(desc)
    {
    }

    bool Set(ObjectBase* object, const AttributeValue& value) const override
    {
        QlabQueueDisc* disc = dynamic_cast<QlabQueueDisc*>(object);
        if (!disc)
        {
            return false;
        }
        ParamAttribute attribute;
        attribute.set = true;
        attribute.value.index = m_index;
        switch (m_desc->kind)
        {
        case QCORE_PARAM_U32:
        case QCORE_PARAM_U64: {
            const UintegerValue* u = dynamic_cast<const UintegerValue*>(&value);
            if (!u)
            {
                return false;
            }
            attribute.value.value = u->Get();
            break;
        }
        case QCORE_PARAM_BOOL: {
            const BooleanValue* b = dynamic_cast<const BooleanValue*>(&value);
            if (!b)
            {
                return false;
            }
            attribute.value.value = b->Get() ? 1 : 0;
            break;
        }
        default: {
            const StringValue* str = dynamic_cast<const StringValue*>(&value);
            char err[QCORE_ERRLEN] = "";
            if (!str || qcore_param_parse(m_desc, str->Get().c_str(), &attribute.value, err,
                                          sizeof(err)))
            {
                return false;
            }
            attribute.text = str->Get();
            break;
        }
        }
        if (disc->m_paramAttributes.size() <= m_index)
        {
            disc->m_paramAttributes.resize(m_index + 1);
        }
        disc->m_paramAttributes[m_index] = attribute;
        return true;
    }

    bool Get(const ObjectBase* object, AttributeValue& value) const override
    {
        const QlabQueueDisc* disc = dynamic_cast<const QlabQueueDisc*>(object);
        if (!disc || m_index >= disc->m_paramAttributes.size() ||
            !disc->m_paramAttributes[m_index].set)
        {
            return false;
        }
        const ParamAttribute& attribute = disc->m_paramAttributes[m_index];
        switch (m_desc->kind)
        {
        case QCORE_PARAM_U32:
        case QCORE_PARAM_U64: {
            UintegerValue* u = dynamic_cast<UintegerValue*>(&value);
            if (!u)
            {
                return false;
            }
            u->Set(attribute.value.value);
            return true;
        }
        case QCORE_PARAM_BOOL: {
            BooleanValue* b = dynamic_cast<BooleanValue*>(&value);
            if (!b)
            {
                return false;
            }
            b->Set(attribute.value.value != 0);
            return true;
        }
        default: {
            StringValue* str = dynamic_cast<StringValue*>(&value);
            if (!str)
            {
                return false;
            }
            str->Set(attribute.text);
            return true;
        }
        }
    }

    bool HasGetter() const override
    {
        return true;
    }

    bool HasSetter() const override
    {
        return true;
    }

  private:
    uint32_t m_index;                     //!< index in the discipline's parameter table
    const struct qcore_param_desc* m_desc; //!< the parameter's table entry
};

std::string
QlabQueueDisc::AttributeName(const std::string& coreName)
{
    std::string out;
    bool wordStart = true;
    for (char c : coreName)
    {
        if (c == '_')
        {
            wordStart = true;
            continue;
        }
        out += wordStart ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
        wordStart = false;
    }
    return out;
}

std::string
QlabQueueDisc::CoreParamName(const std::string& attributeName)
{
    std::string out;
    for (char c : attributeName)
    {
        if (c >= 'A' && c <= 'Z')
        {
            if (!out.empty())
            {
                out += '_';
            }
            out += static_cast<char>(c - 'A' + 'a');
        }
        else
        {
            out += c;
        }
    }
    return out;
}

std::string
QlabQueueDisc::TypedTypeIdName(const std::string& discipline)
{
    return "ns3::Qlab" + AttributeName(discipline) + "QueueDisc";
}

TypeId
QlabQueueDisc::MakeTypedTypeId(const struct qcore_disc_ops* ops)
{
    const std::string name = TypedTypeIdName(ops->name);
    NS_ABORT_MSG_UNLESS(IsCoreName(ops->name),
                        "QlabQueueDisc: discipline name '"
                            << ops->name << "' cannot name a TypeId (need [a-z][a-z0-9]* words)");
    {
        // The table's defaults must be valid before they become initial values.
        std::vector<uint64_t> scratch = CoreBuffer(ops->params_size);
        char err[QCORE_ERRLEN] = "";
        NS_ABORT_MSG_IF(qcore_params_defaults(ops, scratch.data(), err, sizeof(err)),
                        name << ": bad default in the core's table: " << err);
    }
    TypeId tid = TypeId(name)
                     .SetParent<QlabQueueDisc>()
                     .SetGroupName("TrafficControl")
                     .SetSize(sizeof(QlabQueueDisc))
                     .AddConstructor<QlabQueueDisc>();
    for (uint32_t i = 0; i < ops->nparams; i++)
    {
        const struct qcore_param_desc* d = &ops->params[i];
        NS_ABORT_MSG_UNLESS(IsCoreName(d->name),
                            name << ": parameter name '" << d->name
                                 << "' has no 1:1 attribute name (need [a-z][a-z0-9]* words)");
        const std::string attr = AttributeName(d->name);
        const std::string help = std::string(d->help) + " [" + d->unit + "; " + Form(d) +
                                 "; default " + d->dflt + "; core parameter " + d->name + "]";
        Ptr<const AttributeAccessor> accessor = Create<ParamAccessor>(i, d);
        switch (d->kind)
        {
        case QCORE_PARAM_U32:
        case QCORE_PARAM_U64: {
            uint64_t dflt = 0;
            NS_ABORT_MSG_UNLESS(ParseDecimal(d->dflt, &dflt),
                                name << ": default of " << d->name << " is not an integer");
            tid.AddAttribute(attr,
                             help,
                             UintegerValue(dflt),
                             accessor,
                             d->kind == QCORE_PARAM_U32
                                 ? MakeUintegerChecker<uint32_t>(d->min, d->max)
                                 : MakeUintegerChecker<uint64_t>(d->min, d->max));
            break;
        }
        case QCORE_PARAM_BOOL:
            tid.AddAttribute(attr,
                             help,
                             BooleanValue(std::strcmp(d->dflt, "1") == 0),
                             accessor,
                             MakeBooleanChecker());
            break;
        case QCORE_PARAM_PPM:
        case QCORE_PARAM_ENUM:
        case QCORE_PARAM_U32_LIST:
            tid.AddAttribute(attr,
                             help,
                             StringValue(d->dflt),
                             accessor,
                             Create<CoreParamChecker>(d, name + "::" + attr));
            break;
        default:
            NS_FATAL_ERROR(name << ": parameter " << d->name << " has unknown kind "
                                << unsigned(d->kind));
        }
    }
    return tid;
}

const std::vector<std::pair<TypeId, const struct qcore_disc_ops*>>&
QlabQueueDisc::TypedTypeIds()
{
    static const std::vector<std::pair<TypeId, const struct qcore_disc_ops*>> typed = [] {
        std::vector<std::pair<TypeId, const struct qcore_disc_ops*>> v;
        for (uint32_t i = 0; qcore_disciplines[i]; i++)
        {
            v.emplace_back(MakeTypedTypeId(qcore_disciplines[i]), qcore_disciplines[i]);
        }
        return v;
    }();
    return typed;
}

void
QlabQueueDisc::RegisterTypedQueueDiscs()
{
    TypedTypeIds();
}

bool
QlabQueueDisc::LookupTypedTypeId(const std::string& discipline, TypeId* tid)
{
    for (const auto& [t, ops] : TypedTypeIds())
    {
        if (discipline == ops->name)
        {
            *tid = t;
            return true;
        }
    }
    return false;
}

const struct qcore_disc_ops*
QlabQueueDisc::TypedDiscipline(TypeId tid)
{
    const TypeId generic = GetTypeId();
    for (TypeId t = tid; t != generic; t = t.GetParent())
    {
        for (const auto& [typedTid, ops] : TypedTypeIds())
        {
            if (t == typedTid)
            {
                return ops;
            }
        }
        if (!t.HasParent() || t.GetParent() == t)
        {
            break;
        }
    }
    return nullptr;
}

} // namespace ns3
