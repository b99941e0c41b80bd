#pragma once
// Stage 5: payload bytes vs bytes on the wire. Each protocol cuts a transfer into packets of at most
// `payload` bytes and adds `overhead` bytes to each (docs/model.md §5):
//   PCIe (any generation)   MPS/(MPS+24) per TLP; MPS 256 by default (8.6 % of the wire; 4.5 % at 512)
//                           24 B = TLP header 16 (4DW, 64-bit address) + sequence 2 + LCRC 4 + framing 2;
//                           DLLPs (ACK, flow control) and 128b/130b encoding are not counted.
//   NVLink 3/4              one 16-B header flit per packet of up to 256 B of data (16 data flits):
//                           6.25 %; byte-enable and address-extension flits are not counted.
//   InfiniBand HDR/NDR      26 B per packet of 4,096 B (MTU 4096): LRH 8 + BTH 12 + ICRC 4 + VCRC 2 (0.63 %).
//   RoCEv2                  82 B per packet of 4,096 B (RoCE MTU 4096, jumbo Ethernet frames):
//                           preamble 8 + Ethernet 14 + FCS 4 + inter-frame gap 12 + IPv4 20 + UDP 8 +
//                           BTH 12 + ICRC 4 (2.0 %).
//   Ethernet (TCP/IPv4)     90 B per 1,448-B segment (MTU 1500, TCP timestamps): preamble 8 + Ethernet 14
//                           + FCS 4 + gap 12 + IPv4 20 + TCP 20 + options 12 (6.2 %).
//   TCP over loopback       52 B per segment (IPv4 20 + TCP 20 + timestamps 12, no Ethernet framing);
//                           payload per segment = MTU 65,536 − 20 − 32 = 65,484 B (0.079 %).
//   host memory bus         no packets, no overhead.
// A transfer of P bytes is ceil(P / payload) packets; P = 0 puts nothing on the wire.

#include "fabric/topology.h"

#include <cstdint>
#include <string>

namespace tw::network {

struct PacketFormat {
    Bytes payload = 0;   // payload bytes per packet (0: not packetized, no overhead)
    Bytes overhead = 0;  // bytes added per packet
    std::string formula; // "MPS/(MPS+24) with MPS 256 B per TLP"
};

inline constexpr Bytes kDefaultPcieMps = 256;

// The packet format of a protocol; pcieMaxPayload applies to PCIe only (128 … 4096).
[[nodiscard]] PacketFormat packetFormat(Protocol p, Bytes pcieMaxPayload = kDefaultPcieMps);

// Bytes on the wire for one transfer of `payload` bytes: payload + ceil(payload / per-packet) × overhead.
[[nodiscard]] Bytes wireBytes(Protocol p, Bytes payload, Bytes pcieMaxPayload = kDefaultPcieMps);

// Steady-state payload efficiency payload / (payload + overhead) of full packets (1 when not packetized).
[[nodiscard]] double efficiency(Protocol p, Bytes pcieMaxPayload = kDefaultPcieMps);

// Overhead as a share of the wire bytes of full packets, 1 − efficiency = overhead / (payload + overhead):
// the figure docs/model.md §5.2 quotes (PCIe 24/280 = 8.6 % at MPS 256).
[[nodiscard]] double overheadShare(Protocol p, Bytes pcieMaxPayload = kDefaultPcieMps);

} // namespace tw::network
