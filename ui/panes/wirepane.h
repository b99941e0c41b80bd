#pragma once
// Stage 5, "Wire": the bits on the wire. The fabric under the stage 3 cluster drawn with the step's
// traffic (WireView), animated along the simulated timeline (play, pause, scrub, speed); the fabric
// and its parameters chosen from the form (every edit an undoable Document command: the fabric kind
// can change the cluster's shape, so kind, cluster and plan change together); charts of one link's
// throughput, of where each GPU's step goes and of the scaling sweep; the stage's figures with their
// derivation chains back to the text.
//
// A view of the document's results (Results): it asks for the step while it is visible (a hidden pane
// asks when shown, so big scenarios cost nothing elsewhere), for the sweep when the user runs one and
// for the followed token's trace (wirepanetrace.cpp), and draws what they deliver. Until the current
// scenario's step arrives, the drawing shows the last one and says it is the previous scenario's.

#include "base/figure.h"
#include "base/units.h"
#include "fabric/topology.h"

#include "document/results.h"
#include "document/scenariofield.h"
#include "panes/stagepane.h"

#include <QWidget>

#include <memory>
#include <optional>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QElapsedTimer;
class QGroupBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSlider;
class QSpinBox;
class QTabWidget;
class QTableView;
class QTextBrowser;
class QTimer;
class QVBoxLayout;

namespace tw::ui {

class BusyVeil;
class Document;
class FigureTableModel;
class CollectiveBreakdownModel;
class RunPanel;
class WireCharts;
class WireView;

class WirePane : public QWidget, public StagePane {
    Q_OBJECT
public:
    explicit WirePane(Document* document, QWidget* parent = nullptr);
    ~WirePane() override;

    [[nodiscard]] WireView* view() const { return m_view; }
    [[nodiscard]] WireCharts* charts() const { return m_charts; }
    [[nodiscard]] QTabWidget* tabs() const { return m_tabs; }
    [[nodiscard]] RunPanel* runPanel() const { return m_runPanel; }
    [[nodiscard]] QComboBox* fabricBox() const { return m_kind; }
    [[nodiscard]] QSpinBox* nodesBox() const { return m_nodes; }
    [[nodiscard]] QComboBox* nicProtocolBox() const { return m_nicProtocol; }
    [[nodiscard]] QLabel* overheadNote() const { return m_overheadNote; }
    [[nodiscard]] QDoubleSpinBox* oversubscriptionBox() const { return m_oversubscription; }
    [[nodiscard]] QCheckBox* gpuDirectBox() const { return m_gpuDirect; }
    [[nodiscard]] QComboBox* nvlinkBox() const { return m_nvlink; }
    [[nodiscard]] QLineEdit* nicRateEdit() const { return m_nicRate; }
    [[nodiscard]] QPushButton* playButton() const { return m_play; }
    [[nodiscard]] QSlider* timeSlider() const { return m_slider; }
    [[nodiscard]] QComboBox* speedBox() const { return m_speed; }
    [[nodiscard]] QLabel* timeLabel() const { return m_timeLabel; }
    [[nodiscard]] QLabel* statusLabel() const { return m_status; }
    // The veil over the drawing while the current scenario's step is simulated (its text, progress, Cancel).
    [[nodiscard]] BusyVeil* veil() const { return m_veil; }
    [[nodiscard]] BusyVeil* chartVeil() const { return m_chartVeil; } // over the tabs under the drawing
    [[nodiscard]] QPushButton* cancelButton() const;
    [[nodiscard]] QLineEdit* sweepGpusEdit() const { return m_sweepGpus; }
    [[nodiscard]] QPushButton* sweepButton() const { return m_sweepRun; }
    [[nodiscard]] QTextBrowser* sweepGapText() const { return m_sweepGaps; }
    [[nodiscard]] FigureTableModel* figureModel() const { return m_figures; }
    [[nodiscard]] CollectiveBreakdownModel* breakdownModel() const { return m_byCollective; }
    [[nodiscard]] QLabel* sweepStatus() const { return m_sweepStatus; }

    // The step drawn now (empty before the first simulation).
    [[nodiscard]] const StepResult& result() const;
    // Whether the drawn step is the current scenario's (false while a new one is being simulated,
    // or when the scenario cannot be simulated: statusLabel() says why).
    [[nodiscard]] bool isCurrent() const;
    // Processes events until the document's results are idle (the step, a sweep, a trace); false on timeout.
    bool waitForSimulation(int timeoutMs = 60000);

    // The animation: the time in the step (s), playing or not, the step's wall-clock duration.
    void setTime(double seconds);
    [[nodiscard]] double time() const;
    void setPlaying(bool playing) override;
    [[nodiscard]] bool isPlaying() const override;

    // Starts a sweep over the GPU list ("1-7", "1,2,4,8"); false with the reason shown under the field.
    bool runSweep(const QString& gpus);
    // Selects a figure and shows its derivation chain (false when unknown).
    bool showFigure(const QString& id) override;
    // StagePane: the wire, zoomed by its own zoom (0 fits it).
    [[nodiscard]] QWidget* drawing() const override;
    void zoomDrawing(double factor) override;
    void fitDrawing() override;
    void restoreDrawing() override;
    // The time in the step when the most links carry traffic (for pictures and the first frame).
    [[nodiscard]] double busiestTime() const;
    // The link the throughput chart shows (the hovered one, else the most utilized).
    [[nodiscard]] std::optional<network::LinkId> chartedLink() const { return m_chartLink; }

    // The story's live thread: the followed token traced onto the drawn fabric (null when no token is
    // followed or nothing is simulated yet); the caption under the drawing says what it crosses.
    [[nodiscard]] const scenario::TokenTrace* tokenTrace() const;
    [[nodiscard]] QLabel* tokenCaption() const { return m_tokenCaption; }
    [[nodiscard]] QWidget* followChip() const { return m_followChip; }
    // The button that cancels the trace (routing thousands of GPUs' transfers takes a second on the
    // largest presets; shown while it runs).
    [[nodiscard]] QPushButton* traceCancelButton() const { return m_traceCancel; }
    // The animation's pace: one step plays in (the speed box's seconds) / (the settings' animation speed).
    [[nodiscard]] double playSeconds() const;

protected:
    void showEvent(QShowEvent* event) override;

private:
    void buildForm(QWidget* form);
    void buildPodsForm(QVBoxLayout* layout);         // wirepanepods.cpp: the three-tier fields
    void showPods(const scenario::Scenario& scenario);
    void showScenario();
    void onDerived();
    void requestStep();
    void applyStep(const std::shared_ptr<const StepResult>& result);
    void showOutdated();
    void applySweep(const std::shared_ptr<const SweepResult>& result);
    void showStatus(const QString& text, bool problem);
    void editTopology(const network::TopologySpec& spec, const QString& text, EditMerge merge = EditMerge::None);
    void chooseFabric(int kind);
    void setChartLink(std::optional<network::LinkId> link);
    void updateTimeLabel();
    void fillFigures();
    void tick();
    void updateTrace();
    void showTrace(const std::shared_ptr<const TraceResult>& result);
    [[nodiscard]] QWidget* buildTraceRow(QWidget* parent);
    [[nodiscard]] QWidget* buildCollectiveTable();
    void applyUnits();
    [[nodiscard]] DisplayUnits units() const;

    Document* m_document;
    WireView* m_view = nullptr;
    std::optional<double> m_zoomBeforeZoom; // the wire's zoom before presentation mode's first
    WireCharts* m_charts = nullptr;
    QTabWidget* m_tabs = nullptr;
    QLabel* m_caption = nullptr;
    // Fabric form
    QComboBox* m_kind = nullptr;
    QSpinBox* m_nodes = nullptr;
    QLabel* m_clusterLabel = nullptr;
    QComboBox* m_pcie = nullptr;
    QSpinBox* m_gpusPerSwitch = nullptr;
    QCheckBox* m_gpuDirect = nullptr;
    QComboBox* m_intraNode = nullptr;
    QComboBox* m_nicPlacement = nullptr;
    QComboBox* m_nicProtocol = nullptr;
    QComboBox* m_nvlink = nullptr;
    QLineEdit* m_nicRate = nullptr;
    QLabel* m_nicRateProblem = nullptr;
    QDoubleSpinBox* m_oversubscription = nullptr;
    QSpinBox* m_nicsPerLeaf = nullptr;
    QSpinBox* m_spines = nullptr;
    QLabel* m_fabricProblem = nullptr;
    QLabel* m_overheadNote = nullptr;
    QGroupBox* m_networkBox = nullptr;
    QGroupBox* m_serverBox = nullptr;
    QLabel* m_testbedNote = nullptr;
    // Three-tier fabric (wirepanepods.cpp)
    QGroupBox* m_podsBox = nullptr;
    QSpinBox* m_gpusPerPod = nullptr;
    QSpinBox* m_leavesPerPod = nullptr;
    QSpinBox* m_spinesPerPod = nullptr;
    QSpinBox* m_coreSwitches = nullptr;
    QDoubleSpinBox* m_coreOversubscription = nullptr;
    QLabel* m_podsShape = nullptr;
    // Simulation status
    QLabel* m_status = nullptr;
    BusyVeil* m_veil = nullptr;
    BusyVeil* m_chartVeil = nullptr;
    QLabel* m_summary = nullptr;
    // Transport
    QPushButton* m_play = nullptr;
    QSlider* m_slider = nullptr;
    QComboBox* m_speed = nullptr;
    QLabel* m_timeLabel = nullptr;
    QTimer* m_timer = nullptr;
    std::unique_ptr<QElapsedTimer> m_clock;
    // Sweep
    QLineEdit* m_sweepGpus = nullptr;
    QCheckBox* m_sweepStrong = nullptr;
    QPushButton* m_sweepRun = nullptr;
    QPushButton* m_sweepCancel = nullptr;
    QLabel* m_sweepStatus = nullptr;
    QTextBrowser* m_sweepGaps = nullptr;
    // Figures
    FigureTableModel* m_figures = nullptr;
    CollectiveBreakdownModel* m_byCollective = nullptr; // "By collective": the step's rows
    RunPanel* m_runPanel = nullptr;                    // "Run": the whole training run of the step
    QTableView* m_figureTable = nullptr;
    QTextBrowser* m_chain = nullptr;
    FigureSet m_allFigures; // stages 1–5, so chains reach the inputs

    Results* m_results;
    std::shared_ptr<const StepResult> m_drawn;      // the step drawn (of the current scenario or older)
    std::shared_ptr<const TraceResult> m_drawnTrace; // the followed token's trace drawn on it
    std::optional<network::LinkId> m_chartLink;
    double m_time = 0;
    bool m_updating = false;
    QPushButton* m_traceCancel = nullptr;
    bool m_traceStale = false; // the followed token changed while the pane was hidden
    QLabel* m_tokenCaption = nullptr;
    QWidget* m_followChip = nullptr;
};

} // namespace tw::ui
