/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ns3-tcp-fixes.cc - a fix for a crash in Debian's ns-3 3.37 TCP, applied
 * without rebuilding ns-3.
 *
 * ns-3 issue #991 (fixed upstream in ns-3.41, commit 13c1b9b63, "TCP crashes
 * due to sending zero-length segment"): TcpTxBuffer::NextSeg() rule (2)
 * tests `m_sentSize <= rWnd` where it means `<`.  When the sender has
 * exactly the receiver's window outstanding in sequence space but fewer
 * bytes "in flight" (after duplicate ACKs: limited transmit, fast recovery
 * or SACK), NextSeg() offers a zero-length segment, CopyFromSequence()
 * returns nullptr and TcpRateLinux::SkbSent() dereferences it.  qlab hits
 * this in every run that is receiver-window limited, e.g. the papers'
 * setting of no window scaling with 64 KiB windows and more than a few
 * flows.
 *
 * The fix: this executable defines TcpTxBuffer::NextSeg itself.  TcpSocketBase
 * calls NextSeg through the PLT of libns3-internet, so the dynamic linker
 * binds those calls to this definition, which calls the library's own
 * NextSeg (dlsym RTLD_NEXT) and turns a zero-length answer into "nothing to
 * send" -- exactly what the upstream one-character fix does, since rules (1)
 * and (3) always return a full segment.  Built only against ns-3 < 3.41.
 */
#include "ns3/abort.h"
#include "ns3/tcp-tx-buffer.h"
#include "ns3/version-defines.h"

#if NS3_VERSION_MAJOR == 3 && NS3_VERSION_MINOR < 41

#include <dlfcn.h>

namespace ns3
{

namespace
{

// The Itanium C++ ABI passes `this` as the first argument of a member function.
using NextSegFunction = bool (*)(const TcpTxBuffer*, SequenceNumber32*, SequenceNumber32*, bool);

NextSegFunction
LibraryNextSeg()
{
    static const NextSegFunction original = reinterpret_cast<NextSegFunction>(
        dlsym(RTLD_NEXT, "_ZNK3ns311TcpTxBuffer7NextSegEPNS_14SequenceNumberIjiEES3_b"));
    NS_ABORT_MSG_IF(!original, "ns3-tcp-fixes: TcpTxBuffer::NextSeg not found in libns3-internet");
    return original;
}

} // namespace

bool
TcpTxBuffer::NextSeg(SequenceNumber32* seq, SequenceNumber32* seqHigh, bool isRecovery) const
{
    if (!LibraryNextSeg()(this, seq, seqHigh, isRecovery))
    {
        return false;
    }
    return *seqHigh > *seq;
}

} // namespace ns3

#endif
