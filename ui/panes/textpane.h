#pragma once
// Stage 1, "Text": the document's text (a sample, a file or typed) becomes bytes, BPE tokens and
// ids, with the dataset figures core derives from them. The pane edits the Document — sample,
// "Open text…", typing, tokenizer, V, T, B, G — and draws the Document's Derivation, so stage 1 and
// stage 2 always show the same text and tokens. Only the merge replay (a view setting, not a
// scenario input) encodes on its own, with the document's tokenizer, off the GUI thread.
//
// Undo story: the document's QUndoStack is the only history. The editor's own undo is off, and
// Ctrl+Z / Ctrl+Y in the editor are the document's Undo / Redo. Typing becomes a "Type text"
// command kTypingDelayMs after the last keystroke; pushes within the document's merge window merge
// into one step. Whatever is typed but not pushed yet is pushed first whenever the document asks
// (before any other edit, undo, redo, save or replacement: Document::pendingEditsRequested), so
// the order of the history is the order of the user's actions. A change that comes from the
// document (undo, preset, open scenario, the stage 2 form) updates the widgets with their signals
// blocked and m_updating set: it never pushes a command back.

#include "scenario/scenario.h"
#include "text/bpe.h"

#include "panes/stagepane.h"

#include <QFont>
#include <QWidget>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

class QButtonGroup;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QRadioButton;
class QSlider;
class QSpinBox;
class QStackedWidget;
class QTableView;
class QTimer;

namespace tw::scenario {
struct Derivation;
}

namespace tw::ui {

class Document;
class FigureTableModel;
class FileLoader;
class MessageBar;
class PagedTextView;
class TokenCharts;
class TokenChipView;
class TokenizationRunner;
struct LoadedFile;
struct TokenizeResult;

// What the chips show: the document's tokens, or a replay of its tokenizer's first k merges.
struct ShownTokens {
    std::shared_ptr<const scenario::Derivation> derivation;   // where text, spans and tokenizer live
    std::shared_ptr<const std::string> text;
    std::shared_ptr<const std::vector<text::TokenSpan>> spans;
    std::shared_ptr<const text::BpeModel> tokenizer;
    scenario::TokenizerChoice tokenizerChoice;                 // the scenario's, when derived
    std::size_t mergeLimit = SIZE_MAX;                         // SIZE_MAX: every merge (the document's tokens)
};

class TextPane : public QWidget, public StagePane {
    Q_OBJECT
public:
    static constexpr std::size_t kMaxChips = 20000;            // chips drawn at most
    static constexpr std::size_t kEditorLimitBytes = 4'000'000; // above: paged read-only view
    static constexpr int kTypingDelayMs = 150;                  // typing pushed after this pause

    explicit TextPane(Document* document, QWidget* parent = nullptr);
    ~TextPane() override;

    // Reads path off the GUI thread; only when that succeeds does the document's text become the
    // file ("Open text", undoable).
    void openFile(const QString& path);
    // Asks for a file, then openFile().
    void chooseAndOpenFile();
    // Stops reading a file, deriving or replaying; what was shown stays.
    void cancelWork();
    // Document edits, as the widgets make them.
    void setTokenizer(scenario::TokenizerChoice::Kind kind);
    void selectSample(int index);
    // Back from the paged view of a file to the text the editor showed before it.
    void showEditor();
    // Pushes what was typed and not pushed yet (the document calls it before other edits).
    void flushTyping();
    // Selects a figure by id and explains it in the detail label (false when there is none).
    bool selectFigure(const QString& id);
    // StagePane: the chips (the token ids kept beside them), zoomed by their font, 0.5× to 4×.
    bool showFigure(const QString& id) override { return selectFigure(id); }
    [[nodiscard]] QWidget* drawing() const override;
    [[nodiscard]] QWidget* drawingCompanion() const override;
    void zoomDrawing(double factor) override;
    void fitDrawing() override { restoreDrawing(); }
    void restoreDrawing() override;

    [[nodiscard]] Document* document() const { return m_doc; }
    [[nodiscard]] bool isBusy() const;
    [[nodiscard]] bool showsPagedView() const;
    [[nodiscard]] QString messageText() const;
    [[nodiscard]] const ShownTokens& shownTokens() const { return m_shown; }

    // Widgets, for the main window and the tests.
    [[nodiscard]] QPlainTextEdit* editor() const { return m_editor; }
    [[nodiscard]] QComboBox* sampleChooser() const { return m_sample; }
    [[nodiscard]] QRadioButton* gpt2Radio() const { return m_gpt2Radio; }
    [[nodiscard]] QRadioButton* trainedRadio() const { return m_trainedRadio; }
    [[nodiscard]] TokenChipView* chipView() const { return m_chips; }
    [[nodiscard]] TokenChipView* idStrip() const { return m_ids; }
    [[nodiscard]] PagedTextView* pagedView() const { return m_paged; }
    [[nodiscard]] QTableView* figureTable() const { return m_table; }
    [[nodiscard]] FigureTableModel* figureModel() const { return m_figures; }
    [[nodiscard]] QLabel* figureDetail() const { return m_detail; }
    [[nodiscard]] TokenCharts* charts() const { return m_charts; }
    [[nodiscard]] QSlider* replaySlider() const { return m_replay; }
    [[nodiscard]] QPushButton* playButton() const { return m_play; }
    [[nodiscard]] QSpinBox* vocabSpin() const { return m_vocabSpin; }
    [[nodiscard]] QSpinBox* sequenceLengthSpin() const { return m_seqLen; }
    [[nodiscard]] QSpinBox* microBatchSpin() const { return m_microBatch; }
    [[nodiscard]] QDoubleSpinBox* globalBatchSpin() const { return m_globalBatch; }
    [[nodiscard]] QProgressBar* progressBar() const { return m_progress; }
    [[nodiscard]] QLabel* chipInfo() const { return m_chipInfo; }
    [[nodiscard]] QLabel* gpt2Banner() const { return m_gpt2Banner; }
    [[nodiscard]] QWidget* followChip() const { return m_followChip; }
    // Whether the followed token was clicked (pinned): hovering other chips then leaves it alone.
    [[nodiscard]] bool followPinned() const { return m_followPinned; }

signals:
    void tokenized();                 // a result is on screen
    void fileOpened(const QString& path);
    void workFinished();              // nothing left running (success, failure or cancel)

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QWidget* buildControls();
    QWidget* buildSourceAndTokens();
    QWidget* buildStatistics();
    void wire();

    // Document → widgets (no commands pushed).
    void syncFromScenario();
    void syncText(const scenario::TextSource& source);
    void setEditorText(const QString& text);
    void showFile(const LoadedFile& file, bool justOpened);
    void onDerived(const std::shared_ptr<const scenario::Derivation>& derivation);
    void onProblems();
    void onReplayed(const TokenizeResult& result);

    void scheduleReplay();
    void showChips();
    void updateReplay();
    void updateVocabLabel();
    void onFileLoaded(const LoadedFile& file);
    void setBusy(const QString& what, bool busy);
    void setVocabFromSlider(int position);
    void tickReplay();
    void finishIfIdle();
    void onChipHovered(int chip);
    void onChipClicked(int chip);
    void showFollowed();

    Document* m_doc;
    ShownTokens m_base;  // the document's derivation, every merge
    ShownTokens m_shown; // on screen: m_base, or a replay of its tokenizer
    std::optional<scenario::TextSource> m_shownSource; // what the editor or the paged view shows
    scenario::TextSource m_editorSource;                // what the editor showed last ("Back to the editor")
    std::shared_ptr<const LoadedFile> m_file;           // the last file read (shown, or to show again on undo)
    bool m_openingFile = false;                         // the loader's job is "Open text", not a redisplay
    bool m_updating = false;                            // widgets follow the document: push nothing
    bool m_typingPending = false;
    bool m_problemShown = false;

    TokenizationRunner* m_runner = nullptr;
    FileLoader* m_loader = nullptr;
    QTimer* m_typing = nullptr;
    QTimer* m_playTimer = nullptr;
    QTimer* m_revealProgress = nullptr;

    QComboBox* m_sample = nullptr;
    QButtonGroup* m_tokenizerGroup = nullptr;
    QRadioButton* m_gpt2Radio = nullptr;
    QRadioButton* m_trainedRadio = nullptr;
    QSlider* m_vocabSlider = nullptr;
    QSpinBox* m_vocabSpin = nullptr;
    QLabel* m_vocabActual = nullptr;
    QSlider* m_replay = nullptr;
    QPushButton* m_play = nullptr;
    QLabel* m_replayLabel = nullptr;
    QLabel* m_gpt2Banner = nullptr;
    MessageBar* m_message = nullptr;
    QWidget* m_progressRow = nullptr;
    QLabel* m_progressLabel = nullptr;
    QProgressBar* m_progress = nullptr;

    QStackedWidget* m_source = nullptr;
    QPlainTextEdit* m_editor = nullptr;
    PagedTextView* m_paged = nullptr;
    TokenChipView* m_chips = nullptr;
    TokenChipView* m_ids = nullptr;
    QLabel* m_chipInfo = nullptr;

    FigureTableModel* m_figures = nullptr;
    QTableView* m_table = nullptr;
    QLabel* m_detail = nullptr;
    QSpinBox* m_seqLen = nullptr;
    QSpinBox* m_microBatch = nullptr;
    QDoubleSpinBox* m_globalBatch = nullptr;
    TokenCharts* m_charts = nullptr;
    QString m_selectedFigure;
    bool m_replayAtEnd = true;
    std::optional<QFont> m_chipFontBeforeZoom; // the chips' font before the first zoom
    bool m_chipFontWasSet = false;             // whether it was the chips' own
    QWidget* m_followChip = nullptr;
    bool m_followPinned = false;   // clicked, or chosen elsewhere: hovering does not move it
    bool m_followingHover = false; // the document's change comes from our own hover
};

} // namespace tw::ui
