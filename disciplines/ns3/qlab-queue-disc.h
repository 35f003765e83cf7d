/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-queue-disc.h - ns-3 adapter for the qlab discipline core (qcore).
 *
 * One queue disc per discipline of the core's registry
 * (disciplines/core/qcore.c), ns3::Qlab<Name>QueueDisc, generated from the
 * discipline's parameter table (below): the core decides, the queue disc
 * moves the packets.  It holds one DropTailQueue<QueueDiscItem> per band,
 * with a limit far above any backlog, because buffer limits are the core's
 * decision (an overflow drop with reason "overflow").  Beside each band's
 * queue it keeps the length and arrival time of the band's packets, taken
 * once at enqueue, and from them the band views the core reads (struct
 * qcore_band_view: backlog, head length, head arrival), updated on every
 * enqueue and removal rather than read back from the queues per call.
 *
 * What the core sees of an ns-3 packet (struct qcore_pkt), computed with
 * the core's own helpers so every backend feeds it the same inputs:
 *   len        item->GetSize(): for an Ipv4QueueDiscItem the IP total length
 *              (header included, no L2 framing).
 *   cls, prec, QCORE_PKT_ECT
 *              qcore_pkt_set_tos() of the IPv4 ToS byte: cls = tos >> 5
 *              (DSCP class selector), prec = (tos >> 3) & 3 (AF drop
 *              precedence), ECT when the ECN field is not Not-ECT.
 *   flow_hash  qcore_flow_hash(source, destination, source port, destination
 *              port, protocol) in host byte order, the ports read from the
 *              first four bytes of a TCP or UDP header (0 for other
 *              protocols and non-first fragments); 0 without computing it
 *              when the discipline declares QCORE_IGNORES_FLOW_HASH.
 *   QCORE_PKT_PURE_ACK
 *              a TCP segment with the ACK flag, no SYN/FIN/RST and no payload
 *              (data offset and flags read from the header's bytes 12-13).
 *   now_ns     Simulator::Now() in nanoseconds (also the item's time stamp
 *              and the band view's head arrival time).  The now_ns of
 *              dequeue() and dequeued() is Simulator::Now() too, or 0 for
 *              disciplines that declare QCORE_IGNORES_TIME.
 * Packets that are not IPv4 get cls = prec = flags = flow_hash = 0.  The
 * mapping is the protected virtual Classify(); a subclass can replace it
 * (the golden-vector harness qlab-ns3-golden reads cls/prec/flow from a
 * packet tag).  The "Classified" trace source reports, for each arrival,
 * the metadata the core was given.
 *
 * Verdicts: the enqueue decision first goes through qcore_mark_fallback()
 * (a MARK for a packet that is not ECN-capable becomes an AQM drop, as in
 * every backend).  QUEUE enqueues in the band; DROP calls DropBeforeEnqueue
 * with the core's reason name (the constants below); MARK calls Mark() and
 * queues.  On dequeue the core answers SERVE (send the head of a band),
 * DROP_HEAD (DropAfterDequeue with the reason, then ask again) or EMPTY;
 * after every removal the core is told through its dequeued() hook (skipped
 * for disciplines that declare QCORE_IGNORES_DEQUEUED).
 *
 * Randomness comes only from the core's generator (struct qcore_rng): its
 * seed is the stream given to AssignStreams(stream) (seed = (uint64_t)
 * stream; qlab-ns3-run passes each queue's plan seed), 1 when never
 * assigned.  The queue disc uses no ns-3 random stream.
 *
 * Peek() is not overridden: QueueDisc::DoPeek dequeues and holds the packet,
 * so the core counts a peeked packet as sent at peek time.  ns-3's transmit
 * path never peeks at a root queue disc.
 *
 * Typed queue discs.  One TypeId per discipline of the core's registry,
 * ns3::Qlab<Name>QueueDisc (ns3::QlabNcqQueueDisc, ...), is generated at
 * static initialisation from the discipline's qcore_param_desc table: a child
 * of ns3::QlabQueueDisc whose objects are QlabQueueDisc instances (the
 * TypeId, set by ObjectFactory, selects the discipline) and whose attributes
 * are the core's parameters, one each, named by AttributeName()
 * (size_bytes -> SizeBytes), with the core's default, help and unit, holding
 * the typed value (struct qcore_param_value) qcore_configure() takes:
 *   U32, U64   UintegerValue, MakeUintegerChecker(min, max) from the table;
 *   BOOL       BooleanValue;
 *   PPM, ENUM, U32_LIST
 *              StringValue in the core's syntax (exact decimal, choice name,
 *              "a:b:c"), checked and converted by the core's one parser
 *              (qcore_param_parse), whose message is printed when a value is
 *              refused.
 * The configure sequence (defaults, values, the core's check_params, band
 * count) is qcore_configure(), run at CheckConfig (NS_FATAL_ERROR with the
 * core's message and the attribute names it concerns).  ns3::QlabQueueDisc
 * itself runs no discipline and has no constructor in its TypeId: create a
 * typed one (ObjectFactory, TrafficControlHelper).
 */
#ifndef QLAB_QUEUE_DISC_H
#define QLAB_QUEUE_DISC_H

#include "ns3/queue-disc.h"
#include "ns3/traced-callback.h"

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "qcore.h"

namespace ns3
{

class QlabQueueDisc : public QueueDisc
{
  public:
    static TypeId GetTypeId();

    QlabQueueDisc();
    ~QlabQueueDisc() override;

    // Drop reasons: the core's names (qcore_reason_names), checked at CheckConfig.
    static constexpr const char* OVERFLOW_DROP = "overflow";
    static constexpr const char* AQM_DROP = "aqm";
    static constexpr const char* PRECEDENCE_LOCAL_DROP = "precedence_local";
    static constexpr const char* PRECEDENCE_CROSS_DROP = "precedence_cross";
    static constexpr const char* DELAY_DROP = "delay";
    // Mark reason (the core gives no reason with a MARK verdict).
    static constexpr const char* ECN_MARK = "ecn";

    /// What happened to a packet, as reported by the "BandEvent" trace source.
    enum class Event : uint8_t
    {
        ENQUEUE,      //!< admitted to a band
        DEQUEUE,      //!< sent from a band
        DROP_ARRIVAL, //!< dropped on arrival (never queued)
        DROP_HEAD,    //!< dropped from the head of a band
        MARK,         //!< CE-marked on arrival (an ENQUEUE follows)
    };

    /**
     * Signature of the "BandEvent" trace source.
     * \param item the packet
     * \param event what happened
     * \param band the band the core classified the packet into
     * \param reason drop reason name, or nullptr when not a drop
     */
    typedef void (*BandEventTracedCallback)(Ptr<const QueueDiscItem> item,
                                            Event event,
                                            uint32_t band,
                                            const char* reason);

    /**
     * Signature of the "Classified" trace source: an arriving packet and the
     * metadata the core is given for it (before its enqueue decision).
     */
    typedef void (*ClassifiedTracedCallback)(Ptr<const QueueDiscItem> item,
                                             const struct qcore_pkt* pkt);

    /// Number of drop reasons, including the unused index 0 (QCORE_REASON_NONE).
    static constexpr uint32_t N_REASONS = QCORE_REASON__COUNT;

    /// Cumulative per-band packet counters.
    struct BandCounters
    {
        uint64_t enqueuedPkts = 0; //!< admitted to the band (marked packets included)
        uint64_t dequeuedPkts = 0; //!< sent from the band
        uint64_t droppedPkts = 0;  //!< dropped on arrival or at the head, classified into the band
        uint64_t markedPkts = 0;   //!< CE-marked on arrival (then admitted)
        /// droppedPkts by reason, indexed by enum qcore_reason (name: GetReasonName)
        uint64_t droppedByReason[N_REASONS] = {};
    };

    /**
     * \param reason an enum qcore_reason value, 1..N_REASONS-1
     * \return the reason's name (the constants above), or nullptr
     */
    static const char* GetReasonName(uint32_t reason);

    /**
     * The ns-3 attribute name of a core parameter: CamelCase, each
     * '_'-separated word capitalised ("size_bytes" -> "SizeBytes",
     * "t_high_local" -> "THighLocal", "k" -> "K").  Also names the typed
     * TypeIds: ns3::Qlab<AttributeName(discipline)>QueueDisc.
     */
    static std::string AttributeName(const std::string& coreName);
    /// The inverse of AttributeName ("SizeBytes" -> "size_bytes").
    static std::string CoreParamName(const std::string& attributeName);
    /// "ns3::Qlab<Name>QueueDisc" for a core discipline name ("ncq" -> "ns3::QlabNcqQueueDisc").
    static std::string TypedTypeIdName(const std::string& discipline);
    /**
     * The generated TypeId of a discipline's typed queue disc.
     * \param discipline the core discipline's name
     * \param tid set to the TypeId
     * \return false when the core has no such discipline
     */
    static bool LookupTypedTypeId(const std::string& discipline, TypeId* tid);
    /// Register every typed queue disc (done at static initialisation; idempotent).
    static void RegisterTypedQueueDiscs();

    /// \return the core discipline this queue disc runs (valid after initialization)
    std::string GetDisciplineName() const;

    /**
     * Print QueueDisc::GetStats() (drops and marks under the core's reason
     * names) followed by one line per band: backlog, enqueued, dequeued,
     * marked, dropped by reason.
     */
    void PrintStats(std::ostream& os);

    /**
     * Seed the core's generator: seed = (uint64_t) stream (ns-3's way of
     * giving a model its randomness; qlab-ns3-run passes each queue's plan
     * seed).  May be called before or after initialization, before the
     * first packet.
     * \param stream the seed, as ns-3's stream number
     * \return 1, the number of streams used
     */
    int64_t AssignStreams(int64_t stream);

    /// \return the number of bands (valid after initialization)
    uint32_t GetNBands() const;
    /// \return packets queued in the band
    uint32_t GetBandBacklogPkts(uint32_t band) const;
    /// \return IP bytes queued in the band
    uint64_t GetBandBacklogBytes(uint32_t band) const;
    /// \return the band's cumulative counters
    const BandCounters& GetBandCounters(uint32_t band) const;

  protected:
    void DoDispose() override;

    /**
     * Fill the packet metadata the core sees (flow_hash, cls, prec, flags) for
     * an arriving packet; len and now_ns are already set and everything else
     * is zero.  The default is the mapping documented at the top of this file
     * (qcore_pkt_set_tos, qcore_flow_hash, pure-ACK detection).  Subclasses
     * may override it, e.g. a test harness that carries the metadata in a
     * packet tag.
     * \param item the arriving packet
     * \param pkt the core's view of it
     */
    virtual void Classify(Ptr<const QueueDiscItem> item, struct qcore_pkt* pkt) const;

    /// \return whether the discipline reads qcore_pkt.flow_hash (valid after initialization)
    bool NeedsFlowHash() const;

  private:
    class ParamAccessor; // stores a typed attribute in m_paramAttributes

    /// The generated typed TypeIds and the disciplines they run (built on first call).
    static const std::vector<std::pair<TypeId, const struct qcore_disc_ops*>>& TypedTypeIds();
    /// The discipline of a typed TypeId or of a TypeId derived from one, else nullptr.
    static const struct qcore_disc_ops* TypedDiscipline(TypeId tid);
    /// Build and register ns3::Qlab<Name>QueueDisc for one discipline.
    static TypeId MakeTypedTypeId(const struct qcore_disc_ops* ops);

    bool DoEnqueue(Ptr<QueueDiscItem> item) override;
    Ptr<QueueDiscItem> DoDequeue() override;
    bool CheckConfig() override;
    void InitializeParams() override;

    static const char* ReasonName(uint8_t reason);

    Ptr<InternalQueue> BandQueue(uint32_t band) const;

    /// What the adapter keeps of a queued packet for the band views: its
    /// length and arrival time, taken once at enqueue.
    struct QueuedFacts
    {
        uint32_t len;
        uint64_t arrivalNs;
    };

    /**
     * One band: its internal queue and, in the same order, the facts of
     * the packets it holds (a ring that grows by doubling), from which the
     * band's view is kept up to date on every enqueue and removal instead
     * of being read back from the queue before each call into the core.
     */
    struct Band
    {
        InternalQueue* queue = nullptr;  //!< GetInternalQueue(b), owned by the QueueDisc
        std::vector<QueuedFacts> facts;  //!< ring, size a power of two (or 0)
        uint32_t head = 0;               //!< index of the head packet's facts
    };

    /// Append a packet to a band: queue, facts and view.
    void BandPush(uint32_t band, Ptr<QueueDiscItem> item, uint32_t len, uint64_t arrivalNs);
    /// Remove the head of a band: queue, facts and view.  \return the packet and its length
    Ptr<QueueDiscItem> BandPop(uint32_t band, uint32_t* len);

    /// One parameter's attribute: its typed value and, for the string
    /// kinds, the text it was given as (what GetAttribute returns).
    struct ParamAttribute
    {
        bool set = false;
        struct qcore_param_value value = {};
        std::string text;
    };
    /// By index in the discipline's parameter table.
    std::vector<ParamAttribute> m_paramAttributes;

    uint64_t m_seed; //!< seed of the core's generator (AssignStreams)

    // Core instance
    const struct qcore_disc_ops* m_ops;
    std::vector<uint64_t> m_params; //!< the core's params struct (8-byte aligned)
    uint32_t m_nbands;
    std::vector<uint64_t> m_vars;
    std::vector<uint64_t> m_stats;
    struct qcore_rng m_rng;

    std::vector<BandCounters> m_counters;
    std::vector<Band> m_bands;
    /// What the core sees of the bands, kept current by BandPush/BandPop.
    struct qcore_band_view m_views[QCORE_MAX_BANDS];
    uint32_t m_backlogPkts; //!< packets in all bands

    TracedCallback<Ptr<const QueueDiscItem>, Event, uint32_t, const char*> m_bandEvent;
    TracedCallback<Ptr<const QueueDiscItem>, const struct qcore_pkt*> m_classified;
};

} // namespace ns3

#endif /* QLAB_QUEUE_DISC_H */
