#include "overhead.h"

#include "base/units.h"

#include <cmath>

namespace tw::network {

// docs/model.md §5; the byte counts are spelled out in overhead.h.
PacketFormat packetFormat(Protocol p, Bytes mps)
{
    switch (p) {
    case Protocol::PcieGen3:
    case Protocol::PcieGen4:
    case Protocol::PcieGen5:
        return {mps, 24, "MPS/(MPS+24) per TLP, MPS = " + formatCount(mps, 0) + " B"};
    case Protocol::NvLink3:
    case Protocol::NvLink4: return {256, 16, "one 16-B header flit per 256 B of data"};
    case Protocol::InfinibandHdr:
    case Protocol::InfinibandNdr: return {4096, 26, "26 B per 4,096-B packet (LRH 8 + BTH 12 + ICRC 4 + VCRC 2)"};
    case Protocol::RoCEv2:
        return {4096, 82, "82 B per 4,096-B packet (preamble 8 + Ethernet 14 + FCS 4 + gap 12 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4)"};
    case Protocol::Ethernet10G:
    case Protocol::Ethernet25G:
    case Protocol::Ethernet100G:
    case Protocol::Ethernet400G:
        return {1448, 90, "90 B per 1,448-B TCP segment (preamble 8 + Ethernet 14 + FCS 4 + gap 12 + IPv4 20 + TCP 20 + timestamps 12)"};
    case Protocol::TcpLoopback:
        return {65536 - 20 - 32, 52, "52 B per 65,484-B segment (MTU 65,536; IPv4 20 + TCP 20 + timestamps 12)"};
    case Protocol::MemoryBus: return {0, 0, "no packets"};
    }
    return {0, 0, "no packets"};
}

Bytes wireBytes(Protocol p, Bytes payload, Bytes mps)
{
    const PacketFormat f = packetFormat(p, mps);
    if (f.payload <= 0 || payload <= 0)
        return payload;
    return payload + std::ceil(payload / f.payload) * f.overhead;
}

double efficiency(Protocol p, Bytes mps)
{
    const PacketFormat f = packetFormat(p, mps);
    return f.payload <= 0 ? 1.0 : f.payload / (f.payload + f.overhead);
}

double overheadShare(Protocol p, Bytes mps)
{
    const PacketFormat f = packetFormat(p, mps);
    return f.payload <= 0 ? 0.0 : f.overhead / (f.payload + f.overhead);
}

} // namespace tw::network
