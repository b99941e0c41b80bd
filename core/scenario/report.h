#pragma once
// The whole derivation as a document a reader can keep: a title (scenario, model, GPUs, text, date),
// then one section per stage with every figure of that stage (label, value in the reader's units,
// formula, and its inputs linked to their own rows so a chain can be walked back to the text), the
// stage's charts embedded, and the derivation's notes. Markdown or a self-contained HTML page; the
// same figures `tokenwire-cli derive` prints. Pure: the date and the pictures come in the options.

#include "base/figure.h"
#include "base/stage.h"
#include "base/units.h"

#include <array>
#include <string>
#include <vector>

namespace tw {
struct Figure;
}

namespace tw::scenario {

struct Scenario;
struct Derivation;

// A picture embedded in a stage's section.
struct ReportImage {
    std::string title;  // the caption and the alternative text
    std::string source; // a path relative to the report ("run_files/stage1-1.png") or a data: URI
    bool operator==(const ReportImage&) const = default;
};

struct ReportOptions {
    std::string date;                  // written as given under the title ("2025-03-14"); empty: left out
    std::string generator = "TokenWire"; // "TokenWire 0.9.0" in the footer
    DisplayUnits units;                // how byte sizes are written (MB or MiB)
    std::array<std::vector<ReportImage>, kStageCount> images; // per stage, index 0 = stage 1
    std::array<std::vector<std::string>, kStageCount> notes;  // per stage: what was left out and why
    // Stage 5's figures, which come from the simulated step (net.*, sim.*) and the run of it (run.*), not
    // from the derivation: listed in stage 5's section when given (the GUI's export passes the current
    // step's); their inputs link to the derivation's rows or to each other.
    std::vector<Figure> stepFigures;
    bool operator==(const ReportOptions&) const = default;
};

// The stage's short name and what it is about: {"Text", "dataset tokenization"} for Stage::Text.
struct StageName {
    const char* name;
    const char* topic;
};
[[nodiscard]] StageName stageName(Stage stage);

// The derivation's figures split by stage, in derivation order, each exactly once — the grouping of
// the panes' figure tables: stage 1 holds the dataset figures (text.*, tokenizer.*, tokens.*,
// dataset.*), stage 3 the plan's and the cluster's (hardware.*, plan.*, dp.*, pp.*, tp.*, ep.*, zero.*),
// stage 4 the collective schedules' (collective.*), stage 2 everything else (model.*, batch.*,
// tensor.*, memory.*, compute.*). Stage 5's figures (net.*, sim.*, run.*) come from the simulation, not
// from the derivation, so its list is empty (ReportOptions::stepFigures carries them).
[[nodiscard]] std::array<std::vector<const Figure*>, kStageCount> figuresByStage(const Derivation& derivation);

// The anchor of a figure's row: "fig-" and the id, characters outside [A-Za-z0-9._-] as '-'.
[[nodiscard]] std::string figureAnchor(const std::string& id);

// The report in CommonMark with GitHub tables: rows carry <a id> anchors, inputs link to them.
[[nodiscard]] std::string reportMarkdown(const Scenario& scenario, const Derivation& derivation, const ReportOptions& options);
// The report as one self-contained, well-formed HTML5 page (UTF-8, inline print-friendly style,
// every text escaped, invalid UTF-8 replaced by U+FFFD).
[[nodiscard]] std::string reportHtml(const Scenario& scenario, const Derivation& derivation, const ReportOptions& options);

} // namespace tw::scenario
