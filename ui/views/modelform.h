#pragma once
// The stage 2 form: the model, precisions, batch and GPU as widgets, one per scenario field. An
// edit emits edited(field, value) (the pane turns it into a command); setProblems() turns the
// fields core names red with the reason (tooltip and an inline line).

#include "document/scenariofield.h"

#include "base/error.h"

#include <QHash>
#include <QWidget>

#include <vector>

class QFormLayout;
class QLabel;

namespace tw::ui {

class ModelForm : public QWidget {
    Q_OBJECT
public:
    explicit ModelForm(QWidget* parent = nullptr);

    // Shows the scenario's values without emitting edited().
    void setScenario(const scenario::Scenario& scenario);
    void setProblems(const std::vector<Error>& problems);

    [[nodiscard]] QWidget* editor(Field field) const { return m_editors.value(field); }
    [[nodiscard]] QLabel* problemLabel(Field field) const { return m_problemLabels.value(field); }
    [[nodiscard]] bool isInvalid(Field field) const;
    // Problems that name no field of the form (shown at its top).
    [[nodiscard]] QLabel* generalProblems() const { return m_general; }

signals:
    void edited(tw::ui::Field field, const tw::ui::FieldValue& value);

private:
    void addRow(QFormLayout* form, Field field, QWidget* editor);
    void updateEnabled();

    QHash<Field, QWidget*> m_editors;
    QHash<Field, QLabel*> m_problemLabels;
    QLabel* m_general = nullptr;
};

} // namespace tw::ui
