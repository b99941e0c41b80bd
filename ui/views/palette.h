#pragma once
// The colours the drawings share. Okabe & Ito (2008), "Color Universal Design": distinguishable with
// every common colour-vision deficiency; black is left out of the fills.

#include <QColor>

#include <iterator>

namespace tw::ui::palette {

inline const QColor kCategorical[] = {QColor(0x00, 0x72, 0xB2), QColor(0xE6, 0x9F, 0x00), QColor(0x00, 0x9E, 0x73),
                                      QColor(0xCC, 0x79, 0xA7), QColor(0x56, 0xB4, 0xE9), QColor(0xD5, 0x5E, 0x00),
                                      QColor(0xF0, 0xE4, 0x42)};
inline constexpr int kCategoricalSize = int(std::size(kCategorical));
inline const QColor kInk(0x11, 0x18, 0x27);   // text and outlines
inline const QColor kMuted(0x47, 0x55, 0x69); // secondary text

// One colour per parallelism strategy, the same in every stage-5 drawing and chart:
// DP blue, PP orange, TP bluish green, EP reddish purple (index = parallel::Strategy).
inline const QColor kStrategy[4] = {kCategorical[0], kCategorical[1], kCategorical[2], kCategorical[3]};
// Link load, idle → saturated: light grey → yellow → vermillion (readable on white and on a projector).
inline const QColor kLoadIdle(0xCB, 0xD5, 0xE1);
inline const QColor kLoadMid(0xE6, 0x9F, 0x00);
inline const QColor kLoadFull(0xD5, 0x5E, 0x00);

} // namespace tw::ui::palette
