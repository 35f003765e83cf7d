/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-queue-disc.cc - ns-3 adapter for the qlab discipline core; see
 * qlab-queue-disc.h for what the core sees and how verdicts are carried out.
 */
#include "qlab-queue-disc.h"

#include "ns3/abort.h"
#include "ns3/drop-tail-queue.h"
#include "ns3/ipv4-header.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/tcp-header.h"
#include "ns3/uinteger.h"

#include <cstring>
#include <limits>

#include "qcore_params.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("QlabQueueDisc");

NS_OBJECT_ENSURE_REGISTERED(QlabQueueDisc);

namespace
{

constexpr uint8_t kIpProtocolTcp = 6;

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

uint64_t
NowNs()
{
    return static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
}

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
    static TypeId tid =
        TypeId("ns3::QlabQueueDisc")
            .SetParent<QueueDisc>()
            .SetGroupName("TrafficControl")
            .AddConstructor<QlabQueueDisc>()
            .AddAttribute("Discipline",
                          "Name of the qlab core discipline (e.g. droptail, prio, ncq).",
                          StringValue("droptail"),
                          MakeStringAccessor(&QlabQueueDisc::m_discipline),
                          MakeStringChecker())
            .AddAttribute("Params",
                          "Discipline parameters as name=value pairs separated by commas, "
                          "in the core's exact syntax (qlab replay DISC --help); "
                          "unset parameters keep the core's defaults.",
                          StringValue(""),
                          MakeStringAccessor(&QlabQueueDisc::m_params),
                          MakeStringChecker())
            .AddAttribute("Seed",
                          "Seed of the core's random generator (SplitMix64).",
                          UintegerValue(1),
                          MakeUintegerAccessor(&QlabQueueDisc::m_seed),
                          MakeUintegerChecker<uint64_t>())
            .AddTraceSource("BandEvent",
                            "A packet was enqueued in, dequeued from, dropped from or "
                            "marked in a band.",
                            MakeTraceSourceAccessor(&QlabQueueDisc::m_bandEvent),
                            "ns3::QlabQueueDisc::BandEventTracedCallback");
    return tid;
}

QlabQueueDisc::QlabQueueDisc()
    : QueueDisc(QueueDiscSizePolicy::NO_LIMITS),
      m_seed(1),
      m_rng{0}
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
    m_core = CoreConfig();
    m_vars.clear();
    m_stats.clear();
    m_counters.clear();
    QueueDisc::DoDispose();
}

bool
QlabQueueDisc::Configure(const std::string& discipline,
                         const std::string& params,
                         CoreConfig* config,
                         std::string* error)
{
    char err[QCORE_ERRLEN] = "";

    config->ops = qcore_find(discipline.c_str());
    if (!config->ops)
    {
        std::string names;
        for (uint32_t i = 0; qcore_disciplines[i]; i++)
        {
            names += (i ? ", " : "") + std::string(qcore_disciplines[i]->name);
        }
        *error = "unknown discipline '" + discipline + "' (known: " + names + ")";
        return false;
    }
    const struct qcore_disc_ops* ops = config->ops;
    config->params = CoreBuffer(ops->params_size);
    if (qcore_params_defaults(ops, config->params.data(), err, sizeof(err)))
    {
        *error = err;
        return false;
    }

    // "name=value,name=value"; an empty string keeps every default.
    for (std::size_t pos = 0; !params.empty();)
    {
        std::size_t end = params.find(',', pos);
        if (end == std::string::npos)
        {
            end = params.size();
        }
        const std::string pair = params.substr(pos, end - pos);
        const std::size_t eq = pair.find('=');
        if (eq == std::string::npos || eq == 0)
        {
            *error = "expected name=value, got '" + pair + "'";
            return false;
        }
        const std::string name = pair.substr(0, eq);
        const std::string value = pair.substr(eq + 1);
        if (qcore_params_set(ops, config->params.data(), name.c_str(), value.c_str(), err,
                             sizeof(err)))
        {
            *error = err;
            return false;
        }
        if (end == params.size())
        {
            break;
        }
        pos = end + 1;
    }

    if (ops->check_params(config->params.data(), err, sizeof(err)))
    {
        *error = err;
        return false;
    }
    config->nbands = ops->nbands(config->params.data());
    if (config->nbands == 0 || config->nbands > QCORE_MAX_BANDS)
    {
        *error = "discipline '" + discipline + "' reports " + std::to_string(config->nbands) +
                 " bands (must be 1.." + std::to_string(QCORE_MAX_BANDS) + ")";
        return false;
    }
    return true;
}

bool
QlabQueueDisc::ValidateConfig(const std::string& discipline,
                              const std::string& params,
                              std::string* error)
{
    CoreConfig config;
    return Configure(discipline, params, &config, error);
}

bool
QlabQueueDisc::ValidatePacketClass(const std::string& discipline,
                                   const std::string& params,
                                   uint8_t cls,
                                   uint8_t prec,
                                   std::string* error)
{
    CoreConfig config;
    if (!Configure(discipline, params, &config, error))
    {
        return false;
    }
    if (!config.ops->check_pkt)
    {
        return true;
    }
    struct qcore_pkt pkt;
    std::memset(&pkt, 0, sizeof(pkt));
    pkt.len = 40;
    pkt.cls = cls;
    pkt.prec = prec;
    char err[QCORE_ERRLEN] = "";
    if (config.ops->check_pkt(config.params.data(), &pkt, err, sizeof(err)))
    {
        *error = err;
        return false;
    }
    return true;
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

    std::string error;
    if (!Configure(m_discipline, m_params, &m_core, &error))
    {
        // A bad configuration is the user's mistake: stop with its message
        // (CheckConfig's return value is only asserted, and asserts are off
        // in optimized ns-3 builds).
        NS_FATAL_ERROR("QlabQueueDisc (Discipline=" << m_discipline << ", Params=" << m_params
                                                    << "): " << error);
    }

    // One FIFO per band.  The core enforces every limit, so the internal
    // queues must never drop: their limit is the largest a QueueSize holds.
    for (uint32_t b = 0; b < m_core.nbands; b++)
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
    const struct qcore_disc_ops* ops = m_core.ops;
    m_vars = CoreBuffer(ops->vars_size);
    m_stats = CoreBuffer(ops->stats_size); // counters start at zero
    ops->reset(m_core.params.data(), m_vars.data());
    qcore_rng_seed(&m_rng, m_seed);
    m_counters.assign(m_core.nbands, BandCounters());
}

Ptr<QueueDisc::InternalQueue>
QlabQueueDisc::BandQueue(uint32_t band) const
{
    return GetInternalQueue(band);
}

uint32_t
QlabQueueDisc::GetNBands() const
{
    return m_core.nbands;
}

uint32_t
QlabQueueDisc::GetBandBacklogPkts(uint32_t band) const
{
    NS_ASSERT(band < m_core.nbands);
    return BandQueue(band)->GetNPackets();
}

uint64_t
QlabQueueDisc::GetBandBacklogBytes(uint32_t band) const
{
    NS_ASSERT(band < m_core.nbands);
    return BandQueue(band)->GetNBytes();
}

const QlabQueueDisc::BandCounters&
QlabQueueDisc::GetBandCounters(uint32_t band) const
{
    NS_ASSERT(band < m_counters.size());
    return m_counters[band];
}

void
QlabQueueDisc::FillBandViews(struct qcore_band_view* views) const
{
    std::memset(views, 0, sizeof(struct qcore_band_view) * QCORE_MAX_BANDS);
    for (uint32_t b = 0; b < m_core.nbands; b++)
    {
        Ptr<InternalQueue> q = BandQueue(b);
        views[b].backlog_pkts = q->GetNPackets();
        views[b].backlog_bytes = q->GetNBytes();
        Ptr<const QueueDiscItem> head = q->Peek();
        if (head)
        {
            views[b].head_len = head->GetSize();
            views[b].head_arrival_ns = static_cast<uint64_t>(head->GetTimeStamp().GetNanoSeconds());
        }
    }
}

void
QlabQueueDisc::Classify(Ptr<const QueueDiscItem> item, struct qcore_pkt* pkt) const
{
    pkt->flow_hash = item->Hash(0);
    Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
    if (!ip)
    {
        return;
    }
    const Ipv4Header& header = ip->GetHeader();
    const uint8_t tos = header.GetTos();
    pkt->cls = tos >> 5;
    pkt->prec = (tos >> 3) & 3;

    if (header.GetProtocol() != kIpProtocolTcp || header.GetFragmentOffset() != 0)
    {
        return;
    }
    Ptr<Packet> segment = ip->GetPacket();
    if (segment->GetSize() < 20)
    {
        return;
    }
    TcpHeader tcp;
    segment->PeekHeader(tcp);
    const uint8_t flags = tcp.GetFlags();
    const bool payload = segment->GetSize() > tcp.GetSerializedSize();
    if (!payload && (flags & TcpHeader::ACK) &&
        !(flags & (TcpHeader::SYN | TcpHeader::FIN | TcpHeader::RST)))
    {
        pkt->flags |= QCORE_PKT_PURE_ACK;
    }
}

bool
QlabQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
    NS_LOG_FUNCTION(this << item);
    const struct qcore_disc_ops* ops = m_core.ops;
    const uint64_t now = NowNs();

    struct qcore_pkt pkt;
    std::memset(&pkt, 0, sizeof(pkt));
    pkt.now_ns = now;
    pkt.len = item->GetSize();
    Classify(item, &pkt);
    if (ops->check_pkt)
    {
        char err[QCORE_ERRLEN] = "";
        if (ops->check_pkt(m_core.params.data(), &pkt, err, sizeof(err)))
        {
            NS_FATAL_ERROR("QlabQueueDisc (" << m_discipline << "): packet cls="
                                             << unsigned(pkt.cls) << " prec=" << unsigned(pkt.prec)
                                             << " rejected: " << err);
        }
    }

    struct qcore_band_view views[QCORE_MAX_BANDS];
    FillBandViews(views);
    const struct qcore_decision d =
        ops->enqueue(m_core.params.data(), m_vars.data(), m_stats.data(), &pkt, views, &m_rng);
    NS_ABORT_MSG_IF(d.band >= m_core.nbands,
                    "QlabQueueDisc: the core chose band " << unsigned(d.band) << " of "
                                                          << m_core.nbands);

    switch (d.verdict)
    {
    case QCORE_DROP: {
        const char* reason = ReasonName(d.reason);
        m_counters[d.band].droppedPkts++;
        m_bandEvent(item, Event::DROP_ARRIVAL, d.band, reason);
        DropBeforeEnqueue(item, reason);
        return false;
    }
    case QCORE_MARK:
        if (!Mark(item, ECN_MARK))
        {
            m_counters[d.band].droppedPkts++;
            m_bandEvent(item, Event::DROP_ARRIVAL, d.band, AQM_DROP);
            DropBeforeEnqueue(item, AQM_DROP);
            return false;
        }
        m_bandEvent(item, Event::MARK, d.band, nullptr);
        break;
    case QCORE_QUEUE:
        break;
    default:
        NS_FATAL_ERROR("QlabQueueDisc: the core returned verdict " << unsigned(d.verdict));
    }

    // QueueDisc::Enqueue stamps the item after DoEnqueue returns; stamp it
    // here too so the band's head arrival time is right from the start.
    item->SetTimeStamp(Simulator::Now());
    if (!BandQueue(d.band)->Enqueue(item))
    {
        NS_FATAL_ERROR("QlabQueueDisc: internal queue of band " << unsigned(d.band)
                                                                << " refused a packet");
    }
    m_counters[d.band].enqueuedPkts++;
    m_bandEvent(item, Event::ENQUEUE, d.band, nullptr);
    return true;
}

Ptr<QueueDiscItem>
QlabQueueDisc::DoDequeue()
{
    NS_LOG_FUNCTION(this);
    const struct qcore_disc_ops* ops = m_core.ops;
    const uint64_t now = NowNs();
    struct qcore_band_view views[QCORE_MAX_BANDS];

    // Every DROP_HEAD removes a packet, so backlog + 1 rounds always end
    // in SERVE or EMPTY unless the core misbehaves.
    const uint32_t rounds = GetNPackets() + 1;
    for (uint32_t i = 0; i < rounds; i++)
    {
        FillBandViews(views);
        const struct qcore_deq d = ops->dequeue(m_core.params.data(), m_vars.data(), views, now);
        if (d.action == QCORE_DEQ_EMPTY)
        {
            return nullptr;
        }
        NS_ABORT_MSG_IF(d.action != QCORE_DEQ_SERVE && d.action != QCORE_DEQ_DROP_HEAD,
                        "QlabQueueDisc: the core returned dequeue action " << unsigned(d.action));
        NS_ABORT_MSG_IF(d.band >= m_core.nbands || views[d.band].backlog_pkts == 0,
                        "QlabQueueDisc: the core chose empty or missing band "
                            << unsigned(d.band));

        Ptr<QueueDiscItem> item = BandQueue(d.band)->Dequeue();
        FillBandViews(views);
        ops->dequeued(m_core.params.data(), m_vars.data(), m_stats.data(), d.band,
                      item->GetSize(), now, views);
        if (d.action == QCORE_DEQ_SERVE)
        {
            m_counters[d.band].dequeuedPkts++;
            m_bandEvent(item, Event::DEQUEUE, d.band, nullptr);
            return item;
        }
        const char* reason = ReasonName(d.reason);
        m_counters[d.band].droppedPkts++;
        m_bandEvent(item, Event::DROP_HEAD, d.band, reason);
        DropAfterDequeue(item, reason);
    }
    NS_FATAL_ERROR("QlabQueueDisc: the core asked for more head drops than packets queued");
    return nullptr;
}

} // namespace ns3
