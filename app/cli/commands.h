#pragma once
// The commands of tokenwire-cli: tokenize and train-bpe, over the Qt-free core.

#include <iosfwd>

namespace tw::cli {

struct Invocation;
struct TokenizeOptions;
struct TrainBpeOptions;

// Exit statuses: done, unreadable or corrupt input (or output), wrong usage.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInput = 1;
inline constexpr int kExitUsage = 2;

// Tokenizes one text and prints its dataset figures (table or JSON) or its token count.
[[nodiscard]] int runTokenize(const TokenizeOptions& options, std::ostream& out, std::ostream& err);
// Trains a BPE vocabulary and writes tokenizer.json to a file or to out; a summary goes to err.
[[nodiscard]] int runTrainBpe(const TrainBpeOptions& options, std::ostream& out, std::ostream& err);
// The whole tool: parses argv, runs the command, writes "tokenwire-cli: …" errors to err.
[[nodiscard]] int runTool(int argc, char** argv, std::ostream& out, std::ostream& err);

} // namespace tw::cli
