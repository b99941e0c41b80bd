// Every figure id, tensor name and scenario path the GUI names in its code exists (issue #33): ui/
// refers to figures by their ids ("sim.step_time_s", "memory.plan.fits", a followed token's
// "trace.row_bytes"), to tensors by their names ("attn.qkv.weight", "layer0.attn.softmax") and to
// scenario fields by their JSON paths ("model.layers"); a renamed figure, tensor or key would leave a
// link, a colour or an edit pointing at nothing, silently. This reads every string literal of ui/
// shaped like one ("word.word…", outside comments and #include lines) and finds it among what the
// presets derive, simulate and trace, or among the keys the scenario reader accepts.

#include "../support/testsupport.h"

#include "scenario/derive.h"
#include "scenario/presets.h"
#include "scenario/scenariojson.h"
#include "scenario/tokentrace.h"

#include <QTest>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

using namespace tw;

namespace {

// The literals of one source file shaped like an id, with the line they are on; line comments cut.
std::vector<std::pair<std::string, int>> idLiterals(const std::filesystem::path& file)
{
    static const std::regex literal(R"re("([a-z][a-z0-9]*(\.[a-z_0-9]+)+)")re");
    std::vector<std::pair<std::string, int>> out;
    std::ifstream in(file);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        if (line.rfind("#include", 0) == 0)
            continue;
        // Cut a "//" comment (one not inside a string: an even count of quotes before it).
        for (std::size_t at = line.find("//"); at != std::string::npos; at = line.find("//", at + 2))
            if (std::count(line.begin(), line.begin() + std::ptrdiff_t(at), '"') % 2 == 0) {
                line.resize(at);
                break;
            }
        for (auto it = std::sregex_iterator(line.begin(), line.end(), literal); it != std::sregex_iterator(); ++it)
            out.emplace_back((*it)[1].str(), n);
    }
    return out;
}

bool isFileName(const std::string& s)
{
    for (const char* ext : {".md", ".json", ".png", ".svg", ".csv", ".txt", ".html", ".ini", ".conf", ".h", ".cpp", ".pdf"})
        if (s.size() > std::strlen(ext) && s.compare(s.size() - std::strlen(ext), std::string::npos, ext) == 0)
            return true;
    return false;
}

} // namespace

class TestUiFigureIds : public QObject {
    Q_OBJECT
private slots:
    void everyIdTheGuiNamesExists()
    {
        // What can be named: every preset's derived figures, the simulated step's of the small presets
        // (their stage 5 covers sim.* and net.*), and the scenario reader's keys.
        std::set<std::string> known;
        for (const std::string& name : scenario::presetNames()) {
            const scenario::Scenario s = test::presetOrDie(name);
            auto d = scenario::derive(s);
            QVERIFY2(d.ok(), name.c_str());
            for (const Figure& f : d.value()->figures.all())
                known.insert(f.id);
            // Tensors by full name and by name within a block ("layer3.attn.q" → "attn.q").
            for (const model::TensorInfo& t : d.value()->stage2->tensors) {
                const std::string name = t.name.str();
                known.insert(name);
                if (name.rfind("layer", 0) == 0 && name.find('.') != std::string::npos)
                    known.insert(name.substr(name.find('.') + 1));
            }
        }
        for (const char* name : {"paper-pp", "paper-tp", "paper-moe", "paper-testbed", "dgx-a100-4node"}) {
            const scenario::Scenario s = test::presetOrDie(name);
            auto d = scenario::derive(s);
            QVERIFY(d.ok());
            auto step = scenario::simulateDerived(s, *d.value(), false);
            QVERIFY2(step.ok(), name);
            for (const Figure& f : step.value().simulation->figures.all())
                known.insert(f.id);
            for (const Figure& f : step.value().network->figures.all())
                known.insert(f.id);
            // A followed token's figures (stages 3 and 5 show them), traced on this fabric.
            auto trace = scenario::traceToken(*d.value(), s, 0, step.value().network->topology.get());
            QVERIFY2(trace.ok(), name);
            for (const Figure& f : trace.value().figures.all())
                known.insert(f.id);
        }
        for (const ReadKey& k : scenario::scenarioReaderKeys())
            known.insert(k.path);

        int checked = 0;
        std::vector<std::string> missing;
        const std::filesystem::path ui = std::filesystem::path(TOKENWIRE_SOURCE_DIR) / "ui";
        for (const auto& entry : std::filesystem::recursive_directory_iterator(ui)) {
            const std::string ext = entry.path().extension().string();
            if (ext != ".cpp" && ext != ".h")
                continue;
            for (const auto& [id, line] : idLiterals(entry.path())) {
                if (isFileName(id))
                    continue;
                ++checked;
                if (!known.count(id))
                    missing.push_back(std::filesystem::relative(entry.path(), ui.parent_path()).string() + ":"
                                      + std::to_string(line) + ": \"" + id + "\"");
            }
        }
        // The scan found the GUI's ids (it reads what it should), and each names something.
        QVERIFY2(checked >= 40, std::to_string(checked).c_str());
        std::string list;
        for (const std::string& m : missing) {
            list += "\n  " + m;
            qWarning("%s", m.c_str());
        }
        QVERIFY2(missing.empty(), ("ids the GUI names that no figure or scenario key has:" + list).c_str());
    }
};

QTEST_GUILESS_MAIN(TestUiFigureIds)
#include "tst_uifigureids.moc"
