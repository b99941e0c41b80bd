#pragma once
// The five stages of the story as a type. Widgets count them from 0 (the stacked widget's index,
// MainWindow::stage()), people, menus and the command line from 1 ("--stage 5", "Stage 5: Wire",
// core's narration): the functions below are the one place where the two numberings meet.

#include <optional>

namespace tw::ui {

enum class Stage { Text, Tensors, Gpus, Collectives, Wire };

inline constexpr int kStageCount = 5;

// 0 Text … 4 Wire.
[[nodiscard]] constexpr int indexOf(Stage stage) { return static_cast<int>(stage); }
// 1 Text … 5 Wire.
[[nodiscard]] constexpr int numberOf(Stage stage) { return indexOf(stage) + 1; }
// The number of the stage at 0-based `index` (widgets that keep the index, asking core's narration and
// comparison, which number stages 1–5 and answer an unknown one themselves).
[[nodiscard]] constexpr int numberAtIndex(int index) { return index + 1; }
// The stage at 0-based `index`, nullopt outside 0–4.
[[nodiscard]] constexpr std::optional<Stage> stageAtIndex(int index)
{
    if (index < 0 || index >= kStageCount)
        return std::nullopt;
    return static_cast<Stage>(index);
}
// The stage numbered `number` (1-based), nullopt outside 1–5.
[[nodiscard]] constexpr std::optional<Stage> stageNumbered(int number) { return stageAtIndex(number - 1); }

} // namespace tw::ui
