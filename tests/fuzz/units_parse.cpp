// Fuzz target: the size/unit parsers of the CLI (core/base/unitparse.h) on any bytes. Each returns a
// value or an Error with a message, never a crash; an accepted size is a whole number of bytes in
// [0, 2^53), a time finite and ≥ 0, a bandwidth finite and > 0. Whole byte counts written back
// (digits, digits + "B", formatBytes in decimal units) parse to the same value (formatBytes: within
// its 4 significant digits).

#include "fuzzcheck.h"

#include "base/unitparse.h"
#include "base/units.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

namespace {

void checkBytesText(const std::string& text, double expected, const char* what)
{
    const auto r = tw::parseBytes(text);
    tw::fuzz::check(r.ok(), what, text + ": " + (r.ok() ? std::string() : r.error().message));
    tw::fuzz::check(r.value() == expected, what, text + " read as " + std::to_string(r.value()));
}

// A whole byte count below 2^53 written back in the forms the program writes and users type.
void checkRoundTrip(std::uint64_t v)
{
    const double d = static_cast<double>(v);
    const std::string digits = std::to_string(v);
    checkBytesText(digits, d, "digits do not read back");
    checkBytesText(digits + "B", d, "digits + B do not read back");
    checkBytesText(digits + " B", d, "digits + \" B\" do not read back");
    const std::string formatted = tw::formatBytes(d);
    const auto r = tw::parseBytes(formatted);
    tw::fuzz::check(r.ok(), "formatBytes output does not parse", formatted + ": " + (r.ok() ? std::string() : r.error().message));
    tw::fuzz::check(std::abs(r.value() - d) <= 5e-4 * d, "formatBytes output reads back too far", formatted);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace tw;
    const std::string_view input(reinterpret_cast<const char*>(data), size);

    const auto bytes = parseBytes(input);
    if (bytes.ok()) {
        const double v = bytes.value();
        fuzz::check(std::isfinite(v) && v >= 0 && v <= kMaxParsedBytes, "a size out of [0, 2^53)", std::to_string(v));
        fuzz::check(v == std::floor(v), "a size that is not whole bytes", std::to_string(v));
        checkRoundTrip(static_cast<std::uint64_t>(v));
    } else {
        fuzz::check(!bytes.error().message.empty(), "a refused size without a message");
    }

    const auto seconds = parseSeconds(input);
    if (seconds.ok())
        fuzz::check(std::isfinite(seconds.value()) && seconds.value() >= 0, "a time not finite or negative",
                    std::to_string(seconds.value()));
    else
        fuzz::check(!seconds.error().message.empty(), "a refused time without a message");

    const auto rate = parseBandwidth(input);
    if (rate.ok())
        fuzz::check(std::isfinite(rate.value()) && rate.value() > 0, "a bandwidth not finite or not positive",
                    std::to_string(rate.value()));
    else
        fuzz::check(!rate.error().message.empty(), "a refused bandwidth without a message");

    // The first 8 bytes as a count below 2^53: the round trip on values the text rarely reaches.
    if (size >= 8) {
        std::uint64_t v = 0;
        std::memcpy(&v, data, sizeof v);
        checkRoundTrip(v >> 11);
    }
    return 0;
}
