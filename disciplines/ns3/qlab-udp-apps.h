/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-udp-apps.h - the two ends of a qlab UDP flow (apps `cbr`, `onoff`,
 * `voip`; docs/jobs.md): a sender that replays the job's on-periods, sending
 * one datagram of a fixed IP length every `interval` while on, and a sink
 * that counts what arrives and its one-way delay.  App `poisson` sends at
 * Poisson times instead: exponential gaps drawn by the generator the job
 * contract specifies (QlabPoissonStream, docs/jobs.md), from the seed in the
 * job, so every backend that builds it sends at the same instants.
 *
 * The on/off schedule is drawn by `qlab expand` from the run's seed and
 * carried in the job, so every backend replays the same packets.  ns-3's
 * OnOffApplication draws its own periods and carries no send time; the
 * sender here writes a SeqTsHeader (sequence number, send time) at the
 * start of each payload for the sink.
 */
#ifndef QLAB_UDP_APPS_H
#define QLAB_UDP_APPS_H

#include "qcore.h"

#include "ns3/address.h"
#include "ns3/application.h"
#include "ns3/event-id.h"
#include "ns3/ptr.h"
#include "ns3/socket.h"

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * The job contract's Poisson send times (docs/jobs.md, app `poisson`;
 * qlab.plan.poisson_times is the reference): the core's SplitMix64
 * (qcore_rng) seeded with the flow's poisson_seed, u = (x >> 11) * 2^-53, gap = -log1p(-u) * mean, rounded
 * half up to the nanosecond.
 */
class QlabPoissonStream
{
  public:
    explicit QlabPoissonStream(uint64_t seed)
    {
        qcore_rng_seed(&m_rng, seed);
    }

    /// The next gap of mean meanNs, integer ns (>= 0).
    int64_t NextGapNs(double meanNs);

    /**
     * The next exponential IP length (docs/jobs.md, size_mean_bytes;
     * qlab.plan.exponential_sizes is the reference): minBytes +
     * floor(-log1p(-u) * (meanBytes - minBytes) + 0.5), at most maxBytes.
     */
    uint32_t NextSizeBytes(double meanBytes, uint32_t minBytes, uint32_t maxBytes);

  private:
    double NextExponential(); //!< -log1p(-u), u = (x >> 11) * 2^-53
    struct qcore_rng m_rng;   //!< the core's SplitMix64
};

/**
 * Sends `ipBytes`-byte IPv4 datagrams (UDP payload ipBytes - 28) to a sink
 * from a given local port, one every `intervalNs`, at on_start + k *
 * interval for every k with on_start + k * interval < on_end, in each
 * on-period.
 */
class QlabUdpSender : public Application
{
  public:
    static TypeId GetTypeId();
    QlabUdpSender();
    ~QlabUdpSender() override;

    /// IPv4 + UDP headers: the UDP payload is the IP length minus this.
    static constexpr uint32_t kHeaderBytes = 28;
    /// The smallest IP length: headers plus the SeqTsHeader the sink reads.
    static constexpr uint32_t kMinIpBytes = kHeaderBytes + 12;

    /**
     * \param peer the sink's IPv4 address and port (an InetSocketAddress)
     * \param localPort the port the sender binds (the plan's src_port)
     * \param ipBytes IP length of every datagram (>= kMinIpBytes)
     * \param intervalNs time between datagrams while on (> 0)
     * \param onPeriods [start, end) in ns of simulation time, sorted, disjoint
     * \param tos IPv4 ToS byte of the flow's packets
     */
    void Setup(const Address& peer,
               uint16_t localPort,
               uint32_t ipBytes,
               int64_t intervalNs,
               std::vector<std::pair<int64_t, int64_t>> onPeriods,
               uint8_t tos);

    /**
     * Send at Poisson times instead of every intervalNs (app `poisson`): in
     * each on-period [s, e), at s + g1, s + g1 + g2, ... while before e,
     * the gaps from QlabPoissonStream(seed), one stream across the periods,
     * of mean meanIntervalsNs[k] in period k (one per period: the same for
     * a plain Poisson source, its state's for a Markov-modulated one).
     * Call after Setup (whose intervalNs is unused).
     */
    void SetPoisson(std::vector<double> meanIntervalsNs, uint64_t seed);

    /**
     * Exponential datagram sizes (size_mean_bytes): each datagram's IP
     * length from QlabPoissonStream(seed).NextSizeBytes(meanBytes,
     * kMinIpBytes, ipBytes of Setup), in the order they are sent.
     */
    void SetExponentialSizes(double meanBytes, uint64_t seed);

    /// \return datagrams handed to the socket so far
    uint64_t GetTxPackets() const;

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;
    void SendAt(std::size_t period, uint64_t k);
    /// poisson: schedule the first send at or after `fromNs` in `period` or a later one
    void SchedulePoisson(std::size_t period, int64_t fromNs);

    Address m_peer;
    uint16_t m_localPort;
    uint32_t m_ipBytes;
    int64_t m_intervalNs;
    std::vector<std::pair<int64_t, int64_t>> m_onPeriods;
    uint8_t m_tos;
    Ptr<Socket> m_socket;
    EventId m_next;
    uint64_t m_txPackets;
    std::unique_ptr<QlabPoissonStream> m_poisson; //!< null unless app poisson
    std::vector<double> m_periodMeansNs;          //!< poisson: each period's mean gap
    std::unique_ptr<QlabPoissonStream> m_sizes;   //!< null unless exponential sizes
    double m_sizeMeanBytes;
};

/**
 * Receives a UDP flow: datagrams, payload bytes, when the first and the last
 * arrived, and the one-way delay (receive time minus the send time in the
 * SeqTsHeader) of each.
 */
class QlabUdpSink : public Application
{
  public:
    static TypeId GetTypeId();
    QlabUdpSink();
    ~QlabUdpSink() override;

    void Setup(const Address& local);

    uint64_t GetRxPackets() const;
    /// UDP payload bytes received
    uint64_t GetRxBytes() const;
    /// sum of one-way delays, ns
    int64_t GetDelaySumNs() const;
    /// largest one-way delay, ns (0 when nothing arrived)
    int64_t GetDelayMaxNs() const;
    /// when the first datagram arrived, ns (valid when GetRxPackets() > 0)
    int64_t GetFirstRxNs() const;
    /// when the last datagram arrived, ns (valid when GetRxPackets() > 0)
    int64_t GetLastRxNs() const;

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;
    void Received(Ptr<Socket> socket);

    Address m_local;
    Ptr<Socket> m_socket;
    uint64_t m_rxPackets;
    uint64_t m_rxBytes;
    int64_t m_delaySumNs;
    int64_t m_delayMaxNs;
    int64_t m_firstRxNs;
    int64_t m_lastRxNs;
};

} // namespace ns3

#endif /* QLAB_UDP_APPS_H */
