#pragma once
// Stage 5, "Wire": the bits on the wire. The fabric under the stage 3 cluster drawn with the step's
// traffic (WireView), animated along the simulated timeline (play, pause, scrub, speed); the fabric
// and its parameters chosen from the form (every edit an undoable Document command: the fabric kind
// can change the cluster's shape, so kind, cluster and plan change together); charts of one link's
// throughput, of where each GPU's step goes and of the scaling sweep; the stage's figures with their
// derivation chains back to the text.
//
// The simulation (core's deriveNetwork + simulateStep) and the sweep run off the GUI thread with
// progress and cancel; the view keeps showing the last result until the new one is ready. The step
// is simulated only while the pane is visible (a hidden pane marks itself stale and simulates when
// shown), so big scenarios cost nothing elsewhere. Following a token routes its traffic off the GUI
// thread too (wirepanetrace.cpp): progress in the caption, Cancel, the latest token wins.

#include "network/routing.h"
#include "network/simulate.h"
#include "scenario/derive.h"
#include "scenario/sweep.h"
#include "scenario/tokentrace.h"

#include "panes/stagepane.h"
#include "views/wiregroups.h"
#include "views/wirelayout.h"

#include <QWidget>

#include <any>
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

class BackgroundJob;
class Document;
class FigureTableModel;
class WireCharts;
class WireView;

// What one simulation job produced (shared pointers: the GUI keeps them while the next one runs).
struct WireResult {
    std::shared_ptr<const scenario::Scenario> scenario; // the scenario simulated
    std::shared_ptr<const scenario::NetworkStage> network;
    std::shared_ptr<const network::StepSimulation> simulation;
    std::shared_ptr<const scenario::Derivation> derivation;
    std::shared_ptr<const WireGroups> groups; // the fabric's groups as stage 5 draws them
    std::shared_ptr<WireLayout> layout;       // its first layout for the view's drawing area (null: none asked)
    std::optional<Error> error;
    bool cancelled = false;
};

// The work of one job (runs on a pool thread): the fabric and the step's link loads, then the step
// simulated with MFU inputs from the derivation. Link timelines are recorded (the animation). The
// drawing's groups, and with a valid `area` its first layout for that drawing area (WireView::drawingArea).
[[nodiscard]] WireResult simulateWire(const scenario::Scenario& scenario,
                                      std::shared_ptr<const scenario::Derivation> derivation, const Progress& progress,
                                      QSizeF area = {});

class WirePane : public QWidget, public StagePane {
    Q_OBJECT
public:
    explicit WirePane(Document* document, QWidget* parent = nullptr);
    ~WirePane() override;

    [[nodiscard]] WireView* view() const { return m_view; }
    [[nodiscard]] WireCharts* charts() const { return m_charts; }
    [[nodiscard]] QTabWidget* tabs() const { return m_tabs; }
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
    [[nodiscard]] QPushButton* cancelButton() const { return m_cancel; }
    [[nodiscard]] QLineEdit* sweepGpusEdit() const { return m_sweepGpus; }
    [[nodiscard]] QPushButton* sweepButton() const { return m_sweepRun; }
    [[nodiscard]] QTextBrowser* sweepGapText() const { return m_sweepGaps; }
    [[nodiscard]] FigureTableModel* figureModel() const { return m_figures; }
    [[nodiscard]] BackgroundJob* simulationJob() const { return m_job; }
    [[nodiscard]] BackgroundJob* sweepJob() const { return m_sweepJob; }

    // The result drawn now (null before the first simulation).
    [[nodiscard]] const WireResult& result() const { return m_result; }
    // Whether the drawn result is the current scenario's (false while a new one is being simulated,
    // or when the scenario cannot be simulated: statusLabel() says why).
    [[nodiscard]] bool isCurrent() const { return m_current; }
    // Processes events until the simulation (and a sweep) is idle; false on timeout.
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
    [[nodiscard]] const scenario::TokenTrace* tokenTrace() const { return m_trace ? &*m_trace : nullptr; }
    [[nodiscard]] QLabel* tokenCaption() const { return m_tokenCaption; }
    [[nodiscard]] QWidget* followChip() const { return m_followChip; }
    // The trace's job (routing thousands of GPUs' transfers takes a second on the largest presets) and
    // the button that cancels it (shown while it runs).
    [[nodiscard]] BackgroundJob* traceJob() const { return m_traceJob; }
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
    void startSimulation();
    void applyResult(WireResult result);
    void showStatus(const QString& text, bool problem);
    void editTopology(const network::TopologySpec& spec, const QString& text, int mergeKey = 0);
    void chooseFabric(int kind);
    void setChartLink(std::optional<network::LinkId> link);
    void updateTimeLabel();
    void fillFigures();
    void tick();
    void updateTrace();
    void showTrace(const std::any& result);
    [[nodiscard]] QWidget* buildTraceRow(QWidget* parent);
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
    QProgressBar* m_progress = nullptr;
    QPushButton* m_cancel = nullptr;
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
    QTableView* m_figureTable = nullptr;
    QTextBrowser* m_chain = nullptr;
    FigureSet m_allFigures; // stages 1–5, so chains reach the inputs

    BackgroundJob* m_job = nullptr;
    BackgroundJob* m_sweepJob = nullptr;
    WireResult m_result;
    std::optional<network::LinkId> m_chartLink;
    double m_time = 0;
    bool m_current = false;
    bool m_stale = true;
    bool m_updating = false;
    std::optional<scenario::TokenTrace> m_trace;
    struct TraceRouter; // routes of m_result's topology, kept across traces (one trace at a time uses it)
    std::shared_ptr<TraceRouter> m_router;
    BackgroundJob* m_traceJob = nullptr;
    QPushButton* m_traceCancel = nullptr;
    bool m_traceStale = false; // the followed token changed while the pane was hidden
    QLabel* m_tokenCaption = nullptr;
    QWidget* m_followChip = nullptr;
};

} // namespace tw::ui
