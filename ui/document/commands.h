#pragma once
// The document's edits, each a named QUndoCommand: SetFieldCommand ("Set hidden size", "Choose
// GPU"…; consecutive edits of one field within the merge window become one step, so spin-box and
// slider drags undo at once) and ReplaceScenarioCommand ("Load preset gpt3-175b").

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

} // namespace tw::ui
