#pragma once
// The colours the drawings share. Two colour-blind-safe schemes, switched at run time by
// applyScheme() (the viewer's setting; ui/settings/theme.cpp calls it): the schemes are constants,
// categorical() and strategy() read the current one, so every drawing paints the current scheme on
// its next repaint.
//  - Okabe & Ito (2008), "Color Universal Design": distinguishable with every common colour-vision
//    deficiency; black is left out of the fills. The default.
//  - Paul Tol (2021), "Colour schemes", the "bright" qualitative scheme: also distinguishable with
//    protanopia, deuteranopia and tritanopia; more saturated, holds up better on a projector (its
//    grey swapped for an indigo, see kTolBright).
// The drawings keep a light "paper" canvas in both themes, so kInk and kMuted stay dark.

#include "parallel/plan.h"

#include <QColor>

#include <iterator>

namespace tw::ui::palette {

enum class Scheme { OkabeIto, TolBright };

inline constexpr QColor kOkabeIto[] = {QColor(0x00, 0x72, 0xB2), QColor(0xE6, 0x9F, 0x00), QColor(0x00, 0x9E, 0x73),
                                       QColor(0xCC, 0x79, 0xA7), QColor(0x56, 0xB4, 0xE9), QColor(0xD5, 0x5E, 0x00),
                                       QColor(0xF0, 0xE4, 0x42)};
// Tol's bright order is blue, red, green, yellow, cyan, purple, grey; here purple comes fourth so
// that the four strategies (the first four) avoid the pale yellow on white paper, and yellow takes
// Okabe–Ito's "vermillion" slot. Tol's grey (#BBBBBB) would read as "no data yet" (stage 4 greys
// out the cells not received), so the seventh is indigo #332288 from Tol's "muted" scheme: far
// darker than every bright colour, so it stays apart from them in every colour vision.
inline constexpr QColor kTolBright[] = {QColor(0x44, 0x77, 0xAA), QColor(0xEE, 0x66, 0x77), QColor(0x22, 0x88, 0x33),
                                        QColor(0xAA, 0x33, 0x77), QColor(0x66, 0xCC, 0xEE), QColor(0xCC, 0xBB, 0x44),
                                        QColor(0x33, 0x22, 0x88)};
static_assert(std::size(kOkabeIto) == std::size(kTolBright));

inline constexpr int kCategoricalSize = int(std::size(kOkabeIto));
inline QColor kInk(0x11, 0x18, 0x27);   // text and outlines
inline QColor kMuted(0x47, 0x55, 0x69); // secondary text

// Link load, idle → saturated: light grey → grey → near-black, the same in both schemes. Not a
// hue of the scheme: an orange or yellow load read as PP's or EP's packets (a DP-only step's busy links
// looked like pipeline traffic); darker is busier, on white paper and on a projector.
inline const QColor kLoadIdle(0xCB, 0xD5, 0xE1);
inline const QColor kLoadMid(0x7C, 0x86, 0x94);
inline const QColor kLoadFull(0x22, 0x28, 0x30);

// The scheme the drawings paint now (GUI thread only).
inline Scheme currentScheme = Scheme::OkabeIto;

// The current scheme's i-th colour, 0 <= i < kCategoricalSize.
[[nodiscard]] inline QColor categorical(int i)
{
    return (currentScheme == Scheme::TolBright ? kTolBright : kOkabeIto)[i];
}
// One colour per parallelism strategy, the same in every stage-5 drawing and chart: DP, PP, TP, EP
// are the scheme's first four colours.
[[nodiscard]] inline QColor strategy(parallel::Strategy s) { return categorical(static_cast<int>(s)); }
[[nodiscard]] inline QColor strategy(int s) { return categorical(s); }

// `a` blended with `b`, `t` = the share of `a` (1: a, 0: b), channel by channel in RGB.
[[nodiscard]] inline QColor mix(const QColor& a, const QColor& b, double t)
{
    return QColor::fromRgbF(float(a.redF() * t + b.redF() * (1 - t)), float(a.greenF() * t + b.greenF() * (1 - t)),
                            float(a.blueF() * t + b.blueF() * (1 - t)));
}

// Switches the drawings to `scheme` (GUI thread only; widgets repaint on their own next paint —
// theme.cpp asks them all).
inline void applyScheme(Scheme scheme) { currentScheme = scheme; }

} // namespace tw::ui::palette
