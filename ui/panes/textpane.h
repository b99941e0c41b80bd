#pragma once
// Stage 1, "Text": the text (typed, a sample or a file) becomes bytes, BPE tokens and ids, with the
// dataset figures core derives from them. The pane wires its widgets; core computes.

#include "workers/tokenizationrunner.h"

#include <QWidget>

#include <memory>
#include <string>

class QButtonGroup;
class QComboBox;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QRadioButton;
class QSlider;
class QSpinBox;
class QStackedWidget;
class QTableView;

namespace tw::ui {

class FigureTableModel;
class FileLoader;
class MessageBar;
class PagedTextView;
class TokenCharts;
class TokenChipView;
struct LoadedFile;

class TextPane : public QWidget {
    Q_OBJECT
public:
    static constexpr std::size_t kMaxChips = 20000;            // chips drawn at most
    static constexpr std::size_t kEditorLimitBytes = 4'000'000; // above: paged read-only view

    explicit TextPane(QWidget* parent = nullptr);
    ~TextPane() override;

    // Reads path off the GUI thread; the result replaces what is shown only when it succeeds.
    void openFile(const QString& path);
    // Asks for a file, then openFile().
    void chooseAndOpenFile();
    // Stops reading a file or tokenizing; what was shown stays.
    void cancelWork();
    void setTokenizer(TokenizerKind kind);
    void selectSample(int index);
    void showEditor();
    // Selects a figure by id and explains it in the detail label (false when there is none).
    bool selectFigure(const QString& id);

    [[nodiscard]] bool isBusy() const;
    [[nodiscard]] bool showsPagedView() const;
    [[nodiscard]] QString messageText() const;
    [[nodiscard]] const TokenizeResult& lastResult() const { return m_last; }

    // Widgets, for the main window and the tests.
    [[nodiscard]] QPlainTextEdit* editor() const { return m_editor; }
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
    [[nodiscard]] QProgressBar* progressBar() const { return m_progress; }
    [[nodiscard]] QLabel* chipInfo() const { return m_chipInfo; }
    [[nodiscard]] QLabel* gpt2Banner() const { return m_gpt2Banner; }

signals:
    void tokenized();                 // a result is on screen
    void fileOpened(const QString& path);
    void workFinished();              // nothing left running (success, failure or cancel)

private:
    QWidget* buildControls();
    QWidget* buildSourceAndTokens();
    QWidget* buildStatistics();
    void wire();

    [[nodiscard]] std::shared_ptr<const std::string> currentText() const;
    [[nodiscard]] TokenizerKind kind() const;
    [[nodiscard]] std::size_t mergeLimit() const;
    [[nodiscard]] text::TrainingShape shape() const;
    void scheduleTokenize(int delayMs);
    void applyResult(const TokenizeResult& result);
    void showChips();
    void updateReplay();
    void updateVocabLabel();
    void onFileLoaded(const LoadedFile& file);
    void setBusy(const QString& what, bool busy);
    void setVocabFromSlider(int position);
    void tickReplay();

    // Source: the editor, or a read-only document (large or unusual bytes) in the paged view.
    std::shared_ptr<const std::string> m_editorText;
    std::shared_ptr<const std::string> m_document;
    QString m_documentName;
    TokenizeResult m_last;

    TokenizationRunner* m_runner = nullptr;
    FileLoader* m_loader = nullptr;
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
    QSpinBox* m_globalBatch = nullptr;
    TokenCharts* m_charts = nullptr;
    QString m_selectedFigure;
    bool m_replayAtEnd = true;
};

} // namespace tw::ui
