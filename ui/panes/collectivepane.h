#pragma once
// Stage 4, "Collectives": one collective call played step by step. By default the call is one of
// the stage 3 plan's (e.g. "the gradient AllReduce of Example 5.1"); its payload and ranks can be
// overridden. The algorithm of each collective is the scenario's (an undoable edit that also
// changes stage 4's totals for the whole plan); α and β are the scenario's link. Beside the drawing:
// the current step's transfers, the counts of the schedule (steps, bytes on the wire, busiest rank,
// α–β time, busbw) against docs/model.md §4's closed forms, the comparison of every algorithm against N
// and M, and the plan's traffic per strategy counted from the real schedules.

#include "base/figure.h"
#include "base/units.h"
#include "collective/nccl.h"
#include "collective/ncclgraph.h"
#include "collective/schedule.h"

#include "panes/stagepane.h"

#include <QWidget>

#include <memory>
#include <optional>

class QButtonGroup;
class QComboBox;
class QFormLayout;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QScrollArea;
class QSlider;
class QSpinBox;
class QStandardItemModel;
class QTabWidget;
class QTableView;
class QTextBrowser;
class QTimer;

namespace tw::scenario {
struct Derivation;
}

namespace tw::ui {

class AlgorithmTableModel;
class BusBwChart;
class NcclChannelView;
class CollectiveCharts;
class MeasuredChart;
class Document;
class FigureTableModel;
class ScheduleView;
class StepListModel;

class CollectivePane : public QWidget, public StagePane {
    Q_OBJECT
public:
    [[nodiscard]] MeasuredChart* measuredChart() const { return m_measured; }
    explicit CollectivePane(Document* document, QWidget* parent = nullptr);

    // The call being played (the plan's, or the user's override).
    [[nodiscard]] const collective::ScheduleSpec& spec() const { return m_spec; }
    // Picks the plan's call at `index` of the "Call" list (0 = the plan's largest), false when out of range.
    bool choosePlanCall(int index);
    // Selects a figure of the plan's traffic and shows its derivation chain (false when unknown).
    bool showFigure(const QString& id) override;
    [[nodiscard]] QWidget* drawing() const override; // the schedule
    [[nodiscard]] bool isPlaying() const override;   // the schedule's animation
    void setPlaying(bool playing) override;
    bool stepForward() override;                     // and its steps
    bool stepBack() override;
    [[nodiscard]] bool canStepBack() const override;
    [[nodiscard]] bool hasOwnSteps() const override { return true; }

    [[nodiscard]] ScheduleView* view() const { return m_view; }
    [[nodiscard]] QComboBox* callBox() const { return m_call; }
    [[nodiscard]] QComboBox* opBox() const { return m_op; }
    [[nodiscard]] QComboBox* algorithmBox() const { return m_algorithm; }
    [[nodiscard]] QSpinBox* ranksBox() const { return m_ranks; }
    [[nodiscard]] QLineEdit* bytesEdit() const { return m_bytes; }
    [[nodiscard]] QLabel* bytesProblem() const { return m_bytesProblem; }
    [[nodiscard]] QPushButton* stepForwardButton() const { return m_forward; }
    [[nodiscard]] QPushButton* stepBackButton() const { return m_back; }
    [[nodiscard]] QPushButton* playButton() const { return m_play; }
    [[nodiscard]] QLabel* countsLabel() const { return m_counts; }
    [[nodiscard]] QLabel* caption() const { return m_caption; }
    [[nodiscard]] QTabWidget* tabs() const { return m_tabs; }
    [[nodiscard]] CollectiveCharts* charts() const { return m_charts; }
    // Which comparison the Compare algorithms tab shows (button id = CollectiveCharts::Metric).
    [[nodiscard]] QButtonGroup* chartChooser() const { return m_chartChooser; }
    [[nodiscard]] StepListModel* stepModel() const { return m_steps; }
    [[nodiscard]] FigureTableModel* figureModel() const { return m_figures; }
    [[nodiscard]] QWidget* followChip() const { return m_followChip; }

    // Where stage 4's α–β inputs come from (issue #17): the fabric of the call's group (NCCL's view of it,
    // collective/fabriclink.h; the default for a call NCCL runs), the paper's example (10 µs, 10 Gb/s; one
    // click away, and what a scenario pinning textbook schedules times them with unless it names its own),
    // the scenario's own link, or the user's hand edit (kept until "From the fabric" or "The paper's example").
    enum class LinkSource { Fabric, PapersExample, Scenario, Hand };
    [[nodiscard]] LinkSource linkSource() const { return m_linkSource; }
    [[nodiscard]] const collective::LinkModel& link() const { return m_link; }
    [[nodiscard]] QString linkWhy() const;
    [[nodiscard]] QDoubleSpinBox* alphaBox() const { return m_alpha; }
    [[nodiscard]] QDoubleSpinBox* bandwidthBox() const { return m_bandwidth; }
    [[nodiscard]] QPushButton* papersExampleButton() const { return m_paperLink; }
    [[nodiscard]] QPushButton* fabricLinkButton() const { return m_fabricLink; }
    // NCCL's view of the played call: bus bandwidth against size, and its channels.
    [[nodiscard]] BusBwChart* busBwChart() const { return m_busbw; }
    [[nodiscard]] NcclChannelView* channelView() const { return m_channelView; }
    [[nodiscard]] QWidget* busBwPage() const;
    [[nodiscard]] QWidget* channelPage() const;

    // The live thread: the entries of the "Call" list that carry the followed token (marked with a
    // yellow dot; their tooltip gives its bytes), and the token's calls as a table — one row per entry,
    // its bytes per call and on the wire per step; choosing a row plays that call.
    [[nodiscard]] QList<int> tokenEntries() const;
    [[nodiscard]] QStandardItemModel* tokenCallModel() const { return m_tokenCalls; }
    [[nodiscard]] QTableView* tokenCallTable() const { return m_tokenTable; }
    // Plays the token table's row (its call chosen from the plan and played from step 0).
    bool playTokenCall(int row);
    static constexpr int EntryRole = Qt::UserRole + 1; // the token table's rows: the "Call" list entry
    static constexpr int CarriesTokenRole = Qt::UserRole + 2; // the "Call" list's items: bytes of the token (0: gradients only)

private:
    void buildForm(QWidget* form);
    QScrollArea* buildComparePage();
    void buildLinkSources(QFormLayout* link, QWidget* form); // buttons "From the fabric", "The paper's example"; hand edits
    void onDerived(const std::shared_ptr<const scenario::Derivation>& derivation);
    void showScenario();
    void fillAlgorithms();
    // The textbook schedule the algorithm box's entry `name` plays ("auto" and NCCL's algorithms: their stand-in).
    [[nodiscard]] collective::Algorithm scheduleFor(collective::Op op, const QString& name);
    void applySpec(const collective::ScheduleSpec& spec); // the call to play: view, counts, charts
    void editSpec();                                     // the form changed the override
    void updateCounts();
    void updateGroup();   // NCCL's view of the played call's group, and NCCL's prediction for the call
    void updateLink();    // α and β from the chosen source; the boxes and the note show them
    void linkChanged();   // counts, table and charts after α or β changed
    void updateNccl();    // the bus-bandwidth chart and the channels, when their tab shows
    void updateStepLabel();
    void scheduleCharts();
    void updateFollow();
    void applyUnits();
    void applySpeed();
    [[nodiscard]] DisplayUnits units() const;

    Document* m_document;
    std::shared_ptr<const scenario::Derivation> m_derivation;
    collective::ScheduleSpec m_spec;
    std::vector<int> m_planCalls; // the "Call" list's plan entries: indices into CommPlan::calls
    bool m_updating = false;
    bool m_custom = false;        // the user overrode the plan's call

    QComboBox* m_call = nullptr;
    QComboBox* m_op = nullptr;
    QComboBox* m_algorithm = nullptr;
    QSpinBox* m_ranks = nullptr;
    QLineEdit* m_bytes = nullptr;
    QLabel* m_bytesProblem = nullptr;
    QSpinBox* m_ranksPerNode = nullptr;
    QSpinBox* m_root = nullptr;
    QDoubleSpinBox* m_alpha = nullptr;
    QDoubleSpinBox* m_bandwidth = nullptr;
    QPushButton* m_fabricLink = nullptr;
    QPushButton* m_paperLink = nullptr;
    QLabel* m_linkNote = nullptr;
    enum class LinkChoice { Auto, Fabric, Paper, Hand };
    LinkChoice m_linkChoice = LinkChoice::Auto;
    LinkSource m_linkSource = LinkSource::PapersExample;
    collective::LinkModel m_link;
    QString m_linkFrom;   // short, for the caption
    QString m_linkDetail; // NCCL's figures behind it
    std::optional<nccl::System> m_group;
    nccl::Graphs m_groupGraphs;
    nccl::Tuning m_groupTuning;
    QString m_groupProblem;
    std::optional<nccl::Prediction> m_ncclPrediction;
    QString m_ncclProblem;
    BusBwChart* m_busbw = nullptr;
    NcclChannelView* m_channelView = nullptr;
    QWidget* m_channelScroll = nullptr;
    QWidget* m_busbwScroll = nullptr;
    bool m_busbwStale = true, m_channelsStale = true;
    QPushButton* m_back = nullptr;
    QPushButton* m_play = nullptr;
    QPushButton* m_forward = nullptr;
    QSlider* m_speed = nullptr;
    QLabel* m_stepLabel = nullptr;
    QLabel* m_counts = nullptr;
    QLabel* m_caption = nullptr;
    ScheduleView* m_view = nullptr;
    QTabWidget* m_tabs = nullptr;
    StepListModel* m_steps = nullptr;
    CollectiveCharts* m_charts = nullptr;
    QButtonGroup* m_chartChooser = nullptr;
    MeasuredChart* m_measured = nullptr;
    AlgorithmTableModel* m_algorithms = nullptr;
    FigureTableModel* m_figures = nullptr;
    QTableView* m_figureTable = nullptr;
    QTextBrowser* m_chain = nullptr;
    QTimer* m_chartTimer = nullptr;
    QWidget* m_followChip = nullptr;
    std::vector<int> m_entryOfCall;   // per CommPlan call: its "Call" list entry (-1 none)
    QStandardItemModel* m_tokenCalls = nullptr;
    QTableView* m_tokenTable = nullptr;
    int m_tokenTab = -1;
    FigureSet m_chainFigures;         // the plan's figures and the followed token's
    bool m_followStale = true;

protected:
    void showEvent(QShowEvent* event) override;
};

} // namespace tw::ui
