#pragma once
// The five stages (core/base/stage.h) as ui names them. Widgets count them from 0 (the stacked
// widget's index, MainWindow::stage()); numberAtIndex turns such an index into the 1-based number
// people and menus use.

#include "base/stage.h"

namespace tw::ui {

using tw::indexOf;
using tw::kStageCount;
using tw::numberOf;
using tw::Stage;
using tw::stageAtIndex;
using tw::stageNumbered;

// The number of the stage at 0-based `index`.
[[nodiscard]] constexpr int numberAtIndex(int index) { return index + 1; }

} // namespace tw::ui
