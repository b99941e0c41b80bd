#pragma once
// Stage 3's communication signature as tables. SignatureModel: one row per strategy (DP, PP, TP,
// EP) with payload per call, frequency, calls and bytes per GPU per step, peers and whether its
// groups leave the node; strategies the plan does not use are greyed with "—". CallListModel: every
// collective call of one optimizer step (kind, strategy, phase, layer, groups, payload, repeat).
// Tooltips say where each number comes from: the figure ids of the derivation and the call's formula.

#include "base/figure.h"
#include "base/units.h"
#include "parallel/plan.h"

#include <QAbstractTableModel>

#include <memory>
#include <vector>

namespace tw::ui {

class SignatureModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { StrategyColumn, PayloadColumn, FrequencyColumn, CallsColumn, PeersColumn, BytesColumn, LinksColumn, ColumnCount };
    static constexpr int FigureIdRole = Qt::UserRole + 1; // the figure a cell shows ("" when none matches)
    static constexpr int RawValueRole = Qt::UserRole + 2; // the number behind a cell, for sorting
    static constexpr int PresentRole = Qt::UserRole + 3;  // the strategy is used by the plan

    explicit SignatureModel(QObject* parent = nullptr);

    // The signature rows; `figures` (the plan derivation's) and `calls` name where the numbers come from.
    void setSignature(std::vector<parallel::StrategySignature> rows, FigureSet figures = {},
                      std::vector<parallel::CollectiveCall> calls = {});
    void setCommPlan(const parallel::CommPlan& comm, FigureSet figures = {});
    void setDisplayUnits(DisplayUnits units);
    [[nodiscard]] const std::vector<parallel::StrategySignature>& signature() const { return m_rows; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    [[nodiscard]] double raw(const parallel::StrategySignature& s, int column) const;
    [[nodiscard]] QString display(const parallel::StrategySignature& s, int column) const;
    [[nodiscard]] QString tooltip(const parallel::StrategySignature& s, int column) const;
    [[nodiscard]] const Figure* figureFor(const parallel::StrategySignature& s, int column) const;

    std::vector<parallel::StrategySignature> m_rows;
    std::vector<parallel::CollectiveCall> m_calls;
    FigureSet m_figures;
    DisplayUnits m_units;
};

class CallListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { KindColumn, StrategyColumn, PhaseColumn, LayerColumn, GroupsColumn, PayloadColumn, RepeatColumn, WhatColumn, ColumnCount };
    static constexpr int RawValueRole = Qt::UserRole + 2;
    static constexpr int CallIndexRole = Qt::UserRole + 4; // index into CommPlan::calls

    explicit CallListModel(QObject* parent = nullptr);

    void setCommPlan(parallel::CommPlan comm);
    // The plan shared, not copied (the derivation's: hundreds of thousands of groups at 98,304 GPUs).
    void shareCommPlan(std::shared_ptr<const parallel::CommPlan> comm);
    void setDisplayUnits(DisplayUnits units);
    [[nodiscard]] const parallel::CommPlan& commPlan() const { return *m_comm; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    [[nodiscard]] std::size_t groupSize(const parallel::CollectiveCall& call) const;

    std::shared_ptr<const parallel::CommPlan> m_comm = std::make_shared<const parallel::CommPlan>();
    DisplayUnits m_units;
};

// The UI's names for core's enums (core's toString gives the JSON spelling).
[[nodiscard]] QString strategyName(parallel::Strategy s);
[[nodiscard]] QString collectiveName(parallel::CollectiveKind k);

} // namespace tw::ui
