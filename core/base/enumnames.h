#pragma once
// One table of names per enum, read in both directions: toString and xFromString of an enum are one
// table of {value, name} rows and these two lookups, so a name is written once. A row may also carry
// the name people read ("All-to-All" beside "alltoall"): displayOf.
//
//   constexpr std::array kShardingNames{EnumName{Sharding::Ddp, "ddp"}, EnumName{Sharding::Zero1, "zero1"}};
//   std::string_view toString(Sharding s) { return nameOf(kShardingNames, s); }
//   std::optional<Sharding> shardingFromString(std::string_view s) { return valueOf(kShardingNames, s); }

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace tw {

template <typename E>
struct EnumName {
    E value;
    std::string_view name;    // the JSON / command-line name
    std::string_view display{}; // the name in tables and prose; empty: the same as name
};

// The row's name, or `missing` for a value the table does not list.
template <typename E, std::size_t N>
[[nodiscard]] constexpr std::string_view nameOf(const std::array<EnumName<E>, N>& table, E value,
                                                std::string_view missing = "?")
{
    for (const EnumName<E>& row : table)
        if (row.value == value)
            return row.name;
    return missing;
}

// The row's display name (its name when it has none), or `missing`.
template <typename E, std::size_t N>
[[nodiscard]] constexpr std::string_view displayOf(const std::array<EnumName<E>, N>& table, E value,
                                                   std::string_view missing = "?")
{
    for (const EnumName<E>& row : table)
        if (row.value == value)
            return row.display.empty() ? row.name : row.display;
    return missing;
}

// The value named exactly `name` (case-sensitive), or nullopt.
template <typename E, std::size_t N>
[[nodiscard]] constexpr std::optional<E> valueOf(const std::array<EnumName<E>, N>& table, std::string_view name)
{
    for (const EnumName<E>& row : table)
        if (row.name == name)
            return row.value;
    return std::nullopt;
}

// Every value of the table, in its order (the "valid choices" of a message, a menu's entries).
template <typename E, std::size_t N>
[[nodiscard]] constexpr std::array<E, N> valuesOf(const std::array<EnumName<E>, N>& table)
{
    std::array<E, N> out{};
    for (std::size_t i = 0; i < N; ++i)
        out[i] = table[i].value;
    return out;
}

} // namespace tw
