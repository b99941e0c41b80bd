#include "units.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace tw {

namespace {

std::string grouped(const std::string& digits)
{
    std::string out;
    out.reserve(digits.size() + digits.size() / 3 + 1);
    const std::size_t lead = digits.size() % 3;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i != 0 && (i + 3 - lead) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return out;
}

} // namespace

std::string formatInteger(std::int64_t value)
{
    const bool negative = value < 0;
    const std::string out = grouped(std::to_string(negative ? -(value + 1) + 1ULL : static_cast<unsigned long long>(value)));
    return negative ? "-" + out : out;
}

std::string formatUnsigned(std::uint64_t value)
{
    return grouped(std::to_string(value));
}

static std::string printf2(const char* fmt, double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, v);
    return buf;
}

// Writes v with `sig` significant digits, no exponent, without trailing zeros after the point.
static std::string significant(double v, int sig)
{
    if (v == 0)
        return "0";
    const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(v))));
    const int decimals = std::max(0, sig - 1 - magnitude);
    std::string s = printf2(("%." + std::to_string(decimals) + "f").c_str(), v);
    if (s.find('.') != std::string::npos) {
        while (!s.empty() && s.back() == '0')
            s.pop_back();
        if (!s.empty() && s.back() == '.')
            s.pop_back();
    }
    return s;
}

std::string formatCount(double value, int decimals)
{
    if (!std::isfinite(value))
        return std::isnan(value) ? "n/a" : (value > 0 ? "∞" : "-∞");
    if (std::fabs(value) >= 9.0e18) // beyond int64: every double here is whole anyway
        return printf2("%.4e", value);
    const double rounded = std::round(value);
    if (std::fabs(value - rounded) < 1e-9)
        return formatInteger(static_cast<std::int64_t>(rounded));
    // A fraction keeps its decimals even when they round to zeros ("2.00" is not "2").
    const std::string fixed = printf2(("%." + std::to_string(decimals) + "f").c_str(), std::fabs(value));
    const auto point = fixed.find('.');
    const std::string whole = formatInteger(std::stoll(fixed.substr(0, point)));
    return (value < 0 ? "-" : "") + whole + (point == std::string::npos ? "" : fixed.substr(point));
}

std::string formatBytes(Bytes value, const DisplayUnits& units)
{
    if (!std::isfinite(value))
        return "n/a";
    const bool binary = units.bytes == ByteUnits::Binary;
    const double base = binary ? 1024.0 : 1000.0;
    static const char* decimalNames[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
    static const char* binaryNames[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = std::fabs(value);
    int k = 0;
    while (v >= base && k < 6) {
        v /= base;
        ++k;
    }
    if (k == 0)
        return formatCount(value, 2) + " B";
    std::string num = significant(value < 0 ? -v : v, units.significantDigits);
    return num + " " + (binary ? binaryNames[k] : decimalNames[k]);
}

std::string formatSeconds(Seconds value, int significantDigits)
{
    if (!std::isfinite(value))
        return "n/a";
    const double a = std::fabs(value);
    if (a == 0)
        return "0 s";
    if (a < 1e-6)
        return significant(value * 1e9, significantDigits) + " ns";
    if (a < 1e-3)
        return significant(value * 1e6, significantDigits) + " µs";
    if (a < 1)
        return significant(value * 1e3, significantDigits) + " ms";
    return significant(value, significantDigits) + " s";
}

std::string formatDuration(Seconds value, int significantDigits)
{
    const double a = std::fabs(value);
    if (!std::isfinite(value) || a < 60)
        return formatSeconds(value, significantDigits);
    if (a < 3600)
        return significant(value / 60, significantDigits) + " min";
    if (a < 2 * 86400)
        return significant(value / 3600, significantDigits) + " h";
    return significant(value / 86400, significantDigits) + " days";
}

std::string formatValue(double value, const std::string& unit, const DisplayUnits& units)
{
    if (unit == "B")
        return formatBytes(value, units);
    if (unit == "s") // a run's hours and days as such, not "6394057 s"
        return std::fabs(value) >= 60 ? formatDuration(value, units.significantDigits)
                                      : formatSeconds(value, units.significantDigits);
    // A small fraction keeps two significant digits: 0.00056 optimizer steps, not "0.00".
    int decimals = 2;
    if (std::isfinite(value) && value != 0 && std::fabs(value) < 0.1)
        decimals = std::min(12, 1 - static_cast<int>(std::floor(std::log10(std::fabs(value)))));
    const std::string number = formatCount(value, decimals);
    return unit.empty() ? number : number + " " + unit;
}

} // namespace tw
