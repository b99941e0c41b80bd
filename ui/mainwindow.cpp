#include "mainwindow.h"

#include "compare/comparepanel.h"
#include "document/autosave.h"
#include "document/document.h"
#include "export/exporter.h"
#include "document/documentactions.h"
#include "panes/collectivepane.h"
#include "panes/panekit.h"
#include "panes/parallelpane.h"
#include "panes/wirepane.h"
#include "charts/collectivecharts.h"
#include "panes/tensorpane.h"
#include "panes/textpane.h"
#include "shell/guidedtour.h"
#include "shell/modelhelp.h"
#include "shell/narrationbar.h"
#include "shell/presentation.h"
#include "settings/fontfollow.h"
#include "settings/settingsdialog.h"
#include "shell/scenariotoolbar.h"
#include "shell/screenfit.h"
#include "shell/wheelguard.h"
#include "stagenavigator.h"
#include "views/figuretablemodel.h"
#include "views/scheduleview.h"
#include "views/transformerview.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDeadlineTimer>
#include <QDir>
#include <QDockWidget>
#include <QGraphicsScene>
#include <QImage>
#include <QLineEdit>
#include <QPainter>
#include <QTabWidget>
#include <QTimer>
#include <QHBoxLayout>
#include <QToolButton>
#include <QLabel>
#include <QTextBrowser>
#include <QMenuBar>
#include <QMessageBox>
#include <QStackedWidget>
#include <QScrollArea>
#include <QStatusBar>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <functional>

namespace tw::ui {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
{
    setObjectName(QStringLiteral("mainWindow"));
    // First, before any field is made: the wheel scrolls the stages' forms, never the field passing under
    // the pointer.
    installWheelGuard();
    m_document = new Document(this);
    m_actions = new DocumentActions(m_document, this);
    connect(m_document, &Document::titleChanged, this, &MainWindow::updateTitle);
    updateTitle();
    m_navigator = new StageNavigator(this);
    m_stages = new QStackedWidget(this);
    m_textPane = new TextPane(m_document, m_stages);
    m_stages->addWidget(m_textPane);
    m_tensorPane = new TensorPane(m_document, m_stages);
    m_stages->addWidget(m_tensorPane);
    m_parallelPane = new ParallelPane(m_document, m_stages);
    m_stages->addWidget(m_parallelPane);
    m_collectivePane = new CollectivePane(m_document, m_stages);
    m_stages->addWidget(m_collectivePane);
    m_wirePane = new WirePane(m_document, m_stages);
    m_stages->addWidget(m_wirePane);
    m_stagePanes = {m_textPane, m_tensorPane, m_parallelPane, m_collectivePane, m_wirePane};
    m_narration = new NarrationBar(m_document, this);
    m_toolbar = new ScenarioToolbar(m_document, m_actions, this);
    addToolBar(Qt::TopToolBarArea, m_toolbar);
    m_presentation = new Presentation(this);

    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    // One band above the stage: the navigator with the narration's fold button, the narration under it.
    auto* head = new QHBoxLayout;
    head->setContentsMargins(0, 0, 8, 0);
    head->addWidget(m_navigator, 1);
    m_narrationToggle = new QToolButton(central);
    m_narrationToggle->setObjectName(QStringLiteral("narrationToggle"));
    m_narrationToggle->setCheckable(true);
    m_narrationToggle->setAutoRaise(true);
    head->addWidget(m_narrationToggle);
    layout->addLayout(head);
    layout->addWidget(m_narration);
    // The stage scrolls when the window has less room than it needs (Compare A/B docked under it on a
    // 1280×720 screen): the window never grows past the screen for it.
    auto* stageScroll = new QScrollArea(central);
    stageScroll->setObjectName(QStringLiteral("stageScroll"));
    stageScroll->setWidgetResizable(true);
    stageScroll->setFrameShape(QFrame::NoFrame);
    stageScroll->setWidget(m_stages);
    layout->addWidget(stageScroll, 1);
    setCentralWidget(central);
    // Compare A/B: a bottom dock, hidden until View → Compare A/B (Ctrl+K).
    m_comparePanel = new ComparePanel(m_document, this);
    auto* compareDock = new QDockWidget(tr("Compare A/B"), this);
    compareDock->setObjectName(QStringLiteral("compareDock"));
    // Scrolled inside the dock: its tables and charts never make the window taller than the screen.
    auto* compareScroll = new QScrollArea(compareDock);
    compareScroll->setObjectName(QStringLiteral("compareScroll"));
    compareScroll->setWidgetResizable(true);
    compareScroll->setFrameShape(QFrame::NoFrame);
    compareScroll->setWidget(m_comparePanel);
    compareDock->setWidget(compareScroll);
    addDockWidget(Qt::BottomDockWidgetArea, compareDock);
    compareDock->hide();
    // With nothing pinned the dock is its bar and a line of help; with A pinned it takes two fifths of the
    // window for the table and the charts (the stage scrolls above it when it needs more).
    auto fitCompareDock = [this, compareDock] {
        if (!compareDock->isVisible() || compareDock->isFloating())
            return;
        const int frame = std::max(0, compareDock->height() - compareDock->widget()->height());
        const int height = m_comparePanel->isPinned() ? std::max(260, this->height() * 2 / 5)
                                                      : m_comparePanel->compactHeight() + frame + 4;
        resizeDocks({compareDock}, {height}, Qt::Vertical);
    };
    connect(compareDock, &QDockWidget::visibilityChanged, this, [fitCompareDock](bool visible) {
        if (visible) // laid out first: the dock's frame and the panel's width are known then
            QTimer::singleShot(0, fitCompareDock);
    });
    connect(m_comparePanel, &ComparePanel::pinnedChanged, this, [fitCompareDock] { QTimer::singleShot(0, fitCompareDock); });
    m_compareAction = compareDock->toggleViewAction();
    m_compareAction->setText(tr("&Compare A/B"));
    m_compareAction->setObjectName(QStringLiteral("compareAction"));
    m_compareAction->setShortcut(QKeySequence(tr("Ctrl+K")));
    // Every chart and table gets its Export context menu.
    ExportMenus::install();
    // The followed token, in the status bar whichever pane is shown. The bar exists from the start: made
    // on the first message (a hover in stage 1), it would take its height from the panes under the pointer.
    statusBar()->setObjectName(QStringLiteral("statusBar"));
    connect(m_document, &Document::followedTokenChanged, this, [this] {
        const QString caption = panekit::followedTokenCaption(m_document);
        if (caption.isEmpty())
            statusBar()->clearMessage();
        else
            statusBar()->showMessage(tr("Following %1").arg(caption));
    });
    connect(m_navigator, &StageNavigator::stageSelected, this, qOverload<int>(&MainWindow::setStage));
    connect(m_narration, &NarrationBar::figureActivated, this, &MainWindow::showFigure);
    // One band tells the stage's story: while the narration shows, the panes' captions (which repeat
    // its numbers) give way and the drawing gets their room; folded, the captions come back.
    auto giveWay = [this](bool shown) {
        for (QWidget* pane : panes())
            for (QLabel* caption : pane->findChildren<QLabel*>())
                if (caption->property("stageCaption").toBool())
                    caption->setHidden(shown);
    };
    connect(m_narration, &NarrationBar::shownChanged, this, giveWay);
    giveWay(!m_narration->isHidden());
    buildMenus();
    // Chart text grows with presentation mode and the settings' font scale (settings/fontfollow.h).
    for (QCustomPlot* plot : findChildren<QCustomPlot*>())
        fontfollow::followAppFontChart(plot);
    // Figure chains link to their docs/model.md section (views/figuretablemodel.h): opened in Help.
    for (QTextBrowser* chain : findChildren<QTextBrowser*>())
        if (chain->objectName().endsWith(QLatin1String("Chain"))) {
            chain->setOpenLinks(false);
            connect(chain, &QTextBrowser::anchorClicked, this, &MainWindow::openHelpLink);
        }
    setStage(Stage::Text);
    screenfit::resizeToFit(this, {1400, 900}); // a 1280×720 projector included
}

QList<QWidget*> MainWindow::panes() const
{
    return {m_textPane, m_tensorPane, m_parallelPane, m_collectivePane, m_wirePane};
}

void MainWindow::buildMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(m_actions->newAction());
    file->addAction(m_actions->openAction());
    QMenu* recent = file->addMenu(tr("Open &Recent"));
    recent->setObjectName(QStringLiteral("recentMenu"));
    m_actions->addRecentFilesTo(recent);
    file->addAction(m_actions->saveAction());
    file->addAction(m_actions->saveAsAction());
    QAction* exportReport = file->addAction(tr("&Export report…"), this, [this] {
        ExportMenus::install()->exportReportInteractively(m_document, panes(), this);
    });
    exportReport->setObjectName(QStringLiteral("exportReportAction"));
    QMenu* presets = file->addMenu(tr("&Presets"));
    presets->setObjectName(QStringLiteral("presetsMenu"));
    m_actions->addPresetsTo(presets);
    file->addSeparator();
    file->addAction(tr("Open &text…"), m_textPane, &TextPane::chooseAndOpenFile);
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    edit->addAction(m_actions->undoAction());
    edit->addAction(m_actions->redoAction());
    edit->addSeparator();
    QAction* prefs = edit->addAction(tr("&Settings…"), this, &MainWindow::showSettings);
    prefs->setObjectName(QStringLiteral("settingsAction"));
    prefs->setShortcut(QKeySequence::Preferences);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->setObjectName(QStringLiteral("viewMenu"));
    view->addAction(m_presentation->action());
    m_showNarration = view->addAction(tr("Show &narration"));
    m_showNarration->setObjectName(QStringLiteral("showNarrationAction"));
    m_showNarration->setCheckable(true);
    m_showNarration->setChecked(true);
    connect(m_showNarration, &QAction::toggled, m_narration, &QWidget::setVisible);
    // The band's fold button is the action's: the drawing gets the room the sentences took.
    auto syncToggle = [this](bool shown) {
        const QSignalBlocker block(m_narrationToggle);
        m_narrationToggle->setChecked(shown);
        m_narrationToggle->setText(shown ? tr("Narration ▴") : tr("Narration ▾"));
        m_narrationToggle->setToolTip(shown ? tr("Fold the narration away (View → Show narration)")
                                            : tr("Show the narration (View → Show narration)"));
    };
    connect(m_showNarration, &QAction::toggled, m_narrationToggle, syncToggle);
    connect(m_narrationToggle, &QToolButton::toggled, m_showNarration, &QAction::setChecked);
    syncToggle(true);
    view->addAction(m_toolbar->toggleViewAction());
    view->addAction(m_compareAction);
    view->addSeparator();
    // Ctrl+1 … Ctrl+5: on the window too, so they work while the menu bar is hidden (presentation).
    const QStringList names = StageNavigator::stageNames();
    for (int i = 0; i < kStageCount; ++i) {
        const Stage stage = *stageAtIndex(i);
        QAction* go = view->addAction(tr("Stage &%1: %2").arg(numberOf(stage)).arg(names[i]));
        go->setObjectName(QStringLiteral("goToStage%1").arg(numberOf(stage)));
        go->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + i)));
        connect(go, &QAction::triggered, this, [this, stage] { setStage(stage); });
        addAction(go);
    }

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    QAction* model = help->addAction(tr("&How the numbers are computed"), this, [this] { showModelHelp(); });
    model->setObjectName(QStringLiteral("modelHelpAction"));
    model->setShortcut(QKeySequence::HelpContents);
    addAction(model); // F1 also while the menu bar is hidden (presentation)
    m_tour = new GuidedTour(this);
    QAction* tour = help->addAction(tr("&Guided tour"), m_tour, &GuidedTour::start);
    tour->setObjectName(QStringLiteral("guidedTourAction"));
    help->addAction(tr("&About TokenWire"), this, &MainWindow::showAbout);
}

Autosave* MainWindow::enableAutosave(const QString& dir)
{
    if (!m_autosave) {
        m_autosave = new Autosave(m_document, dir, this);
        m_autosave->setDialogParent(this);
        connect(m_autosave, &Autosave::failed, this,
                [this](const QString& message) { statusBar()->showMessage(message, 10000); });
    }
    return m_autosave;
}

void MainWindow::showSettings()
{
    if (!m_settings)
        m_settings = new SettingsDialog(this);
    m_settings->show();
    m_settings->raise();
    m_settings->activateWindow();
}

void MainWindow::updateTitle()
{
    setWindowTitle(tr("%1 — TokenWire").arg(m_document->title()));
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (m_actions->maybeKeepWork())
        event->accept();
    else
        event->ignore();
}

ModelHelp* MainWindow::showModelHelp(const QString& page, const QString& section)
{
    if (!m_modelHelp)
        m_modelHelp = new ModelHelp(this);
    m_modelHelp->showSection(page, section);
    m_modelHelp->show();
    m_modelHelp->raise();
    m_modelHelp->activateWindow();
    return m_modelHelp;
}

bool MainWindow::openHelpLink(const QUrl& url)
{
    if (url.scheme() != QLatin1String(kModelHelpScheme))
        return false;
    // "§2.4 " so that §2 does not stop at the first heading that merely starts with it (§2.1).
    showModelHelp(url.path(), url.fragment() + QLatin1Char(' '));
    return true;
}

void MainWindow::showAbout()
{
    QMessageBox::about(this, tr("About TokenWire"),
                       tr("<h3>TokenWire %1</h3>"
                          "<p>From words to bits on the wire: how training text becomes network traffic in "
                          "distributed LLM training, one stage at a time.</p>"
                          "<p>It follows the tutorial <i>The Life of a Token: from Words to Bits on the Wire</i> "
                          "(Avesani, Gu, Skaperas, Secci), "
                          "<a href=\"https://arxiv.org/abs/2609.19924\">arXiv 2609.19924</a>.</p>")
                           .arg(QStringLiteral(TOKENWIRE_VERSION)));
}

void MainWindow::showFigure(const QString& id)
{
    // The pane explains the figure in its chain, which is brought into view (its tab opened).
    auto show = [this](const QString& figure) {
        if (!currentPane()->showFigure(figure))
            return false;
        QWidget* pane = m_stages->currentWidget();
        for (QTextBrowser* chain : pane->findChildren<QTextBrowser*>())
            if (chain->property("figureId").toString() == figure)
                panekit::reveal(chain, pane);
        return true;
    };
    if (show(id))
        return;
    // The narration's own numbers (d·s_act …) are not the pane's: show the first of their inputs it has.
    if (const Figure* f = m_narration->narration().figures.find(id.toStdString()))
        for (const std::string& input : f->inputs)
            if (show(QString::fromStdString(input)))
                return;
}

void MainWindow::setStage(int index)
{
    if (const std::optional<Stage> s = stageAtIndex(index))
        setStage(*s);
}

void MainWindow::setStage(Stage s)
{
    const int stage = indexOf(s);
    const bool changed = stage != m_stages->currentIndex();
    // Only the shown pane's minimum size counts: a wide stage 1 does not widen stage 4.
    for (int i = 0; i < m_stages->count(); ++i) {
        const QSizePolicy::Policy p = i == stage ? QSizePolicy::Preferred : QSizePolicy::Ignored;
        m_stages->widget(i)->setSizePolicy(p, p);
    }
    m_stages->setCurrentIndex(stage);
    m_navigator->setCurrentStage(stage);
    m_narration->setStage(stage);
    m_comparePanel->setStage(stage);
    if (changed)
        emit stageChanged(stage);
}

Stage MainWindow::currentStage() const
{
    return stageAtIndex(m_stages->currentIndex()).value_or(Stage::Text);
}

int MainWindow::stage() const
{
    return m_stages->currentIndex();
}

int MainWindow::stageCount() const
{
    return kStageCount;
}

namespace {

// The window grabbed once per tab of `tabs` after the first (stage<N>-tab<K>.png in dir, K from 2),
// with `prepare(tab)` run after each switch; the tab shown before is shown again. false, with the
// error, when a picture could not be written.
bool saveTabPictures(MainWindow& window, Stage stage, QTabWidget* tabs, const QString& dir, QString* error,
                     const std::function<void(int)>& prepare = {})
{
    window.setStage(stage);
    const int shown = tabs->currentIndex();
    bool ok = true;
    for (int tab = 1; ok && tab < tabs->count(); ++tab) {
        tabs->setCurrentIndex(tab);
        QApplication::processEvents();
        if (prepare) {
            prepare(tab);
            QApplication::processEvents();
        }
        ok = window.grab().save(
            QDir(dir).filePath(QStringLiteral("stage%1-tab%2.png").arg(numberOf(stage)).arg(tab + 1)));
    }
    tabs->setCurrentIndex(shown);
    if (!ok && error)
        *error = QObject::tr("cannot write the stage %1 pictures in %2").arg(numberOf(stage)).arg(dir);
    return ok;
}

} // namespace

bool saveStageScreenshots(MainWindow& window, const QString& dir, QString* error)
{
    if (!QDir().mkpath(dir)) {
        if (error)
            *error = QObject::tr("cannot create the folder %1").arg(dir);
        return false;
    }
    window.show();
    // Let the first tokenization land so stage 1 shows real tokens, not a spinner.
    const QDeadlineTimer deadline(60000);
    while (!deadline.hasExpired()) {
        QApplication::processEvents(QEventLoop::AllEvents, 50);
        if (!window.textPane()->isBusy() && window.textPane()->shownTokens().spans)
            break;
    }
    window.document()->waitForDerivation(60000);
    // Each stage explains one figure or tensor, so the pictures show where a number comes from.
    window.textPane()->selectFigure(QStringLiteral("tokens.per_word"));
    window.tensorPane()->showTensor(QStringLiteral("layer0.attn.softmax"));
    window.tensorPane()->showFigure(QStringLiteral("memory.activations_bytes"));
    window.parallelPane()->showFigure(QStringLiteral("dp.grad_allreduce_bytes"));
    window.parallelPane()->followToken(70);
    window.collectivePane()->choosePlanCall(0);
    window.collectivePane()->view()->setStep(window.collectivePane()->view()->stepCount() / 2);
    for (int i = 0; i < kStageCount; ++i) {
        const Stage stage = *stageAtIndex(i);
        window.setStage(stage);
        // A few rounds: the narration's height follows its text, and its band's layout follows that.
        for (int round = 0; round < 4; ++round) {
            QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
            QApplication::processEvents();
        }
        if (stage == Stage::Wire) {
            // The wire simulates when shown: wait for the step, stop where the most links carry traffic.
            WirePane* wire = window.wirePane();
            wire->waitForSimulation(120000);
            wire->setTime(wire->busiestTime());
            QApplication::processEvents();
        }
        const QString path = QDir(dir).filePath(QStringLiteral("stage%1.png").arg(numberOf(stage)));
        if (!window.grab().save(path)) {
            if (error)
                *error = QObject::tr("cannot write %1").arg(path);
            return false;
        }
    }
    // Stage 2 in more pictures: the whole drawn block, and the memory chart and figure chain tabs.
    window.setStage(Stage::Tensors);
    TensorPane* pane = window.tensorPane();
    QGraphicsScene* scene = pane->diagram()->scene();
    QImage diagram(scene->sceneRect().size().toSize() * 2, QImage::Format_ARGB32);
    diagram.fill(Qt::white);
    {
        QPainter painter(&diagram);
        painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
        scene->render(&painter);
    }
    if (!diagram.save(QDir(dir).filePath(QStringLiteral("stage2-diagram.png")))) {
        if (error)
            *error = QObject::tr("cannot write the stage 2 pictures in %1").arg(dir);
        return false;
    }
    // Stage 2's other tabs; stage 4's: the algorithm comparison (drawn for the pane's spec), the table,
    // the plan's traffic; stage 3's: the calls, the pipeline timeline, the figures; stage 5's: where the
    // step goes, the scaling sweep (run over the default sizes), the figures.
    CollectivePane* coll = window.collectivePane();
    WirePane* wire = window.wirePane();
    const bool ok =
        saveTabPictures(window, Stage::Tensors, pane->tabs(), dir, error)
        && saveTabPictures(window, Stage::Collectives, coll->tabs(), dir, error,
                           [&](int tab) {
                               if (tab == 1)
                                   coll->charts()->setSpec(coll->spec(), window.document()->scenario().collectives.link);
                           })
        && saveTabPictures(window, Stage::Gpus, window.parallelPane()->tabs(), dir, error)
        && saveTabPictures(window, Stage::Wire, wire->tabs(), dir, error, [&](int tab) {
               if (tab == 2) {
                   wire->runSweep(wire->sweepGpusEdit()->text());
                   wire->waitForSimulation(300000);
               }
           });
    if (!ok)
        return false;
    window.setStage(Stage::Text);
    return true;
}

} // namespace tw::ui
