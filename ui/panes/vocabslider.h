#pragma once
// The vocabulary slider of stage 1's trained tokenizer: logarithmic, text::kMinTrainVocab (257) …
// text::kMaxTrainVocab (65,536) over kVocabSliderSteps positions (textpane*.cpp).

#include "text/bpetrainer.h"

#include <cmath>

namespace tw::ui::vocabslider {

inline constexpr int kVocabSliderSteps = 1000;

// The V slider is logarithmic: 257 … 65,536 over kVocabSliderSteps.
inline int vocabFromSlider(int position)
{
    const double lo = std::log(static_cast<double>(text::kMinTrainVocab));
    const double hi = std::log(static_cast<double>(text::kMaxTrainVocab));
    return static_cast<int>(std::lround(std::exp(lo + (hi - lo) * position / kVocabSliderSteps)));
}

inline int sliderFromVocab(int vocab)
{
    const double lo = std::log(static_cast<double>(text::kMinTrainVocab));
    const double hi = std::log(static_cast<double>(text::kMaxTrainVocab));
    return static_cast<int>(std::lround((std::log(static_cast<double>(vocab)) - lo) / (hi - lo) * kVocabSliderSteps));
}

} // namespace tw::ui::vocabslider
