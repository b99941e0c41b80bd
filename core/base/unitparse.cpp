#include "unitparse.h"

#include "editdistance.h"

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <system_error>
#include <vector>

namespace tw {

namespace {

// One unit: value = number × 10^decimalExponent × 2^binaryShift, divided by 8 for bits.
struct UnitDef {
    std::string name;
    int decimalExponent = 0;
    int binaryShift = 0;
    bool bits = false;
};

// What a parser reads: its noun for messages, examples, its units and how they are listed.
struct Kind {
    std::string_view noun;     // "size", "time", "bandwidth"
    std::string_view examples; // "256MB, 48MiB or 4096 (bytes)"
    std::vector<UnitDef> units;
    std::string_view known;    // the units as listed in messages
};

struct Prefix {
    std::string_view name;
    int decimalExponent;
    int binaryShift;
};

constexpr std::array<Prefix, 12> kPrefixes{{{"", 0, 0},
                                            {"k", 3, 0},
                                            {"K", 3, 0},
                                            {"M", 6, 0},
                                            {"G", 9, 0},
                                            {"T", 12, 0},
                                            {"P", 15, 0},
                                            {"Ki", 0, 10},
                                            {"Mi", 0, 20},
                                            {"Gi", 0, 30},
                                            {"Ti", 0, 40},
                                            {"Pi", 0, 50}}};

const Kind& bytesKind()
{
    static const Kind kind = [] {
        Kind k{"size", "256MB, 48MiB or 4096 (bytes)", {},
               "B, kB (or KB), MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB"};
        for (const Prefix& p : kPrefixes)
            k.units.push_back({std::string(p.name) + "B", p.decimalExponent, p.binaryShift, false});
        return k;
    }();
    return kind;
}

const Kind& secondsKind()
{
    static const Kind kind{"time",
                           "10us, 1.5ms or 2s",
                           {{"s", 0, 0, false},
                            {"ms", -3, 0, false},
                            {"us", -6, 0, false},
                            {"\xC2\xB5s", -6, 0, false}, // µs, U+00B5 MICRO SIGN
                            {"\xCE\xBCs", -6, 0, false}, // μs, U+03BC GREEK SMALL LETTER MU
                            {"ns", -9, 0, false}},
                           "s, ms, us (or \xC2\xB5s), ns"};
    return kind;
}

const Kind& countKind()
{
    static const Kind kind{"count",
                           "15.6T, 300B, 2e12 or 1500000",
                           {{"k", 3, 0, false},
                            {"K", 3, 0, false},
                            {"M", 6, 0, false},
                            {"B", 9, 0, false},
                            {"G", 9, 0, false},
                            {"T", 12, 0, false},
                            {"P", 15, 0, false}},
                           "k (or K) thousand, M million, B (or G) billion, T trillion, P 10^15"};
    return kind;
}

const Kind& bandwidthKind()
{
    static const Kind kind = [] {
        Kind k{"bandwidth", "10Gbps, 100Gb/s or 25GB/s", {},
               "bytes: B/s, kB/s (or KB/s), MB/s, GB/s, TB/s, PB/s, KiB/s, MiB/s, GiB/s, TiB/s, PiB/s "
               "(or GBps …); bits: bps, kbps (or Kbps), Mbps, Gbps, Tbps, Pbps (or Gb/s, Gbit/s …)"};
        for (const Prefix& p : kPrefixes) {
            const std::string n(p.name);
            for (const char* suffix : {"B/s", "Bps"})
                k.units.push_back({n + suffix, p.decimalExponent, p.binaryShift, false});
            for (const char* suffix : {"b/s", "bps", "bit/s"})
                k.units.push_back({n + suffix, p.decimalExponent, p.binaryShift, true});
        }
        return k;
    }();
    return kind;
}

bool isSpace(char c)
{
    return c == ' ' || c == '\t';
}

bool isDigit(char c)
{
    return c >= '0' && c <= '9';
}

char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool equalsIgnoringCase(std::string_view a, std::string_view b)
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (lower(a[i]) != lower(b[i]))
            return false;
    return true;
}

// A number as written, reduced to significant digits: value = digits × 10^exponent.
struct Lexed {
    bool negative = false;
    std::string digits;     // no leading or trailing zeros; empty for zero
    long long exponent = 0; // clamped to ±10^7 (beyond that, every value is 0, a fraction or too large)
    std::string_view number;
    const UnitDef* unit = nullptr;
};

constexpr long long kExponentClamp = 10'000'000;

// The closest double to digits × 10^exponent (±inf / 0 past the range of a double).
double decimalValue(const std::string& digits, long long exponent)
{
    if (digits.empty())
        return 0;
    const long long magnitude = static_cast<long long>(digits.size()) - 1 + exponent;
    if (magnitude > 400)
        return HUGE_VAL;
    if (magnitude < -400)
        return 0;
    const std::string s = digits + "e" + std::to_string(exponent);
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc::result_out_of_range)
        return magnitude > 0 ? HUGE_VAL : 0.0;
    return v;
}

std::string unknownUnit(std::string_view text, std::string_view unit, const Kind& kind)
{
    std::vector<std::string> close;
    for (const UnitDef& u : kind.units)
        if (equalsIgnoringCase(u.name, unit))
            close.push_back(u.name);
    if (close.empty())
        for (const UnitDef& u : kind.units)
            if (unit.size() >= 3 && editDistance(u.name, unit) == 1)
                close.push_back(u.name);
    std::string message = quoted(text) + " has an unknown unit " + quoted(unit);
    if (!close.empty()) {
        message += " (";
        if (&kind == &bytesKind() && unit.back() == 'b')
            message += "b is bits, a size is in bytes: B; ";
        message += "did you mean ";
        for (std::size_t i = 0; i < close.size() && i < 3; ++i)
            message += (i == 0 ? "" : i + 1 == std::min<std::size_t>(close.size(), 3) ? " or " : ", ") + close[i];
        message += "?)";
    }
    message += "; the units are ";
    message += kind.known;
    return message;
}

// Splits text into sign, number and unit, or says what is not a number or not a unit.
Result<Lexed> lex(std::string_view text, const Kind& kind)
{
    std::string_view s = text;
    while (!s.empty() && isSpace(s.front()))
        s.remove_prefix(1);
    while (!s.empty() && isSpace(s.back()))
        s.remove_suffix(1);
    if (s.empty())
        return makeError("empty value; expected a " + std::string(kind.noun) + " such as " + std::string(kind.examples));
    Lexed out;
    std::string_view rest = s;
    if (rest.front() == '-') {
        out.negative = true;
        rest.remove_prefix(1);
    }
    if (rest.size() >= 3 && (equalsIgnoringCase(rest.substr(0, 3), "inf") || equalsIgnoringCase(rest.substr(0, 3), "nan")))
        return makeError(quoted(text) + " is not a finite number; expected a " + std::string(kind.noun) + " such as "
                         + std::string(kind.examples));

    // digits [. digits] or . digits, then [e|E [+|-] digits]
    std::size_t i = 0;
    std::string mantissa; // every digit as written
    long long pointShift = 0;
    while (i < rest.size() && isDigit(rest[i]))
        mantissa.push_back(rest[i++]);
    if (i < rest.size() && rest[i] == '.') {
        ++i;
        while (i < rest.size() && isDigit(rest[i])) {
            mantissa.push_back(rest[i++]);
            --pointShift;
        }
    }
    if (mantissa.empty())
        return makeError(quoted(text) + " is not a " + std::string(kind.noun) + "; expected a number and a unit such as "
                         + std::string(kind.examples));
    long long exponent = 0;
    if (i < rest.size() && (rest[i] == 'e' || rest[i] == 'E')) {
        std::size_t j = i + 1;
        bool minus = false;
        if (j < rest.size() && (rest[j] == '+' || rest[j] == '-'))
            minus = rest[j++] == '-';
        if (j < rest.size() && isDigit(rest[j])) {
            while (j < rest.size() && isDigit(rest[j])) {
                if (exponent < kExponentClamp)
                    exponent = exponent * 10 + (rest[j] - '0');
                ++j;
            }
            exponent = minus ? -exponent : exponent;
            i = j;
        }
    }
    out.number = rest.substr(0, i);
    std::string_view unit = rest.substr(i);
    while (!unit.empty() && isSpace(unit.front()))
        unit.remove_prefix(1);

    // Significant digits only.
    std::size_t first = mantissa.find_first_not_of('0');
    if (first != std::string::npos) {
        std::size_t last = mantissa.find_last_not_of('0');
        out.digits = mantissa.substr(first, last - first + 1);
        out.exponent = exponent + pointShift + static_cast<long long>(mantissa.size() - 1 - last);
    }

    if (unit.empty())
        return out;
    for (const UnitDef& u : kind.units)
        if (u.name == unit) {
            out.unit = &u;
            return out;
        }
    for (char c : unit) {
        const bool unitChar = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '/' || (static_cast<unsigned char>(c) & 0x80);
        if (!unitChar)
            return makeError(quoted(text) + " has unexpected text " + quoted(unit) + " after the number "
                             + std::string(out.number));
    }
    return makeError(unknownUnit(text, unit, kind));
}

// The byte count digits × 10^exponent × 2^shift when it is whole and at most 2^53 − 1, checked in
// integers; an Error otherwise ("not a whole number of bytes", "too large").
Result<double> wholeBytes(std::string_view text, const std::string& digits, long long exponent, int shift)
{
    constexpr std::uint64_t kMax = (std::uint64_t{1} << 53) - 1;
    auto tooLarge = [&] {
        return makeError(quoted(text) + " is too large: the most is " + formatInteger(static_cast<std::int64_t>(kMax))
                         + " B (2^53 − 1, about 9 PB)");
    };
    auto fraction = [&] {
        const double v = std::ldexp(decimalValue(digits, exponent), shift);
        char shown[48];
        std::snprintf(shown, sizeof shown, " (%.10g B)", v);
        return makeError(quoted(text) + " is not a whole number of bytes" + (v > 0 ? shown : ""));
    };
    if (digits.empty())
        return 0.0;
    const long long n = static_cast<long long>(digits.size());
    // The value is at least 10^(n−1+exponent) × 2^shift: past 2^53 it is too large whatever the digits.
    if (static_cast<double>(n - 1 + exponent) * 3.321928094887362 + shift >= 53.0001)
        return tooLarge();
    if (n > 19) {
        // Below 2^53 with more than 16 significant digits: the last digit (not 0) lies after the point.
        if (shift == 0)
            return fraction();
        return makeError(quoted(text) + " has more than 19 significant digits");
    }
    std::uint64_t s = 0;
    for (char c : digits)
        s = s * 10 + static_cast<std::uint64_t>(c - '0');
    std::uint64_t value = 0;
    if (exponent >= 0) {
        // n − 1 + exponent ≤ 15 here, so s × 10^exponent < 10^16 fits.
        for (long long k = 0; k < exponent; ++k)
            s *= 10;
        if (s > (kMax >> shift))
            return tooLarge();
        value = s << shift;
    } else {
        // s / 10^m × 2^shift is whole iff 5^m divides s and 2^m divides s × 2^shift.
        const long long m = -exponent;
        if (m > 27) // 5^28 > 10^19 > s
            return fraction();
        std::uint64_t p5 = 1;
        for (long long k = 0; k < m; ++k)
            p5 *= 5;
        if (s % p5 != 0)
            return fraction();
        s /= p5;
        if (std::countr_zero(s) + shift < m)
            return fraction();
        if (shift >= m) {
            const int up = shift - static_cast<int>(m);
            if (s > (kMax >> up))
                return tooLarge();
            value = s << up;
        } else {
            value = s >> (m - shift);
        }
        if (value > kMax)
            return tooLarge();
    }
    return static_cast<double>(value);
}

Error negative(std::string_view text, const Kind& kind, std::string_view bound)
{
    return makeError(quoted(text) + " is negative; a " + std::string(kind.noun) + " must be " + std::string(bound));
}

// The text lexed as `kind`; a negative number is refused (`bound`: what the kind must be).
Result<Lexed> lexNotNegative(std::string_view text, const Kind& kind, std::string_view bound)
{
    auto lexed = lex(text, kind);
    if (lexed && lexed.value().negative && !lexed.value().digits.empty())
        return negative(text, kind, bound);
    return lexed;
}

} // namespace

// 'text' in single quotes (built by appending: GCC 12 warns falsely on "'" + std::string).
std::string quoted(std::string_view text)
{
    std::string out;
    out.reserve(text.size() + 2);
    out.push_back('\'');
    out.append(text);
    out.push_back('\'');
    return out;
}

Result<Bytes> parseBytes(std::string_view text)
{
    const auto lexed = lexNotNegative(text, bytesKind(), "≥ 0");
    if (!lexed)
        return lexed.error();
    const Lexed& l = lexed.value();
    const int decimal = l.unit ? l.unit->decimalExponent : 0;
    const int shift = l.unit ? l.unit->binaryShift : 0;
    return wholeBytes(text, l.digits, l.exponent + decimal, shift);
}

namespace {

// A value ≥ 0 of a kind whose units are powers of ten (seconds, counts); `what` names it when too large.
Result<double> parseDecimal(std::string_view text, const Kind& kind, std::string_view what)
{
    const auto lexed = lexNotNegative(text, kind, "≥ 0");
    if (!lexed)
        return lexed.error();
    const Lexed& l = lexed.value();
    const double v = decimalValue(l.digits, l.exponent + (l.unit ? l.unit->decimalExponent : 0));
    if (!std::isfinite(v))
        return makeError(quoted(text) + " is too large: not a finite " + std::string(what));
    return v;
}

} // namespace

Result<Seconds> parseSeconds(std::string_view text)
{
    return parseDecimal(text, secondsKind(), "number of seconds");
}

Result<double> parseCount(std::string_view text)
{
    return parseDecimal(text, countKind(), "count");
}

Result<BytesPerSecond> parseBandwidth(std::string_view text)
{
    const auto lexed = lexNotNegative(text, bandwidthKind(), "> 0");
    if (!lexed)
        return lexed.error();
    const Lexed& l = lexed.value();
    double v = decimalValue(l.digits, l.exponent + (l.unit ? l.unit->decimalExponent : 0));
    if (l.unit) {
        v = std::ldexp(v, l.unit->binaryShift);
        if (l.unit->bits)
            v /= 8;
    }
    if (!std::isfinite(v))
        return makeError(quoted(text) + " is too large: not a finite number of bytes per second");
    if (v <= 0)
        return makeError(quoted(text) + (l.digits.empty() ? " is zero" : " is too small: it rounds to zero")
                         + "; a bandwidth must be > 0");
    return v;
}

} // namespace tw
