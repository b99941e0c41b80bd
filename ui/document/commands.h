#pragma once
// The document's edits, each a named QUndoCommand: SetFieldCommand ("Set hidden size", "Choose
// GPU"…; consecutive edits of one field within the merge window become one step, so spin-box and
// slider drags undo at once), SetTextCommand ("Type text", "Choose text", "Open text": stage 1's
// text source as a whole, so undo brings back the kind as well as the text) and
// ReplaceScenarioCommand ("Load preset gpt3-175b") and EditPlanCommand (stage 3: "Swap GPU 1 and GPU 5",
// "Set tensor-parallel degree", "Set nodes": the cluster and the parallel plan change together).

#include "scenariofield.h"

#include "scenario/scenario.h"

#include <QUndoCommand>

#include <chrono>

namespace tw::ui {

class Document;

class SetFieldCommand : public QUndoCommand {
public:
    static constexpr int kIdBase = 1000; // id() = kIdBase + field: only edits of one field merge

    SetFieldCommand(Document* document, Field field, FieldValue value, QUndoCommand* parent = nullptr);

    void undo() override;
    void redo() override;
    [[nodiscard]] int id() const override;
    bool mergeWith(const QUndoCommand* other) override;

    [[nodiscard]] Field field() const { return m_field; }
    [[nodiscard]] const FieldValue& oldValue() const { return m_old; }
    [[nodiscard]] const FieldValue& newValue() const { return m_new; }

private:
    Document* m_document;
    Field m_field;
    FieldValue m_old;
    FieldValue m_new;
    std::chrono::steady_clock::time_point m_lastEdit;
};

// Sets where stage 1's text comes from: a sample, a file (by path) or typed text. Consecutive typing
// within the merge window is one step; choosing a sample or opening a file never merges.
class SetTextCommand : public QUndoCommand {
public:
    static constexpr int kId = 900;

    SetTextCommand(Document* document, scenario::TextSource source, bool typing, QUndoCommand* parent = nullptr);

    void undo() override;
    void redo() override;
    [[nodiscard]] int id() const override { return kId; }
    bool mergeWith(const QUndoCommand* other) override;

    [[nodiscard]] const scenario::TextSource& oldSource() const { return m_old; }
    [[nodiscard]] const scenario::TextSource& newSource() const { return m_new; }

private:
    Document* m_document;
    scenario::TextSource m_old;
    scenario::TextSource m_new;
    bool m_typing;
    std::chrono::steady_clock::time_point m_lastEdit;
};

// Replaces the whole scenario (a preset); undo brings the previous one back.
class ReplaceScenarioCommand : public QUndoCommand {
public:
    ReplaceScenarioCommand(Document* document, scenario::Scenario scenario, const QString& text,
                           QUndoCommand* parent = nullptr);

    void undo() override;
    void redo() override;

private:
    Document* m_document;
    scenario::Scenario m_old;
    scenario::Scenario m_new;
};

// Changes the cluster, the parallel plan and the fabric as one step: degrees with DP taking the rest, a
// swap of two GPUs' places, the layer partition, the pipeline schedule, the cluster's size (the fabric
// follows: one server → leaf–spine), the fabric itself. Undo restores all three exactly (an explicit
// placement included). Edits from the same control (EditMerge, not None) within the window merge.
class EditPlanCommand : public QUndoCommand {
public:
    static constexpr int kIdBase = 2000;

    EditPlanCommand(Document* document, scenario::Hardware hardware, parallel::ParallelPlan plan,
                    network::TopologySpec topology, const QString& text, EditMerge merge = EditMerge::None,
                    QUndoCommand* parent = nullptr);

    void undo() override;
    void redo() override;
    [[nodiscard]] int id() const override { return m_merge == EditMerge::None ? -1 : kIdBase + int(m_merge); }
    bool mergeWith(const QUndoCommand* other) override;

private:
    Document* m_document;
    scenario::Hardware m_oldHardware, m_newHardware;
    parallel::ParallelPlan m_oldPlan, m_newPlan;
    network::TopologySpec m_oldTopology, m_newTopology;
    EditMerge m_merge;
    std::chrono::steady_clock::time_point m_lastEdit;
};

} // namespace tw::ui
