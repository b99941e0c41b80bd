#include "papervalues.h"

#include <array>

namespace tw {

namespace {

struct PaperValue {
    const char* id;    // figure id
    double exact;      // the example's exact value, base units
    const char* paper; // what the paper prints, with where
};

// docs/model.md §6 lists these with their derivations: GPT-2 small (P = 124,439,808), d = 768, T = 1,024,
// B = 32, s = 2 bytes. The DP payload P·s = 248,879,616 B; PP's boundary activation and TP's AllReduce
// B·T·d·s = 32·1,024·768·2 = 50,331,648 B.
constexpr std::array<PaperValue, 3> kPaperValues{{
    {"dp.payload_bytes", 248879616.0, "Example 5.1: 128M \u00d7 2 B \u2248 256 MB"},
    {"pp.payload_bytes", 50331648.0, "Example 5.2: \u2248 50 MB per micro-batch and boundary"},
    {"tp.payload_bytes", 50331648.0, "Example 5.3: \u2248 50.3 MB per AllReduce"},
}};

} // namespace

std::string paperRounding(const std::string& id, double value)
{
    for (const PaperValue& v : kPaperValues)
        if (id == v.id && value == v.exact)
            return v.paper;
    return {};
}

} // namespace tw
