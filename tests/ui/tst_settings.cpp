// The viewer's settings (ui/settings): AppSettings persisted and clamped, the Settings dialog driven
// by key and mouse events changing AppSettings and, through theme.h, the application's palette,
// font and drawing colours; the recent files and File → Open Recent (DocumentActions).
//
// Reference colours are the published ones: Okabe & Ito (2008) blue #0072B2 = (0, 114, 178) and
// orange #E69F00 = (230, 159, 0); Paul Tol's "bright" blue #4477AA and red #EE6677.

#include "document/document.h"
#include "document/documentactions.h"
#include "settings/appsettings.h"
#include "settings/settingsdialog.h"
#include "panes/panekit.h"
#include "settings/theme.h"
#include "views/palette.h"

#include "scenario/scenariojson.h"

#include <QAbstractButton>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QMenu>
#include <QProxyStyle>
#include <QRadioButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <limits>

using tw::ui::AppSettings;
using tw::ui::Document;
using tw::ui::DocumentActions;
using tw::ui::Field;
using tw::ui::SettingsDialog;

namespace {

QSettings store()
{
    return QSettings(QStringLiteral("TokenWire"), QStringLiteral("TokenWire"));
}

// Counts its paint events (a stand-in for any window that must repaint after a change).
class PaintCounter : public QWidget {
public:
    int paints = 0;

protected:
    void paintEvent(QPaintEvent*) override { ++paints; }
};

// Replaces a spin box's text by typing, as a user does: select all, type, Enter.
void typeInto(QAbstractSpinBox* box, const QString& text)
{
    box->setFocus();
    QTest::keyClick(box, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(box, text);
    QTest::keyClick(box, Qt::Key_Return);
}

// Shows `menu` and clicks `action` in it.
void clickInMenu(QMenu* menu, QAction* action)
{
    menu->popup(QPoint(20, 20));
    QVERIFY(QTest::qWaitForWindowExposed(menu));
    const QRect box = menu->actionGeometry(action);
    QVERIFY(box.isValid());
    QTest::mouseClick(menu, Qt::LeftButton, {}, box.center());
    QCoreApplication::processEvents(); // the old entries are deleted later
}

QAction* entryFor(QMenu* menu, const QString& path)
{
    for (QAction* action : menu->actions())
        if (action->data().toString() == path)
            return action;
    return nullptr;
}

QAction* clearEntry(QMenu* menu)
{
    for (QAction* action : menu->actions())
        if (action->objectName() == QLatin1String("clearRecentFiles"))
            return action;
    return nullptr;
}

QList<QAction*> fileEntries(QMenu* menu)
{
    QList<QAction*> out;
    for (QAction* action : menu->actions())
        if (!action->data().toString().isEmpty())
            out << action;
    return out;
}

} // namespace

class TestSettings : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void cleanup();
    void valuesPersistAcrossReload();
    void valuesAreClamped();
    void storedGarbageFallsBack();
    void dialogChangesUnits();
    void dialogSwitchesThemeAndPalette();
    void textColoursFollowTheTheme();
    void problemTextFollowsTheTheme();
    void dialogScalesTheFontFromTheStart();
    void dialogSetsSpeedAndAutosave();
    void restoreDefaults();
    void recentFilesOrderDedupeLimit();
    void openRecentMenu();
};

void TestSettings::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QSettings s = store();
    s.clear();
    s.sync();
    AppSettings::instance()->reload();
    tw::ui::theme::followAppSettings(*qApp);
}

void TestSettings::cleanup()
{
    AppSettings::instance()->restoreDefaults();
    AppSettings::instance()->clearRecentFiles();
}

void TestSettings::valuesPersistAcrossReload()
{
    AppSettings* settings = AppSettings::instance();
    settings->setDisplayUnits({tw::ByteUnits::Binary, 6});
    settings->setTheme(AppSettings::Theme::Dark);
    settings->setPaletteScheme(AppSettings::PaletteScheme::TolBright);
    settings->setFontScale(1.75);
    settings->setAnimationSpeed(2.5);
    settings->setAutosaveIntervalSeconds(45);
    settings->addRecentFile(QStringLiteral("/tmp/one.tokenwire.json"));
    // On disk under their keys …
    {
        const QSettings s = store();
        QCOMPARE(s.value(QStringLiteral("units/bytes")).toString(), QStringLiteral("binary"));
        QCOMPARE(s.value(QStringLiteral("units/digits")).toInt(), 6);
        QCOMPARE(s.value(QStringLiteral("view/theme")).toString(), QStringLiteral("dark"));
        QCOMPARE(s.value(QStringLiteral("view/palette")).toString(), QStringLiteral("tol-bright"));
        QCOMPARE(s.value(QStringLiteral("view/fontScale")).toDouble(), 1.75);
        QCOMPARE(s.value(QStringLiteral("view/animationSpeed")).toDouble(), 2.5);
        QCOMPARE(s.value(QStringLiteral("files/autosaveSeconds")).toInt(), 45);
        QCOMPARE(s.value(QStringLiteral("files/recent")).toStringList(), QStringList{QStringLiteral("/tmp/one.tokenwire.json")});
    }
    // … and read back by reload().
    settings->reload();
    QVERIFY(settings->displayUnits() == (tw::DisplayUnits{tw::ByteUnits::Binary, 6}));
    QVERIFY(settings->theme() == AppSettings::Theme::Dark);
    QVERIFY(settings->paletteScheme() == AppSettings::PaletteScheme::TolBright);
    QCOMPARE(settings->fontScale(), 1.75);
    QCOMPARE(settings->animationSpeed(), 2.5);
    QCOMPARE(settings->autosaveIntervalSeconds(), 45);
    QCOMPARE(settings->recentFiles(), QStringList{QStringLiteral("/tmp/one.tokenwire.json")});
    // Another instance (here: QSettings directly) writes; reload() picks it up.
    {
        QSettings s = store();
        s.setValue(QStringLiteral("view/theme"), QStringLiteral("light"));
        s.setValue(QStringLiteral("view/fontScale"), 1.25);
        s.sync();
    }
    settings->reload();
    QVERIFY(settings->theme() == AppSettings::Theme::Light);
    QCOMPARE(settings->fontScale(), 1.25);
    QVERIFY(settings->paletteScheme() == AppSettings::PaletteScheme::TolBright); // untouched
}

void TestSettings::valuesAreClamped()
{
    AppSettings* settings = AppSettings::instance();
    QSignalSpy fontSignals(settings, &AppSettings::fontScaleChanged);
    settings->setFontScale(10.0);
    QCOMPARE(settings->fontScale(), AppSettings::kMaxFontScale); // 2.5
    QCOMPARE(settings->fontScale(), 2.5);
    settings->setFontScale(std::numeric_limits<double>::quiet_NaN());
    QCOMPARE(settings->fontScale(), 1.0); // NaN: the default, not a clamp
    settings->setFontScale(0.1);
    QCOMPARE(settings->fontScale(), 0.75);
    settings->setFontScale(std::numeric_limits<double>::infinity());
    QCOMPARE(settings->fontScale(), 1.0);
    QCOMPARE(fontSignals.size(), 4);
    settings->setFontScale(1.0); // unchanged: no signal
    QCOMPARE(fontSignals.size(), 4);
    settings->setAnimationSpeed(0.0);
    QCOMPARE(settings->animationSpeed(), 0.25);
    settings->setAnimationSpeed(100.0);
    QCOMPARE(settings->animationSpeed(), 4.0);
    settings->setAnimationSpeed(std::numeric_limits<double>::quiet_NaN());
    QCOMPARE(settings->animationSpeed(), 1.0);
    settings->setDisplayUnits({tw::ByteUnits::Decimal, 1});
    QCOMPARE(settings->displayUnits().significantDigits, 2);
    settings->setDisplayUnits({tw::ByteUnits::Decimal, 20});
    QCOMPARE(settings->displayUnits().significantDigits, 8);
    settings->setAutosaveIntervalSeconds(1);
    QCOMPARE(settings->autosaveIntervalSeconds(), 5);
    settings->setAutosaveIntervalSeconds(100000);
    QCOMPARE(settings->autosaveIntervalSeconds(), 600);
}

void TestSettings::storedGarbageFallsBack()
{
    {
        QSettings s = store();
        s.setValue(QStringLiteral("view/fontScale"), QStringLiteral("huge"));
        s.setValue(QStringLiteral("view/animationSpeed"), 9.0);
        s.setValue(QStringLiteral("view/theme"), QStringLiteral("purple"));
        s.setValue(QStringLiteral("units/digits"), QStringLiteral("many"));
        s.setValue(QStringLiteral("files/recent"),
                   QStringList{QStringLiteral("/a"), QString(), QStringLiteral("/a"), QStringLiteral("/b")});
        s.sync();
    }
    AppSettings* settings = AppSettings::instance();
    settings->reload();
    QCOMPARE(settings->fontScale(), 1.0);      // not a number: the default
    QCOMPARE(settings->animationSpeed(), 4.0); // a number out of range: clamped
    QVERIFY(settings->theme() == AppSettings::Theme::Light);
    QCOMPARE(settings->displayUnits().significantDigits, 4);
    QCOMPARE(settings->recentFiles(), (QStringList{QStringLiteral("/a"), QStringLiteral("/b")}));
}

void TestSettings::dialogChangesUnits()
{
    SettingsDialog dialog;
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    AppSettings* settings = AppSettings::instance();
    // 50,331,648 B = 50.331648 × 10^6 B → "50.33 MB" at 4 significant digits.
    QVERIFY(dialog.decimalButton()->isChecked());
    QVERIFY2(dialog.unitsExample()->text().endsWith(QStringLiteral("50.33 MB")), qPrintable(dialog.unitsExample()->text()));
    QTest::mouseClick(dialog.binaryButton(), Qt::LeftButton);
    QVERIFY(settings->displayUnits().bytes == tw::ByteUnits::Binary);
    // = 48 × 2^20 B: 48 MiB.
    QVERIFY2(dialog.unitsExample()->text().contains(QStringLiteral(" 48")) &&
                 dialog.unitsExample()->text().endsWith(QStringLiteral(" MiB")),
             qPrintable(dialog.unitsExample()->text()));
    QTest::mouseClick(dialog.decimalButton(), Qt::LeftButton);
    QVERIFY(settings->displayUnits().bytes == tw::ByteUnits::Decimal);
    dialog.digitsBox()->setFocus();
    QTest::keyClick(dialog.digitsBox(), Qt::Key_Up);
    QCOMPARE(settings->displayUnits().significantDigits, 5);
    QVERIFY2(dialog.unitsExample()->text().endsWith(QStringLiteral("50.332 MB")), qPrintable(dialog.unitsExample()->text()));
    typeInto(dialog.digitsBox(), QStringLiteral("3"));
    QCOMPARE(settings->displayUnits().significantDigits, 3);
    QVERIFY2(dialog.unitsExample()->text().endsWith(QStringLiteral("50.3 MB")), qPrintable(dialog.unitsExample()->text()));
}

void TestSettings::dialogSwitchesThemeAndPalette()
{
    PaintCounter window;
    window.resize(200, 100);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    SettingsDialog dialog;
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    AppSettings* settings = AppSettings::instance();
    namespace palette = tw::ui::palette;

    QVERIFY(QApplication::palette().color(QPalette::Window).lightness() > 200);
    dialog.themeBox()->setFocus();
    QTest::keyClick(dialog.themeBox(), Qt::Key_Down);
    QVERIFY(settings->theme() == AppSettings::Theme::Dark);
    QVERIFY(QApplication::palette().color(QPalette::Window).lightness() < 80);
    QVERIFY(QApplication::palette().color(QPalette::WindowText).lightness() > 200);
    QCOMPARE(QApplication::style()->objectName(), QStringLiteral("tokenwire-fusion"));
    auto* proxy = qobject_cast<QProxyStyle*>(QApplication::style());
    QVERIFY(proxy && proxy->baseStyle()->name().toLower() == QStringLiteral("fusion"));
    int before = window.paints;
    QTRY_VERIFY(window.paints > before); // every widget repaints

    QCOMPARE(palette::strategy(0), QColor(0x00, 0x72, 0xB2));
    dialog.paletteBox()->setFocus();
    QTest::keyClick(dialog.paletteBox(), Qt::Key_Down);
    QVERIFY(settings->paletteScheme() == AppSettings::PaletteScheme::TolBright);
    QCOMPARE(palette::strategy(0), QColor(0x44, 0x77, 0xAA));
    QCOMPARE(palette::categorical(0), QColor(0x44, 0x77, 0xAA));
    QCOMPARE(palette::strategy(1), QColor(0xEE, 0x66, 0x77));
    QCOMPARE(palette::categorical(1), QColor(0xEE, 0x66, 0x77));
    before = window.paints;
    QTRY_VERIFY(window.paints > before);
    QTest::keyClick(dialog.paletteBox(), Qt::Key_Up);
    QVERIFY(settings->paletteScheme() == AppSettings::PaletteScheme::OkabeIto);
    QCOMPARE(palette::strategy(0), QColor(0, 114, 178));
    QCOMPARE(palette::strategy(1), QColor(230, 159, 0));

    dialog.themeBox()->setFocus();
    QTest::keyClick(dialog.themeBox(), Qt::Key_Up);
    QVERIFY(settings->theme() == AppSettings::Theme::Light);
    QVERIFY(QApplication::palette().color(QPalette::Window).lightness() > 200);
    // A change from elsewhere shows in the dialog.
    settings->setTheme(AppSettings::Theme::Dark);
    QCOMPARE(dialog.themeBox()->currentIndex(), 1);
}

void TestSettings::textColoursFollowTheTheme()
{
    // The colours widgets write into rich text and style sheets suit the palette in use: on the dark
    // window the light ink (theme.h: #7CC0FF, #A3AAB5, #FF8A80), on the light one the dark ink; an error
    // label styled once follows a later change of theme; and a palette that stays light while the
    // settings say dark (a batch run keeps the default palette) keeps the light-window colours.
    AppSettings* settings = AppSettings::instance();
    namespace theme = tw::ui::theme;
    QLabel label(QStringLiteral("a problem"));
    theme::styleErrorLabel(&label, QStringLiteral("padding-left: 6px;"));
    QVERIFY(label.styleSheet().contains(QLatin1String("#b91c1c")));
    QVERIFY(label.styleSheet().contains(QLatin1String("padding-left: 6px;")));
    QCOMPARE(theme::linkColor(), QColor(0x0B, 0x4F, 0x8A));
    QCOMPARE(theme::mutedTextColor(), QColor(0x47, 0x55, 0x69));

    settings->setTheme(AppSettings::Theme::Dark); // followAppSettings (initTestCase) applies the dark palette
    QVERIFY(QApplication::palette().color(QPalette::Window).lightness() < 80);
    QCOMPARE(theme::linkColor(), QColor(0x7C, 0xC0, 0xFF));
    QCOMPARE(theme::mutedTextColor(), QColor(0xA3, 0xAA, 0xB5));
    QCOMPARE(theme::errorColor(), QColor(0xFF, 0x8A, 0x80));
    QVERIFY2(label.styleSheet().contains(QLatin1String("#ff8a80")), qPrintable(label.styleSheet()));
    QVERIFY(label.styleSheet().contains(QLatin1String("padding-left: 6px;")));

    QApplication::setPalette(theme::paletteFor(AppSettings::Theme::Light)); // as a batch run: light palette
    QVERIFY(settings->theme() == AppSettings::Theme::Dark);
    QCOMPARE(theme::linkColor(), QColor(0x0B, 0x4F, 0x8A));
    QCOMPARE(theme::errorColor(), QColor(0xB9, 0x1C, 0x1C));

    settings->setTheme(AppSettings::Theme::Light);
    QVERIFY(label.styleSheet().contains(QLatin1String("#b91c1c")));
}

void TestSettings::problemTextFollowsTheTheme()
{
    // Problem texts (#20): a pane's problem label and a status line that turns into a problem take
    // theme.h's error colour, #B91C1C on the light window and #FF8A80 on the dark one, and follow a later
    // change of theme; a status line that is no longer a problem drops the colour, and stays plain
    // across a change of theme.
    AppSettings* settings = AppSettings::instance();
    namespace theme = tw::ui::theme;
    settings->setTheme(AppSettings::Theme::Light);
    QWidget pane;
    QLabel* problem = tw::ui::panekit::problemLabel(&pane, "problem");
    QLabel status(QStringLiteral("simulating"));
    theme::showProblem(&status, false);
    QVERIFY(status.styleSheet().isEmpty());
    theme::showProblem(&status, true);
    QVERIFY2(problem->styleSheet().contains(QLatin1String("#b91c1c")), qPrintable(problem->styleSheet()));
    QVERIFY2(status.styleSheet().contains(QLatin1String("#b91c1c")), qPrintable(status.styleSheet()));

    settings->setTheme(AppSettings::Theme::Dark);
    QVERIFY2(problem->styleSheet().contains(QLatin1String("#ff8a80")), qPrintable(problem->styleSheet()));
    QVERIFY2(status.styleSheet().contains(QLatin1String("#ff8a80")), qPrintable(status.styleSheet()));
    theme::showProblem(&status, false);
    QVERIFY(status.styleSheet().isEmpty());
    settings->setTheme(AppSettings::Theme::Light);
    QVERIFY(status.styleSheet().isEmpty());
    theme::showProblem(&status, true);
    QVERIFY(status.styleSheet().contains(QLatin1String("#b91c1c")));
}

void TestSettings::dialogScalesTheFontFromTheStart()
{
    SettingsDialog dialog;
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    AppSettings* settings = AppSettings::instance();
    const double base = tw::ui::theme::baseFont().pointSizeF();
    QVERIFY(base > 0);
    QCOMPARE(QApplication::font().pointSizeF(), base);
    typeInto(dialog.fontBox(), QStringLiteral("150"));
    QCOMPARE(settings->fontScale(), 1.5);
    QCOMPARE(QApplication::font().pointSizeF(), base * 1.5);
    QCOMPARE(dialog.fontSlider()->value(), 150);
    // 200 % of the start font, not 200 % of 150 %.
    typeInto(dialog.fontBox(), QStringLiteral("200"));
    QCOMPARE(QApplication::font().pointSizeF(), base * 2.0);
    // The slider: PageDown is 25 points of percentage.
    dialog.fontSlider()->setFocus();
    QTest::keyClick(dialog.fontSlider(), Qt::Key_PageDown);
    QCOMPARE(settings->fontScale(), 1.75);
    QCOMPARE(dialog.fontBox()->value(), 175);
    QCOMPARE(QApplication::font().pointSizeF(), base * 1.75);
    // Out of range typed: the spin box keeps it within 75–250 %.
    typeInto(dialog.fontBox(), QStringLiteral("999"));
    QVERIFY(settings->fontScale() <= 2.5);
    QCOMPARE(dialog.fontBox()->value(), int(std::lround(settings->fontScale() * 100)));
    // Presentation mode's font: the settings' font times its zoom.
    QCOMPARE(tw::ui::theme::scaledFont(1.6).pointSizeF(), base * settings->fontScale() * 1.6);
}

void TestSettings::dialogSetsSpeedAndAutosave()
{
    SettingsDialog dialog;
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    AppSettings* settings = AppSettings::instance();
    dialog.speedBox()->setFocus();
    QTest::keyClick(dialog.speedBox(), Qt::Key_Up);
    QCOMPARE(settings->animationSpeed(), 1.25);
    QCOMPARE(dialog.speedSlider()->value(), 5); // 5 quarters
    dialog.speedSlider()->setFocus();
    QTest::keyClick(dialog.speedSlider(), Qt::Key_Right);
    QCOMPARE(settings->animationSpeed(), 1.5);
    QTest::keyClick(dialog.speedSlider(), Qt::Key_Home);
    QCOMPARE(settings->animationSpeed(), 0.25);
    QTest::keyClick(dialog.speedSlider(), Qt::Key_End);
    QCOMPARE(settings->animationSpeed(), 4.0);
    QCOMPARE(dialog.speedBox()->value(), 4.0);
    typeInto(dialog.autosaveBox(), QStringLiteral("90"));
    QCOMPARE(settings->autosaveIntervalSeconds(), 90);
}

void TestSettings::restoreDefaults()
{
    AppSettings* settings = AppSettings::instance();
    settings->setDisplayUnits({tw::ByteUnits::Binary, 7});
    settings->setTheme(AppSettings::Theme::Dark);
    settings->setPaletteScheme(AppSettings::PaletteScheme::TolBright);
    settings->setFontScale(2.0);
    settings->setAnimationSpeed(3.0);
    settings->setAutosaveIntervalSeconds(300);
    settings->addRecentFile(QStringLiteral("/tmp/kept.tokenwire.json"));
    SettingsDialog dialog;
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    QVERIFY(dialog.binaryButton()->isChecked());
    QCOMPARE(dialog.fontBox()->value(), 200);
    QTest::mouseClick(dialog.restoreDefaultsButton(), Qt::LeftButton);
    QVERIFY(settings->displayUnits() == tw::DisplayUnits{});
    QVERIFY(settings->theme() == AppSettings::Theme::Light);
    QVERIFY(settings->paletteScheme() == AppSettings::PaletteScheme::OkabeIto);
    QCOMPARE(settings->fontScale(), 1.0);
    QCOMPARE(settings->animationSpeed(), 1.0);
    QCOMPARE(settings->autosaveIntervalSeconds(), 30);
    QCOMPARE(settings->recentFiles(), QStringList{QStringLiteral("/tmp/kept.tokenwire.json")}); // not a preference
    // The dialog shows them, the application follows.
    QVERIFY(dialog.decimalButton()->isChecked());
    QCOMPARE(dialog.digitsBox()->value(), 4);
    QCOMPARE(dialog.themeBox()->currentIndex(), 0);
    QCOMPARE(dialog.paletteBox()->currentIndex(), 0);
    QCOMPARE(dialog.fontBox()->value(), 100);
    QCOMPARE(dialog.speedBox()->value(), 1.0);
    QCOMPARE(dialog.autosaveBox()->value(), 30);
    QCOMPARE(QApplication::font().pointSizeF(), tw::ui::theme::baseFont().pointSizeF());
    QCOMPARE(tw::ui::palette::strategy(0), QColor(0x00, 0x72, 0xB2));
    QVERIFY(QApplication::palette().color(QPalette::Window).lightness() > 200);
}

void TestSettings::recentFilesOrderDedupeLimit()
{
    AppSettings* settings = AppSettings::instance();
    auto file = [](int i) { return QStringLiteral("/tmp/tw-recent/%1.tokenwire.json").arg(i); };
    settings->addRecentFile(file(1));
    settings->addRecentFile(file(2));
    settings->addRecentFile(file(3));
    QCOMPARE(settings->recentFiles(), (QStringList{file(3), file(2), file(1)})); // newest first
    settings->addRecentFile(file(1));
    QCOMPARE(settings->recentFiles(), (QStringList{file(1), file(3), file(2)})); // moved, not doubled
    for (int i = 4; i <= 12; ++i)
        settings->addRecentFile(file(i));
    QCOMPARE(settings->recentFiles().size(), AppSettings::kMaxRecentFiles); // 8
    QCOMPARE(settings->recentFiles().first(), file(12));
    QCOMPARE(settings->recentFiles().last(), file(5)); // 12 … 5: the eight newest
    // A relative path is stored absolute, and the same file named two ways is one entry.
    settings->addRecentFile(QStringLiteral("rel.tokenwire.json"));
    QCOMPARE(settings->recentFiles().first(), QDir::current().absoluteFilePath(QStringLiteral("rel.tokenwire.json")));
    settings->addRecentFile(QStringLiteral("./rel.tokenwire.json"));
    QCOMPARE(settings->recentFiles().count(QDir::current().absoluteFilePath(QStringLiteral("rel.tokenwire.json"))), 1);
    settings->removeRecentFile(file(12));
    QVERIFY(!settings->recentFiles().contains(file(12)));
    settings->clearRecentFiles();
    QVERIFY(settings->recentFiles().isEmpty());
}

void TestSettings::openRecentMenu()
{
    QTemporaryDir tmp;
    const QString one = QDir(tmp.path()).absoluteFilePath(QStringLiteral("one.tokenwire.json"));
    const QString two = QDir(tmp.path()).absoluteFilePath(QStringLiteral("two.tokenwire.json"));
    Document doc;
    DocumentActions actions(&doc, nullptr);
    QStringList errors;
    actions.showError = [&](const QString&, const QString& message) { errors << message; };
    int asked = 0;
    actions.askUnsaved = [&] {
        ++asked;
        return DocumentActions::UnsavedChoice::Cancel;
    };
    QString savePath;
    actions.askSavePath = [&] { return savePath; };
    AppSettings* settings = AppSettings::instance();

    // Saving puts the file in the list: one with L = 5, then two with L = 9.
    QVERIFY(doc.setField(Field::Layers, std::uint64_t{5}));
    savePath = one;
    QVERIFY(actions.saveAs());
    QVERIFY(doc.setField(Field::Layers, std::uint64_t{9}));
    savePath = two;
    QVERIFY(actions.saveAs());
    QCOMPARE(settings->recentFiles(), (QStringList{two, one}));

    QMenu menu;
    actions.addRecentFilesTo(&menu);
    QCOMPARE(fileEntries(&menu).size(), 2);
    QVERIFY(fileEntries(&menu)[0]->text().contains(QStringLiteral("two.tokenwire.json")));
    QVERIFY(fileEntries(&menu)[0]->text().startsWith(QStringLiteral("&1 ")));
    QVERIFY(fileEntries(&menu)[1]->text().contains(QStringLiteral("one.tokenwire.json")));
    QAction* clear = clearEntry(&menu);
    QVERIFY(clear && clear->isEnabled());

    // Clicking "one" opens it (L = 5) and moves it first.
    clickInMenu(&menu, entryFor(&menu, one));
    QCOMPARE(doc.filePath(), one);
    QCOMPARE(doc.scenario().model.layers, std::uint64_t{5});
    QCOMPARE(settings->recentFiles(), (QStringList{one, two}));
    QCOMPARE(fileEntries(&menu)[0]->data().toString(), one);
    QCOMPARE(asked, 0); // unmodified: no question

    // With unsaved work the prompt comes first; Cancel keeps everything.
    QVERIFY(doc.setField(Field::Layers, std::uint64_t{6}));
    clickInMenu(&menu, entryFor(&menu, two));
    QCOMPARE(asked, 1);
    QCOMPARE(doc.filePath(), one);
    QCOMPARE(doc.scenario().model.layers, std::uint64_t{6});
    doc.undo();
    QVERIFY(!doc.isModified());

    // A file deleted since: reported by its path, dropped from the list and the menu, nothing asked.
    QVERIFY(QFile::remove(two));
    clickInMenu(&menu, entryFor(&menu, two));
    QCOMPARE(errors.size(), 1);
    QVERIFY2(errors[0].contains(QDir::toNativeSeparators(two)), qPrintable(errors[0]));
    QCOMPARE(settings->recentFiles(), QStringList{one});
    QVERIFY(!entryFor(&menu, two));
    QCOMPARE(fileEntries(&menu).size(), 1);
    QCOMPARE(doc.filePath(), one);
    QCOMPARE(asked, 1);

    // Clear empties the list; the menu says so.
    clear = clearEntry(&menu);
    QVERIFY(clear);
    clickInMenu(&menu, clear);
    QVERIFY(settings->recentFiles().isEmpty());
    QVERIFY(fileEntries(&menu).isEmpty());
    QCOMPARE(menu.actions().first()->text(), QStringLiteral("No recent files"));
    QVERIFY(!menu.actions().first()->isEnabled());
    // Opening through File → Open adds to the list too.
    actions.askOpenPath = [&] { return one; };
    QVERIFY(actions.open());
    QCOMPARE(settings->recentFiles(), QStringList{one});
    QVERIFY(doc.waitForDerivation());
}

QTEST_MAIN(TestSettings)
#include "tst_settings.moc"
