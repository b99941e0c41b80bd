#pragma once
// Edits the layer partition over pipeline stages: a spin box per (virtual) stage, a bar picture of
// layers per stage, the sum against L (red when they differ) and an "Even (default)" button. Emits
// partitionEdited only for the user's edits; setPartition (the derivation's partition) is silent.

#include <QWidget>

#include <cstdint>
#include <vector>

class QGridLayout;
class QLabel;
class QPushButton;
class QScrollArea;
class QSpinBox;

namespace tw::ui {

class PartitionBars;

class PartitionEditor : public QWidget {
    Q_OBJECT
public:
    explicit PartitionEditor(QWidget* parent = nullptr);

    // Layers per (virtual) stage, pp·v entries; stage i's label is "S i" (v = 1) or
    // "S s.c" for chunk c of stage s (Megatron's interleaving: virtual stage i = c·pp + s).
    void setPartition(const std::vector<std::uint64_t>& partition, std::uint64_t layers, std::uint64_t virtualStages = 1);
    [[nodiscard]] std::vector<std::uint64_t> partition() const;
    [[nodiscard]] std::uint64_t layers() const { return m_layers; }
    [[nodiscard]] std::uint64_t sum() const;
    [[nodiscard]] bool sumMatches() const { return sum() == m_layers; }

    [[nodiscard]] int stageCount() const { return int(m_spins.size()); }
    [[nodiscard]] QSpinBox* spinBox(int stage) const;
    [[nodiscard]] QLabel* sumLabel() const { return m_sum; }
    [[nodiscard]] QPushButton* evenButton() const { return m_even; }

signals:
    // The user's partition; empty = back to the even default (core's defaultPartition).
    void partitionEdited(const std::vector<std::uint64_t>& partition);

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void regrid(); // as many spin boxes per row as the width takes
    void rebuild(std::size_t stages, std::uint64_t virtualStages);
    void refresh();
    void onUserEdit();

    std::vector<QSpinBox*> m_spins;
    std::vector<QLabel*> m_spinLabels;
    QGridLayout* m_grid = nullptr;
    QScrollArea* m_scroll = nullptr;
    PartitionBars* m_bars = nullptr;
    QLabel* m_title = nullptr;
    QLabel* m_sum = nullptr;
    QPushButton* m_even = nullptr;
    std::uint64_t m_layers = 0;
    std::uint64_t m_virtualStages = 1;
    int m_columns = 0;
};

} // namespace tw::ui
