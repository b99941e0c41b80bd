#pragma once
// A short narration per stage for a classroom, written around the live numbers ("Your text is 699
// bytes: 127 words on 23 lines. Tokenized with GPT-2 it is 298 tokens … At d = 768 each token becomes
// 1,536 bytes of activations …"). Every number in it is a figure: one of the derivation's, of the stage
// 5 network or simulation, or one of the narration's own ("narration.*", e.g. d·s_act) whose formula
// names the figures it came from. Each number keeps its figure id, so a viewer can show its formula
// and walk its chain back to the text. Nothing is said about a strategy the plan does not use (1-way),
// and nouns agree with their numbers ("1 token", "2 tokens").

#include "base/figure.h"
#include "base/stage.h"
#include "base/units.h"

#include <string>
#include <vector>

namespace tw::network {
struct StepSimulation;
}

namespace tw::scenario {

struct Derivation;
struct NetworkStage;
struct Scenario;

// A run of a sentence: plain words (figure empty) or one number as written ("1,536 bytes") with the
// id of the figure it shows.
struct NarrationSpan {
    std::string text;
    std::string figure;
    bool operator==(const NarrationSpan&) const = default;
};

struct NarrationSentence {
    std::vector<NarrationSpan> spans;
    [[nodiscard]] std::string text() const;                 // the spans joined
    [[nodiscard]] std::vector<std::string> figures() const; // the ids of its numbers, in order
    bool operator==(const NarrationSentence&) const = default;
};

struct StageNarration {
    Stage stage = Stage::Text;
    std::string title;                          // "Text → tokens"
    std::vector<NarrationSentence> sentences;   // 2–4
    [[nodiscard]] std::string text() const;     // the sentences joined by spaces
    bool operator==(const StageNarration&) const = default;
};

struct Narration {
    std::vector<StageNarration> stages;         // five, stage 1 first
    // Every figure a sentence cites: copies of the derivation's (and the network's and the
    // simulation's) and the narration's own "narration.*" ones, whose inputs are in this set too.
    FigureSet figures;
    [[nodiscard]] const StageNarration* stage(Stage stage) const; // null when absent
};

// The five stages' narration. network and simulation are stage 5's (core's deriveNetwork and
// simulateStep of the same scenario and derivation); without them stage 5 says what it will simulate
// and gives no times. A plan that cannot run is said to be so in stage 3 (with its first reason), and
// stages 4 and 5 point back to it. Byte sizes are written in the viewer's units.
[[nodiscard]] Narration narrate(const Scenario& scenario, const Derivation& derivation,
                                const NetworkStage* network = nullptr,
                                const network::StepSimulation* simulation = nullptr,
                                const DisplayUnits& units = {});

// "1 token", "2 tokens", "0.29 tokens": the noun agrees with the number as written.
[[nodiscard]] std::string countNoun(double value, const std::string& singular, const std::string& plural, int decimals = 2);
// A fraction as a percentage for prose: 3 significant digits from 1 % up ("45.2 %"), 2 below ("0.024 %").
[[nodiscard]] std::string formatPercent(double fraction);

} // namespace tw::scenario
