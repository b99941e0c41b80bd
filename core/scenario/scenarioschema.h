#pragma once
// The scenario file described: docs/scenario.md and a JSON Schema (draft 2020-12) for editors, both
// built from the reader's own key list (scenarioReaderKeys: every key, its JSON type, a name's values)
// joined with one table of what the reader cannot say (unit, default when derived, the section of
// docs/model.md that uses the key, its meaning). A key the reader accepts without a row, or a row the
// reader no longer reads, is listed by keysWithoutDoc / docsWithoutKey (a test wants both empty).

#include <string>
#include <vector>

namespace tw::scenario {

struct KeyDoc {
    std::string path;          // "parallel.memory_headroom"
    std::string type;          // the reader's: integer, number, boolean, string, name, object, array, rate, number-or-auto
    std::vector<std::string> values; // a name's values
    std::string unit;          // "B", "s", "B/s", "FLOP/s", "" (a count or a name)
    std::string defaultText;   // JSON of the value a missing key takes, or how it is derived
    bool defaultIsJson = false; // defaultText is JSON (the schema's "default")
    std::string section;       // "§3.4" of docs/model.md
    std::string meaning;
    std::string schemaExtra;   // JSON merged into the key's schema (ranges, items); may be empty
};

// Every key the reader accepts, in its order, documented.
[[nodiscard]] std::vector<KeyDoc> scenarioKeyDocs();
// Keys the reader accepts that the table does not document, and rows no key matches.
[[nodiscard]] std::vector<std::string> keysWithoutDoc();
[[nodiscard]] std::vector<std::string> docsWithoutKey();

// The JSON Schema of a scenario file (draft 2020-12), pretty-printed, ending in a newline.
[[nodiscard]] std::string scenarioJsonSchema();
// docs/scenario.md: one table per section of the file.
[[nodiscard]] std::string scenarioKeysMarkdown();

} // namespace tw::scenario
