// The story's live thread, driven through the real window offscreen: hovering a token chip in stage 1
// makes it the document's followed token; stage 2 captions its row (b, t) of x [B,T,d], stage 3's spin
// box shows it (and sets it), stage 4 marks the calls that carry it and plays one when chosen, stage 5
// highlights exactly the links of its traffic; the viewer's units and animation speed reach the panes
// live; "Stop following" ends it everywhere.
//
// The scenario: paper-tp (dp 2 × tp 4 on one 8-GPU server, d = 768, bf16, L = 12) with a small batch,
// T = 8, B = 2, G = 64 (N_acc = 64/(2·8·2) = 2: 8 sequences per step, 4 per replica), on a PCIe server
// (pcie0 {0,1}, pcie1 {2,3}, pcie2 {4,5}, pcie3 {6,7} on the root complex "rc").
// Token 250: sequence ⌊250/8⌋ = 31, t = 250 − 248 = 2; step ⌊31/8⌋ = 3; q = 31 mod 8 = 7 →
// replica ⌊7/4⌋ = 1, micro-batch ⌊3/2⌋ = 1, row b = 7 mod 2 = 1; GPUs 4–7 (g = tp + 4·dp).

#include "document/document.h"
#include "mainwindow.h"
#include "panes/collectivepane.h"
#include "panes/parallelpane.h"
#include "panes/tensorpane.h"
#include "panes/textpane.h"
#include "panes/wirepane.h"
#include "settings/appsettings.h"
#include "views/meshview.h"
#include "views/scheduleview.h"
#include "views/signaturemodel.h"
#include "views/tokenchipview.h"
#include "views/transformerview.h"
#include "views/wireview.h"

#include "base/units.h"
#include "scenario/derive.h"
#include "text/gpt2.h"

#include <QAbstractItemView>
#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QScrollBar>
#include <QSlider>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTest>
#include <QTextDocument>

#include <set>

using tw::ui::AppSettings;
using tw::ui::Document;
using tw::ui::Field;
using tw::ui::FieldValue;
using tw::ui::MainWindow;

namespace {

QString plain(const QString& html)
{
    QTextDocument doc;
    doc.setHtml(html);
    return doc.toPlainText();
}

// Link ids of the "from → to" node pairs on the topology; -1 for a missing one.
std::set<long> linksNamed(const tw::network::Topology& t, const std::vector<std::pair<const char*, const char*>>& names)
{
    std::set<long> out;
    for (const auto& [a, b] : names) {
        const auto from = t.findNode(a), to = t.findNode(b);
        const auto l = from && to ? t.findLink(*from, *to) : std::nullopt;
        out.insert(l ? long(*l) : -1);
    }
    return out;
}

template <class T>
std::set<long> asSet(const std::vector<T>& v)
{
    return std::set<long>(v.begin(), v.end());
}

} // namespace

class TestLiveThread : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();
    void hoverFollowsThroughEveryStage();
    void clickPinsAndStopEnds();
    void unitsAndSpeedReachThePanes();

private:
    void hoverToken(int index);
    MainWindow* m_window = nullptr;
    Document* m_doc = nullptr;
};

void TestLiveThread::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    AppSettings::instance()->setDisplayUnits({});
    AppSettings::instance()->setAnimationSpeed(1.0);
}

void TestLiveThread::init()
{
    QVERIFY2(tw::text::gpt2Embedded(), "GPT-2's tokenizer is not in this build (configure with TOKENWIRE_REQUIRE_GPT2=ON)");
    AppSettings::instance()->setDisplayUnits({});
    AppSettings::instance()->setAnimationSpeed(1.0);
    m_window = new MainWindow;
    m_window->resize(1400, 900);
    m_window->show();
    m_doc = m_window->document();
    QVERIFY(m_doc->waitForDerivation());
    QVERIFY(m_doc->loadPreset(QStringLiteral("paper-tp")));
    QVERIFY(m_doc->waitForDerivation());
    QVERIFY(m_doc->setField(Field::SequenceLength, FieldValue(std::uint64_t(8))));
    QVERIFY(m_doc->waitForDerivation());
    QVERIFY(m_doc->setField(Field::MicroBatch, FieldValue(std::uint64_t(2))));
    QVERIFY(m_doc->waitForDerivation());
    QVERIFY(m_doc->setField(Field::GlobalBatchTokens, FieldValue(std::uint64_t(64))));
    QVERIFY(m_doc->waitForDerivation());
    tw::network::TopologySpec fabric = m_doc->scenario().topology;
    fabric.kind = tw::network::TopologyKind::PcieServer;
    fabric.gpusPerPcieSwitch = 2;
    fabric.gpuDirectP2P = true;
    QVERIFY(m_doc->setTopology(fabric, QStringLiteral("Choose fabric")));
    QVERIFY(m_doc->waitForDerivation());
    QVERIFY(m_doc->problems().empty());
    QVERIFY(m_doc->derivation()->stage3);
    QVERIFY(m_doc->derivation()->tokens().size() > 260);
    m_window->setStage(0);
    QTRY_VERIFY_WITH_TIMEOUT(!m_window->textPane()->isBusy()
                                 && m_window->textPane()->chipView()->chipCount() == int(m_doc->derivation()->tokens().size()),
                             20000);
}

void TestLiveThread::cleanup()
{
    delete m_window;
    m_window = nullptr;
    AppSettings::instance()->setDisplayUnits({});
    AppSettings::instance()->setAnimationSpeed(1.0);
}

void TestLiveThread::hoverToken(int index)
{
    auto* chips = m_window->textPane()->chipView();
    chips->setHighlighted(index); // scrolls the chip into view
    const QRect r = chips->chipRect(index);
    QVERIFY(r.isValid());
    QVERIFY(chips->viewport()->rect().contains(r.center()));
    QTest::mouseMove(chips->viewport(), r.center());
}

void TestLiveThread::hoverFollowsThroughEveryStage()
{
    // Stage 1: hovering chip 250 follows token 250.
    hoverToken(250);
    QCOMPARE(m_doc->followedToken(), qint64(250));
    QCOMPARE(m_window->textPane()->chipView()->followedChip(), 250);
    QVERIFY(m_window->textPane()->followChip()->isVisible());
    QVERIFY2(m_window->textPane()->followChip()->findChild<QLabel*>(QStringLiteral("followChipLabel"))->text().contains(
                 QStringLiteral("token #250")),
             "the follow chip names the token");

    // Stage 2: row (b, t) = (1, 2) of x [B,T,d] = [2, 8, 768]: 768 values of 2 bytes = 1,536 B.
    m_window->setStage(1);
    auto* tensors = m_window->tensorPane();
    QTRY_VERIFY(!tensors->followCaptionText().isEmpty());
    const QString caption = tensors->followCaptionText();
    QVERIFY2(caption.contains(QStringLiteral("token #250")), qPrintable(caption));
    QVERIFY2(caption.contains(QStringLiteral("row (b, t) = (1, 2) of x [B,T,d] = [2, 8, 768]")), qPrintable(caption));
    QVERIFY2(caption.contains(QStringLiteral("768 values")), qPrintable(caption));
    QVERIFY2(caption.contains(QString::fromStdString(tw::formatBytes(1536))), qPrintable(caption));
    QVERIFY2(caption.contains(QStringLiteral("optimizer step 3, DP replica 1, micro-batch 1")), qPrintable(caption));
    QVERIFY(tensors->diagram()->followCaption()->isVisible());
    QVERIFY(tensors->diagram()->markedTensors().contains(QStringLiteral("embedding.output")));
    QVERIFY(!tensors->diagram()->markedTensors().contains(QStringLiteral("layer0.attn.softmax"))); // [B,a,T,T]
    QVERIFY(tensors->chainFigures().find("trace.row_bytes"));

    // Stage 3: the spin box shows it, the mesh rings GPUs 4–7.
    m_window->setStage(2);
    auto* plan = m_window->parallelPane();
    QCOMPARE(plan->followTokenBox()->value(), 250);
    QCOMPARE(plan->meshView()->tokenGpus(), (std::vector<int>{4, 5, 6, 7}));
    QVERIFY(plan->meshView()->cardLook(5).token);
    QVERIFY(!plan->meshView()->cardLook(0).token);
    const QString line = plain(plan->tokenLine()->text());
    QVERIFY2(line.contains(QStringLiteral("DP replica 1")), qPrintable(line));
    QVERIFY2(line.contains(QStringLiteral("GPUs 4, 5, 6, 7")), qPrintable(line));
    // …and sets it: typing 251 follows token 251 everywhere.
    QSpinBox* box = plan->followTokenBox();
    box->setFocus();
    box->selectAll();
    QTest::keyClicks(box, QStringLiteral("251"));
    QTest::keyClick(box, Qt::Key_Return);
    QCOMPARE(m_doc->followedToken(), qint64(251));
    QCOMPARE(m_window->textPane()->chipView()->followedChip(), 251);
    m_doc->setFollowedToken(250);
    QCOMPARE(box->value(), 250);

    // Stage 4: the calls that carry it are marked. The entries of the "Call" list are distinct calls
    // (layers merged): the TP AllReduces after the embedding, after attention, after the MLP, of the
    // head's input gradient, of the MLP's and of attention's input gradients — 6 — and the DP gradient
    // AllReduce: 7, each marked with the token's bytes (1,536 B of the TP payload 2·8·768·2 = 24,576 B).
    m_window->setStage(3);
    auto* coll = m_window->collectivePane();
    QTRY_COMPARE(coll->tokenCallModel()->rowCount(), 7);
    QCOMPARE(coll->tokenEntries().size(), 7);
    int attention = -1;
    for (int r = 0; r < coll->tokenCallModel()->rowCount(); ++r) {
        const QString name = coll->tokenCallModel()->item(r, 0)->text();
        if (name.contains(QStringLiteral("attention output AllReduce"))) {
            attention = r;
            QCOMPARE(coll->tokenCallModel()->item(r, 1)->text(), QStringLiteral("12")); // one per layer
            QCOMPARE(coll->tokenCallModel()->item(r, 2)->text(), QString::fromStdString(tw::formatBytes(1536)));
            // Ring of 4: the row's chunk makes 2(N−1) = 6 transfers per call, 12 calls: 12·6·1,536 = 110,592 B.
            QCOMPARE(coll->tokenCallModel()->item(r, 3)->text(), QString::fromStdString(tw::formatBytes(110592)));
        }
        const int entry = coll->tokenCallModel()->item(r, 0)->data(tw::ui::CollectivePane::EntryRole).toInt();
        QVERIFY(coll->tokenEntries().contains(entry));
        QVERIFY(!coll->callBox()->itemData(entry, Qt::DecorationRole).isNull());
    }
    QVERIFY(attention >= 0);
    // Choosing its row plays that call.
    QTableView* table = coll->tokenCallTable();
    coll->tabs()->setCurrentWidget(table);
    const QRect cell = table->visualRect(coll->tokenCallModel()->index(attention, 0));
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, cell.center());
    const int entry = coll->tokenCallModel()->item(attention, 0)->data(tw::ui::CollectivePane::EntryRole).toInt();
    QCOMPARE(coll->callBox()->currentIndex(), entry);
    QVERIFY(coll->view()->isPlaying());
    QCOMPARE(coll->spec().ranks, std::uint64_t(4));
    QCOMPARE(coll->spec().bytes, 24576.0);
    coll->view()->pause();

    // Stage 5: exactly the links of its traffic. Its TP ring 4 → 5 → 6 → 7 → 4 (the row's chunk crosses
    // every edge), routed through the switches; its DP gradient AllReduce pairs {0,4} … {3,7} (dashed).
    m_window->setStage(4);
    auto* wire = m_window->wirePane();
    QVERIFY(wire->waitForSimulation());
    QTRY_VERIFY(wire->tokenTrace());
    const tw::network::Topology* topo = wire->view()->topology();
    QVERIFY(topo);
    const std::set<long> ring = linksNamed(*topo, {{"n0.gpu4", "n0.pcie2"}, {"n0.pcie2", "n0.gpu5"},
                                                   {"n0.gpu5", "n0.pcie2"}, {"n0.pcie2", "n0.rc"}, {"n0.rc", "n0.pcie3"},
                                                   {"n0.pcie3", "n0.gpu6"}, {"n0.gpu6", "n0.pcie3"}, {"n0.pcie3", "n0.gpu7"},
                                                   {"n0.gpu7", "n0.pcie3"}, {"n0.pcie3", "n0.rc"}, {"n0.rc", "n0.pcie2"},
                                                   {"n0.pcie2", "n0.gpu4"}});
    QVERIFY(!ring.contains(-1));
    QCOMPARE(asSet(wire->view()->tracedLinks()), ring);
    // The gradient pairs' links that the ring does not already cover.
    const std::set<long> gradientOnly = linksNamed(
        *topo, {{"n0.gpu0", "n0.pcie0"}, {"n0.pcie0", "n0.rc"}, {"n0.rc", "n0.pcie0"}, {"n0.pcie0", "n0.gpu0"},
                {"n0.gpu1", "n0.pcie0"}, {"n0.pcie0", "n0.gpu1"}, {"n0.gpu2", "n0.pcie1"}, {"n0.pcie1", "n0.rc"},
                {"n0.rc", "n0.pcie1"}, {"n0.pcie1", "n0.gpu2"}, {"n0.gpu3", "n0.pcie1"}, {"n0.pcie1", "n0.gpu3"}});
    QVERIFY(!gradientOnly.contains(-1));
    QCOMPARE(asSet(wire->view()->tracedGradientLinks()), gradientOnly);
    QCOMPARE(wire->view()->highlightedGpus(), (std::vector<int>{4, 5, 6, 7}));
    QVERIFY(wire->tokenCaption()->isVisible());
    QVERIFY2(plain(wire->tokenCaption()->text()).contains(QStringLiteral("crosses 12 link directions")),
             qPrintable(plain(wire->tokenCaption()->text())));
    // Its links say so on hover.
    const auto first = *wire->view()->tracedLinks().begin();
    QVERIFY(wire->view()->linkToolTip(first).contains(QStringLiteral("its row crosses here")));
}

void TestLiveThread::clickPinsAndStopEnds()
{
    auto* chips = m_window->textPane()->chipView();
    chips->setHighlighted(40);
    QTest::mouseClick(chips->viewport(), Qt::LeftButton, {}, chips->chipRect(40).center());
    QCOMPARE(m_doc->followedToken(), qint64(40));
    QVERIFY(m_window->textPane()->followPinned());
    // Pinned: hovering another chip leaves it.
    hoverToken(45);
    QCOMPARE(m_doc->followedToken(), qint64(40));
    // "Stop following" on stage 5's chip ends it on every pane.
    m_window->setStage(4);
    QVERIFY(m_window->wirePane()->waitForSimulation());
    QTRY_VERIFY(m_window->wirePane()->tokenTrace());
    QWidget* chip = m_window->wirePane()->followChip();
    QVERIFY(chip->isVisible());
    auto* stop = chip->findChild<QPushButton*>(QStringLiteral("stopFollowing"));
    QVERIFY(stop);
    QTest::mouseClick(stop, Qt::LeftButton);
    QCOMPARE(m_doc->followedToken(), qint64(-1));
    QVERIFY(!chip->isVisible());
    QVERIFY(m_window->wirePane()->view()->tracedLinks().empty());
    QVERIFY(!m_window->wirePane()->tokenTrace());
    QCOMPARE(m_window->parallelPane()->followTokenBox()->value(), -1);
    QCOMPARE(chips->followedChip(), -1);
    QVERIFY(!m_window->textPane()->followPinned());
    // Hovering (another chip than the one under the pointer) follows again.
    m_window->setStage(0);
    hoverToken(47);
    QCOMPARE(m_doc->followedToken(), qint64(47));
}

void TestLiveThread::unitsAndSpeedReachThePanes()
{
    hoverToken(250);
    m_window->setStage(1);
    auto* tensors = m_window->tensorPane();
    QTRY_VERIFY(!tensors->followCaptionText().isEmpty());
    // x [B,T,d] of one micro-batch: 2·8·768·2 = 24,576 B = 24.58 kB = 24 KiB.
    QVERIFY2(tensors->diagram()->tensorLabel(QStringLiteral("embedding.output")).contains(QStringLiteral("kB")),
             qPrintable(tensors->diagram()->tensorLabel(QStringLiteral("embedding.output"))));
    AppSettings::instance()->setDisplayUnits({tw::ByteUnits::Binary, 4});
    QVERIFY2(tensors->diagram()->tensorLabel(QStringLiteral("embedding.output")).contains(QStringLiteral("24 KiB")),
             qPrintable(tensors->diagram()->tensorLabel(QStringLiteral("embedding.output"))));
    // Its row: 1,536 B = 1.5 KiB.
    QVERIFY2(tensors->followCaptionText().contains(QStringLiteral("1.5 KiB")), qPrintable(tensors->followCaptionText()));
    // Stage 3: the DP gradient AllReduce payload (GPT-2 small on tp = 4: tens of MB) in MiB.
    m_window->setStage(2);
    auto* signature = m_window->parallelPane()->signatureModel();
    const QString dpPayload = signature->index(0, tw::ui::SignatureModel::PayloadColumn).data().toString();
    QVERIFY2(dpPayload.contains(QStringLiteral("MiB")), qPrintable(dpPayload));
    QVERIFY2(plain(m_window->parallelPane()->tokenLine()->text()).contains(QStringLiteral("1.5 KiB")),
             qPrintable(plain(m_window->parallelPane()->tokenLine()->text())));
    // Stage 4: the token's bytes in its table follow too.
    m_window->setStage(3);
    auto* coll = m_window->collectivePane();
    QTRY_VERIFY(coll->tokenCallModel()->rowCount() > 0);
    bool kib = false;
    for (int r = 0; r < coll->tokenCallModel()->rowCount(); ++r)
        kib = kib || coll->tokenCallModel()->item(r, 2)->text() == QStringLiteral("1.5 KiB");
    QVERIFY(kib);

    // Animation speed: stage 4's steps per second and stage 5's step duration scale with it.
    const double before = coll->view()->speed();
    const int slider = coll->findChild<QSlider*>(QStringLiteral("speed"))->value();
    QCOMPARE(before, slider / 10.0);
    const double wallBefore = m_window->wirePane()->playSeconds();
    AppSettings::instance()->setAnimationSpeed(2.0);
    QCOMPARE(coll->view()->speed(), 2.0 * slider / 10.0);
    QCOMPARE(m_window->wirePane()->playSeconds(), wallBefore / 2.0);
}

QTEST_MAIN(TestLiveThread)
#include "tst_livethread.moc"
