#pragma once
// Named units. Values are stored in base units (B, s, FLOP, B/s); each conversion happens once,
// here. Display units (MB = 10^6 B or MiB) are a viewer's choice, never part of the data.

#include <cstdint>
#include <string>

namespace tw {

using Bytes = double;
using Seconds = double;
using Flops = double;
using BytesPerSecond = double;
using Count = double;

// How a viewer wants byte sizes written: decimal (kB, MB = 10^6 B) or binary (KiB, MiB = 2^20 B).
enum class ByteUnits { Decimal, Binary };

struct DisplayUnits {
    ByteUnits bytes = ByteUnits::Decimal;
    int significantDigits = 4;
    bool operator==(const DisplayUnits&) const = default;
};

// "1,234,567" (commas every three digits; negative numbers keep their sign).
[[nodiscard]] std::string formatInteger(std::int64_t value);
// The same for counts read from files, up to 18,446,744,073,709,551,615 (never shown as negative).
[[nodiscard]] std::string formatUnsigned(std::uint64_t value);
// A count that may be a fraction: integers with separators, fractions with `decimals` digits.
[[nodiscard]] std::string formatCount(double value, int decimals = 2);
// "248.9 MB" or "237.4 MiB"; values below 1 kB/KiB are written in bytes.
[[nodiscard]] std::string formatBytes(Bytes value, const DisplayUnits& units = {});
// "1.50 ms", "240 ms", "2.5 s", "12 µs".
[[nodiscard]] std::string formatSeconds(Seconds value, int significantDigits = 3);
// A span of time people plan with: formatSeconds below a minute, then "4.2 min", "3.09 h", "12.3 days".
[[nodiscard]] std::string formatDuration(Seconds value, int significantDigits = 3);
// Writes a figure value with its unit name ("B", "s", "tokens", "" …) in the viewer's units.
[[nodiscard]] std::string formatValue(double value, const std::string& unit, const DisplayUnits& units = {});

} // namespace tw
