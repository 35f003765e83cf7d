/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qlab-bulk-apps.h - the two ends of a qlab "bulk" flow (the papers' FTP
 * tasks): a sender that transfers exactly N bytes over one TCP connection as
 * fast as TCP allows, and a sink that counts the bytes delivered in order to
 * the receiving application and reports when the goal is reached.
 *
 * ns-3's BulkSendApplication and PacketSink are close, but neither sets the
 * socket's SegmentSize per flow (the workload's small-MSS flows need it on
 * both ends) nor counts retransmissions.
 */
#ifndef QLAB_BULK_APPS_H
#define QLAB_BULK_APPS_H

#include "ns3/address.h"
#include "ns3/application.h"
#include "ns3/callback.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/sequence-number.h"
#include "ns3/socket.h"
#include "ns3/tcp-header.h"
#include "ns3/tcp-socket-state.h"
#include "ns3/tcp-socket.h"

#include <cstdint>

namespace ns3
{

class Packet;
class QlabTcpSocket;
class TcpSocketBase;

/**
 * Sends `bytes` bytes to a sink over TCP from a given local port, refilling
 * the socket's send buffer whenever it has room, then closes the connection.
 * Counts the data segments TCP transmitted; a data segment starting below
 * the highest sequence number already sent is a retransmission.  The socket
 * is a QlabTcpSocket (qlab-tcp-socket.h).
 */
class QlabBulkSender : public Application
{
  public:
    static TypeId GetTypeId();
    QlabBulkSender();
    ~QlabBulkSender() override;

    /**
     * \param peer the sink's IPv4 address and port (an InetSocketAddress)
     * \param localPort the port the sender binds (the plan's src_port)
     * \param segmentBytes TCP payload per segment (MSS)
     * \param bytes application bytes to transfer
     * \param tos IPv4 ToS byte of the flow's packets
     */
    void Setup(const Address& peer,
               uint16_t localPort,
               uint32_t segmentBytes,
               uint64_t bytes,
               uint8_t tos);

    /// \param stream the ns-3 random stream of its socket's congestion
    /// control (QlabTcpSocket::AssignStreams), set when it starts
    void AssignStreams(int64_t stream);

    /// \return data segments transmitted (retransmissions included)
    uint64_t GetTxSegments() const;
    /// \return data segments retransmitted
    uint64_t GetRetxSegments() const;

    /// \return the connection's socket (null before the application starts)
    Ptr<QlabTcpSocket> GetSocket() const;

    /**
     * Stop now, mid-transfer (the plan's stop_ns): hand TCP nothing more
     * and abort the connection (QlabTcpSocket::Abort: one RST, then
     * silence).  Safe to call before the connection exists or after it
     * closed.
     */
    void Kill();

    /**
     * \param changed called when the connection's state or its congestion
     * state changes, or a SYN or a data segment is sent again (set before
     * the application starts)
     */
    void SetTcpChangeCallback(Callback<void> changed);

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;

    void ConnectionSucceeded(Ptr<Socket> socket);
    void ConnectionFailed(Ptr<Socket> socket);
    void SendData(Ptr<Socket> socket, uint32_t available);
    void Transmitted(Ptr<const Packet> payload,
                     const TcpHeader& header,
                     Ptr<const TcpSocketBase> socket);
    void StateChanged(TcpSocket::TcpStates_t from, TcpSocket::TcpStates_t to);
    void CongStateChanged(TcpSocketState::TcpCongState_t from, TcpSocketState::TcpCongState_t to);

    Address m_peer;
    uint16_t m_localPort;
    uint32_t m_segmentBytes;
    uint64_t m_goalBytes;
    uint8_t m_tos;
    int64_t m_stream = -1; //!< AssignStreams; -1: ns-3's default

    Ptr<QlabTcpSocket> m_socket;
    Callback<void> m_tcpChanged;
    uint32_t m_synsSent;
    bool m_connected;
    bool m_closed;          //!< Close() called: no more data
    uint64_t m_handedBytes; //!< bytes given to the socket so far

    bool m_anySent;
    SequenceNumber32 m_highestSent; //!< one past the last data byte sent
    uint64_t m_txSegments;
    uint64_t m_retxSegments;
};

/**
 * Accepts one TCP connection (then stops listening), reads everything that
 * arrives, records when the first and the last bytes were delivered, and
 * calls the completion callback once when `goalBytes` have been delivered.
 */
class QlabBulkSink : public Application
{
  public:
    static TypeId GetTypeId();
    QlabBulkSink();
    ~QlabBulkSink() override;

    /**
     * \param local address and port to listen on
     * \param segmentBytes TCP segment size of the accepted connection
     * \param goalBytes bytes after which the flow is complete
     * \param done called once, at completion
     */
    void Setup(const Address& local,
               uint32_t segmentBytes,
               uint64_t goalBytes,
               Callback<void> done);

    /// \param stream the ns-3 random stream of its listening socket's
    /// congestion control (QlabTcpSocket::AssignStreams; the accepted
    /// connection shares it), set when it starts
    void AssignStreams(int64_t stream);

    /// \return bytes delivered to this application so far
    uint64_t GetDeliveredBytes() const;
    /// \return whether goalBytes were delivered
    bool IsComplete() const;
    /// \return when the first bytes were delivered, ns (valid when GetDeliveredBytes() > 0)
    int64_t GetFirstRxNs() const;
    /// \return when the last bytes were delivered, ns: for a complete flow, when
    /// the goal was reached (valid when GetDeliveredBytes() > 0)
    int64_t GetLastRxNs() const;

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;

    void Accepted(Ptr<Socket> socket, const Address& from);
    void Received(Ptr<Socket> socket);

    Address m_local;
    uint32_t m_segmentBytes;
    uint64_t m_goalBytes;
    Callback<void> m_done;
    int64_t m_stream = -1; //!< AssignStreams; -1: ns-3's default

    Ptr<Socket> m_listener;
    Ptr<Socket> m_connection;
    uint64_t m_deliveredBytes;
    bool m_complete;
    int64_t m_firstRxNs;
    int64_t m_lastRxNs;
};

} // namespace ns3

#endif /* QLAB_BULK_APPS_H */
