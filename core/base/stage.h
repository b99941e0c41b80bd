#pragma once
// The five stages of the story as a type, for core and ui alike. People, menus, reports and the
// command line number them 1–5 ("--stage 5", "Stage 5 · Wire"), widgets and arrays count them from 0:
// the functions below are the one place where the two numberings meet.

#include <array>
#include <optional>

namespace tw {

enum class Stage { Text, Tensors, Gpus, Collectives, Wire };

inline constexpr int kStageCount = 5;
inline constexpr std::array<Stage, kStageCount> kStages{Stage::Text, Stage::Tensors, Stage::Gpus, Stage::Collectives,
                                                        Stage::Wire};

// 0 Text … 4 Wire.
[[nodiscard]] constexpr int indexOf(Stage stage) { return static_cast<int>(stage); }
// 1 Text … 5 Wire.
[[nodiscard]] constexpr int numberOf(Stage stage) { return indexOf(stage) + 1; }
// The stage at 0-based `index`, nullopt outside 0–4.
[[nodiscard]] constexpr std::optional<Stage> stageAtIndex(int index)
{
    if (index < 0 || index >= kStageCount)
        return std::nullopt;
    return static_cast<Stage>(index);
}
// The stage numbered `number` (1-based), nullopt outside 1–5.
[[nodiscard]] constexpr std::optional<Stage> stageNumbered(int number) { return stageAtIndex(number - 1); }

} // namespace tw
