#include "commands.h"

#include "document.h"

#include <QCoreApplication>

namespace tw::ui {

SetFieldCommand::SetFieldCommand(Document* document, Field field, FieldValue value, QUndoCommand* parent)
    : QUndoCommand(fieldCommandName(field), parent)
    , m_document(document)
    , m_field(field)
    , m_old(fieldValue(document->scenario(), field))
    , m_new(std::move(value))
    , m_lastEdit(std::chrono::steady_clock::now())
{
}

void SetFieldCommand::undo()
{
    m_document->applyField(m_field, m_old);
}

void SetFieldCommand::redo()
{
    m_document->applyField(m_field, m_new);
}

int SetFieldCommand::id() const
{
    return kIdBase + static_cast<int>(m_field);
}

bool SetFieldCommand::mergeWith(const QUndoCommand* other)
{
    const auto* next = static_cast<const SetFieldCommand*>(other);
    if (next->m_field != m_field || next->m_lastEdit - m_lastEdit > m_document->mergeWindow())
        return false;
    m_new = next->m_new;
    m_lastEdit = next->m_lastEdit;
    setObsolete(m_new == m_old); // dragged back to where it started: no step at all
    return true;
}

namespace {
QString textCommandName(const scenario::TextSource& source)
{
    switch (source.kind) {
    case scenario::TextSource::Kind::Sample:
        return QCoreApplication::translate("tw::ui::SetTextCommand", "Choose text");
    case scenario::TextSource::Kind::File:
        return QCoreApplication::translate("tw::ui::SetTextCommand", "Open text");
    case scenario::TextSource::Kind::Inline:
        break;
    }
    return QCoreApplication::translate("tw::ui::SetTextCommand", "Type text");
}
} // namespace

SetTextCommand::SetTextCommand(Document* document, scenario::TextSource source, bool typing, QUndoCommand* parent)
    : QUndoCommand(textCommandName(source), parent)
    , m_document(document)
    , m_old(document->scenario().text)
    , m_new(std::move(source))
    , m_typing(typing && m_new.kind == scenario::TextSource::Kind::Inline)
    , m_lastEdit(std::chrono::steady_clock::now())
{
}

void SetTextCommand::undo()
{
    m_document->applyText(m_old);
}

void SetTextCommand::redo()
{
    m_document->applyText(m_new);
}

bool SetTextCommand::mergeWith(const QUndoCommand* other)
{
    const auto* next = static_cast<const SetTextCommand*>(other);
    if (!m_typing || !next->m_typing || next->m_lastEdit - m_lastEdit > m_document->mergeWindow())
        return false;
    m_new = next->m_new;
    m_lastEdit = next->m_lastEdit;
    setObsolete(m_new == m_old); // typed and deleted back to where it started: no step at all
    return true;
}

ReplaceScenarioCommand::ReplaceScenarioCommand(Document* document, scenario::Scenario scenario, const QString& text,
                                               QUndoCommand* parent)
    : QUndoCommand(text, parent)
    , m_document(document)
    , m_old(document->scenario())
    , m_new(std::move(scenario))
{
}

void ReplaceScenarioCommand::undo()
{
    m_document->applyScenario(m_old);
}

void ReplaceScenarioCommand::redo()
{
    m_document->applyScenario(m_new);
}

EditPlanCommand::EditPlanCommand(Document* document, scenario::Hardware hardware, parallel::ParallelPlan plan,
                                 network::TopologySpec topology, const QString& text, EditMerge merge,
                                 QUndoCommand* parent)
    : QUndoCommand(text, parent)
    , m_document(document)
    , m_oldHardware(document->scenario().hardware)
    , m_newHardware(std::move(hardware))
    , m_oldPlan(document->scenario().parallel)
    , m_newPlan(std::move(plan))
    , m_oldTopology(document->scenario().topology)
    , m_newTopology(std::move(topology))
    , m_merge(merge)
    , m_lastEdit(std::chrono::steady_clock::now())
{
}

void EditPlanCommand::undo()
{
    m_document->applyPlan(m_oldHardware, m_oldPlan, m_oldTopology);
}

void EditPlanCommand::redo()
{
    m_document->applyPlan(m_newHardware, m_newPlan, m_newTopology);
}

bool EditPlanCommand::mergeWith(const QUndoCommand* other)
{
    const auto* next = static_cast<const EditPlanCommand*>(other);
    if (next->m_merge != m_merge || next->m_lastEdit - m_lastEdit > m_document->mergeWindow())
        return false;
    m_newHardware = next->m_newHardware;
    m_newPlan = next->m_newPlan;
    m_newTopology = next->m_newTopology;
    m_lastEdit = next->m_lastEdit;
    setObsolete(m_newHardware == m_oldHardware && m_newPlan == m_oldPlan && m_newTopology == m_oldTopology);
    return true;
}

} // namespace tw::ui
