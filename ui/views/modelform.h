#pragma once
// The stage 2 form: the model, precisions, batch and GPU as widgets, one per scenario field. An
// edit emits edited(field, value) (the pane turns it into a command); setProblems() turns the
// fields core names red with the reason (tooltip and an inline line).

#include "document/scenariofield.h"

#include "base/error.h"

#include <QHash>
#include <QWidget>

#include <cstdint>
#include <vector>

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QSpinBox;
class QVBoxLayout;

namespace tw::ui {

class ModelForm : public QWidget {
    Q_OBJECT
public:
    explicit ModelForm(QWidget* parent = nullptr);

    // Shows the scenario's values without emitting edited().
    void setScenario(const scenario::Scenario& scenario);
    void setProblems(const std::vector<Error>& problems);
    // The V the derivation actually uses (the stage 1 tokenizer's); the greyed V field shows it
    // while "V from the stage 1 tokenizer" is on. 0: not known yet (the scenario's V is shown).
    void setTokenizerVocab(std::uint64_t vocab);

    [[nodiscard]] QWidget* editor(Field field) const { return m_editors.value(field); }
    [[nodiscard]] QLabel* problemLabel(Field field) const { return m_problemLabels.value(field); }
    [[nodiscard]] bool isInvalid(Field field) const;
    // Problems that name no field of the form (shown at its top).
    [[nodiscard]] QLabel* generalProblems() const { return m_general; }
    // The fields of the user-defined GPU, shown while the GPU combo says "Custom…".
    [[nodiscard]] QWidget* customGpuBox() const { return m_customGpu; }

signals:
    void edited(tw::ui::Field field, const tw::ui::FieldValue& value);

private:
    void addRow(QFormLayout* form, Field field, QWidget* editor);
    // The constructor's steps: a group and the editors of each kind, then the groups.
    QFormLayout* addGroup(QVBoxLayout* layout, const QString& title);
    QSpinBox* spinFor(Field field, int min, int max, const QString& tip);
    QComboBox* comboFor(Field field, const QList<QPair<QString, QString>>& items);
    QCheckBox* checkFor(Field field, const QString& text);
    void addTextAndModel(QVBoxLayout* layout);
    void addMoeAndPrecision(QVBoxLayout* layout);
    void addBatchAndGpu(QVBoxLayout* layout);
    void addCustomGpu(QVBoxLayout* layout);
    void updateEnabled();
    void showVocab();

    QHash<Field, QWidget*> m_editors;
    QHash<Field, QLabel*> m_problemLabels;
    QLabel* m_general = nullptr;
    QWidget* m_customGpu = nullptr;
    std::uint64_t m_scenarioVocab = 0;
    std::uint64_t m_tokenizerVocab = 0;
};

} // namespace tw::ui
