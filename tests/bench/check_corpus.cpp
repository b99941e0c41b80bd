// Checks the figures of the whole Divina Commedia, which the unit tests do not read (they use the
// excerpts in resources/text and text they generate). Run by hand or by scripts/bench.sh:
//   check_corpus [POEM]   (default: ../shared/data/divina_commedia.txt next to the repository)
// Prints one PASS or FAIL line per check; exits 0 when all pass, 1 when one fails, 2 on bad usage.
// Expected values: tests/data/README.md and docs/model.md (Gutenberg #1012 as shipped).

#include "text/bpetrainer.h"
#include "text/dataset.h"
#include "text/gpt2.h"
#include "text/utf8.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stop_token>
#include <string>
#include <vector>

using namespace tw::text;

namespace {

int failures = 0;

void check(bool ok, const std::string& name, const std::string& detail = {})
{
    if (!ok)
        ++failures;
    std::printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", name.c_str(), detail.empty() ? "" : ": ", detail.c_str());
}

template <typename T>
std::string str(const T& value)
{
    std::ostringstream out;
    out.precision(10);
    out << value;
    return out.str();
}

template <typename T, typename U>
void equal(const std::string& name, const T& got, const U& want)
{
    const bool ok = got == static_cast<T>(want);
    check(ok, name, ok ? str(got) : "got " + str(got) + ", expected " + str(want));
}

void near(const std::string& name, double got, double want, double tolerance)
{
    const bool ok = std::abs(got - want) < tolerance;
    check(ok, name,
          (ok ? "" : "got ") + str(got) + (ok ? " ≈ " : ", expected ") + str(want) + " ± " + str(tolerance));
}

void utf8Counts(const std::string& poem, const std::string& path)
{
    // 556,827 bytes; 532,106 code points; 19,252 lines; 97,676 words by `LC_ALL=C.UTF-8 wc -w` (the
    // poem has no no-break spaces, where our white-space rule and glibc's differ).
    const TextCounts c = countText(poem);
    equal("utf8 bytes", c.bytes, 556827);
    equal("utf8 code points", c.codePoints, 532106);
    equal("utf8 lines", c.lines, 19252);
    equal("utf8 words", c.words, 97676);
    equal("utf8 invalid bytes", c.invalidBytes, 0);
    equal("utf8 NUL bytes", c.nulBytes, 0);
    const auto error = firstInvalidUtf8(poem, path);
    check(!error, "utf8 valid", error ? error->toString() : std::string{});
}

void trainerFullVocabulary(const std::string& poem)
{
    // The poem has far more than 8,192 − 257 distinct pairs over training: exactly V − 257 merges,
    // each made of earlier ids, with the bytes of its parts and a count that never rises.
    for (std::size_t V : {std::size_t{257 + 1}, std::size_t{1000}, std::size_t{8192}}) {
        const std::string at = "trainer V=" + std::to_string(V);
        auto trained = trainBpe(poem, V);
        if (!trained) {
            check(false, at, trained.error().toString());
            continue;
        }
        equal(at + " merges", trained->merges.size(), V - 257);
        check(!trained->exhausted, at + " not exhausted");
        equal(at + " vocab size", trained->model.vocabSize(), V);
        const auto eot = trained->model.endOfText();
        check(eot && *eot == static_cast<TokenId>(V - 1), at + " <|endoftext|> is id V-1",
              eot ? str(*eot) : std::string("none"));
        std::string bad;
        for (std::size_t k = 0; k < trained->merges.size() && bad.empty(); ++k) {
            const Merge& mg = trained->merges[k];
            const std::string where = "merge " + std::to_string(k) + ": ";
            if (mg.id != static_cast<TokenId>(256 + k))
                bad = where + "id " + str(mg.id);
            else if (!(mg.left < mg.id && mg.right < mg.id))
                bad = where + "parts " + str(mg.left) + ", " + str(mg.right) + " not below " + str(mg.id);
            else if (mg.frequency < 1)
                bad = where + "frequency 0";
            else if (std::string(trained->model.bytesOf(mg.id))
                     != std::string(trained->model.bytesOf(mg.left)) + std::string(trained->model.bytesOf(mg.right)))
                bad = where + "bytes are not its parts' bytes";
            else if (k > 0 && mg.frequency > trained->merges[k - 1].frequency)
                bad = where + "frequency " + str(mg.frequency) + " rose from " + str(trained->merges[k - 1].frequency);
        }
        check(bad.empty(), at + " merges well formed", bad);
    }
}

void trainerDeterministicAndCancel(const std::string& poem)
{
    auto first = trainBpe(poem, 2000);
    auto second = trainBpe(poem, 2000);
    bool same = first && second && first->merges.size() == second->merges.size()
                && first->model.toHuggingFaceJson() == second->model.toHuggingFaceJson();
    for (std::size_t k = 0; same && k < first->merges.size(); ++k) {
        const Merge &a = first->merges[k], &b = second->merges[k];
        same = a.left == b.left && a.right == b.right && a.id == b.id && a.frequency == b.frequency;
    }
    check(same, "trainer V=2000 deterministic");

    std::vector<double> seen;
    tw::Progress progress;
    progress.report = [&](double f) { seen.push_back(f); };
    auto trained = trainBpe(poem, 1500, progress);
    check(trained && seen.size() > 10 && std::is_sorted(seen.begin(), seen.end()) && seen.back() == 1.0,
          "trainer progress rises to 1", std::to_string(seen.size()) + " reports");

    std::stop_source halfway;
    bool asked = false;
    tw::Progress midway{[&](double f) {
                            if (f > 0.6 && !asked) {
                                asked = true;
                                halfway.request_stop();
                            }
                        },
                        halfway.get_token()};
    auto cancelled = trainBpe(poem, 4000, midway);
    check(asked && !cancelled && cancelled.error().message == "cancelled", "trainer cancel halfway");
}

void datasetWithGpt2(const std::string& poem)
{
    if (!gpt2Embedded()) {
        check(false, "dataset with GPT-2", "GPT-2 is not embedded in this build: " + gpt2HowToGet());
        return;
    }
    auto model = gpt2();
    if (!model) {
        check(false, "dataset with GPT-2", model.error().toString());
        return;
    }
    Encoder encoder(model.value());
    auto spans = encoder.encodeWithSpans(poem);
    if (!spans) {
        check(false, "dataset with GPT-2", spans.error().toString());
        return;
    }
    const DatasetStats s = computeDataset(poem, spans.value(), model.value(), TrainingShape{});
    const auto value = [&](const char* id) { return s.figures.valueOf(id); };
    // Issue 2 / docs/model.md: 556,827 bytes, 235,828 GPT-2 tokens; tests/data/README.md: 532,106
    // code points, 19,252 lines; `wc -w`: 97,676 words. V = 50,257 fits uint16.
    //   235,828 / 1,024 = 230.30 sequences; 235,828 / 524,288 = 0.4498 ≈ 0.45 steps.
    equal("dataset text.bytes", value("text.bytes"), 556827.0);
    equal("dataset text.code_points", value("text.code_points"), 532106.0);
    equal("dataset text.lines", value("text.lines"), 19252.0);
    equal("dataset text.words", value("text.words"), 97676.0);
    equal("dataset tokens.count (GPT-2)", value("tokens.count"), 235828.0);
    equal("dataset tokenizer.vocab_size", value("tokenizer.vocab_size"), 50257.0);
    equal("dataset id bytes per token", value("dataset.id_bytes_per_token"), 2.0);
    near("dataset sequences", value("dataset.sequences"), 230.30, 0.005);
    near("dataset steps per epoch", value("dataset.steps_per_epoch"), 0.45, 0.0005);
    std::uint64_t inHistogram = 0, inRanks = 0;
    for (auto c : s.lengthHistogram)
        inHistogram += c;
    for (const auto& r : s.rankFrequency)
        inRanks += r.count;
    equal("dataset length histogram total", inHistogram, 235828);
    equal("dataset rank table total", inRanks, 235828);
    equal("dataset rank table size = unique tokens", static_cast<std::uint64_t>(s.rankFrequency.size()),
          s.uniqueTokens);
}

} // namespace

int main(int argc, char** argv)
{
    if (argc > 2 || (argc == 2 && (std::string(argv[1]) == "-h" || std::string(argv[1]) == "--help"))) {
        std::fprintf(stderr, "usage: check_corpus [POEM]   (default %s)\n",
                     TOKENWIRE_SOURCE_DIR "/../shared/data/divina_commedia.txt");
        return 2;
    }
    const std::string path = argc == 2 ? argv[1] : TOKENWIRE_SOURCE_DIR "/../shared/data/divina_commedia.txt";
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        check(false, "read " + path, "cannot open the file (pass the poem's path as the argument)");
        return 1;
    }
    std::ostringstream buffer;
    buffer << in.rdbuf();
    const std::string poem = buffer.str();
    std::printf("check_corpus: %s (%zu bytes)\n", path.c_str(), poem.size());

    utf8Counts(poem, path);
    trainerFullVocabulary(poem);
    trainerDeterministicAndCancel(poem);
    datasetWithGpt2(poem);

    std::printf("%s: %d check%s failed\n", failures ? "FAIL" : "PASS", failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
