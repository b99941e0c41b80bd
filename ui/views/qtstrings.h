#pragma once
// Text from the core (std::string, std::string_view, UTF-8) as a QString: the one conversion the ui uses.

#include <QString>

#include <string_view>

namespace tw::ui {

// UTF-8 `s` as a QString (a std::string converts implicitly).
[[nodiscard]] inline QString qs(std::string_view s)
{
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

} // namespace tw::ui
