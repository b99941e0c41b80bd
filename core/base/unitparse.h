#pragma once
// Sizes, times and bandwidths as a user writes them ("256MB", "48MiB", "10us", "10Gbps"): the
// reading side of units.h. Values come back in base units (B, s, B/s); a refusal says what is wrong
// with the text, quoting it, and lists the known units when the unit is the problem.
//
// Grammar (surrounding spaces ignored):  [-] NUMBER [SPACES] [UNIT]
//   NUMBER  digits with an optional fraction and exponent: 256, 1.5, .5, 1e3, 2.5E-3
//   UNIT    case-sensitive; none means the base unit (B, s, B/s)
// Decimal prefixes k/K = 10^3, M, G, T, P; binary prefixes Ki = 2^10, Mi, Gi, Ti, Pi.

#include "base/error.h"
#include "base/units.h"

#include <string>
#include <string_view>

namespace tw {

// The largest byte count parseBytes accepts, 2^53 − 1: every whole number up to it is exact in a double.
inline constexpr double kMaxParsedBytes = 9007199254740991.0;

// "256MB" = 256·10^6, "48MiB" = 48·2^20, "1.5 GB", "4096", "4096B", "2kB" = "2KB" = 2000, "2KiB" = 2048.
// Units B, kB (KB), MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB. The value must be a whole number of
// bytes ("0.3kB" = 300 B is; "1.5B" is not) in [0, 2^53); checked exactly, not in floating point
// (up to 19 significant digits).
[[nodiscard]] Result<Bytes> parseBytes(std::string_view text);

// "10us" = "10µs" = 1e-5, "5ns", "1.5ms", "2s"; a plain number is seconds. ≥ 0 and finite.
[[nodiscard]] Result<Seconds> parseSeconds(std::string_view text);

// "10Gbps" = "10Gb/s" = "10Gbit/s" = 1.25e9 B/s (lowercase b: bits), "25GB/s" = "25GBps" = 25e9 B/s
// (uppercase B: bytes), "2GiB/s" = 2^31 B/s; a plain number is B/s. > 0 and finite.
[[nodiscard]] Result<BytesPerSecond> parseBandwidth(std::string_view text);

// "15.6T" = 15.6·10^12, "300B" = 300·10^9 (B: billion, as model cards count tokens), "2e12", "1500000";
// k (K), M, B (G), T, P. ≥ 0 and finite (tokens to train, counts of things).
[[nodiscard]] Result<double> parseCount(std::string_view text);

// 'text' in single quotes, as the refusals above (and the command line's) quote what was written.
[[nodiscard]] std::string quoted(std::string_view text);

} // namespace tw
