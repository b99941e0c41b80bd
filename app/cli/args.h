#pragma once
// The command line of tokenwire-cli as plain values, and the hand-written parser that fills them.

#include "base/error.h"
#include "base/units.h"
#include "collective/schedule.h"
#include "text/dataset.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tw::cli {

enum class Command { None, Tokenize, TrainBpe, Derive, Tensors, Explain, Plan, Memory, Kernels, Fit, Collective, Simulate, Sweep, Presets, Validate, Busbw, Schema, Run };

enum class OutputFormat { Table, Json, Count };

struct TokenizeOptions {
    std::string tokenizer = "gpt2"; // "gpt2" (embedded) or a tokenizer.json path
    OutputFormat format = OutputFormat::Table;
    DisplayUnits units;
    text::TrainingShape shape;
    std::string input; // a path, or "-" for standard input
    bool operator==(const TokenizeOptions&) const = default;
};

struct TrainBpeOptions {
    std::size_t vocabSize = 0;
    std::string out; // empty: standard output
    std::string input;
    bool operator==(const TrainBpeOptions&) const = default;
};

// derive, tensors and explain: a scenario from a file or a preset.
struct ScenarioOptions {
    std::string scenarioFile; // a .tokenwire.json path, or "-" for standard input
    std::string preset;       // a preset name (see `tokenwire-cli presets`)
    bool json = false;
    DisplayUnits units;
    std::string figureId;     // explain: the figure to trace back
    // plan: overrides of the scenario's parallel plan (--dp --pp --tp --ep --zero K --sharding NAME)
    std::optional<std::uint64_t> dp, pp, tp, ep;
    std::optional<std::string> sharding; // a sharding name; --zero K is stored as "ddp" or "zeroK"
    bool operator==(const ScenarioOptions&) const = default;
};

// collective: one collective call scheduled step by step and counted, or --list.
struct CollectiveOptions {
    bool list = false;               // --list: every operation with its algorithms
    bool opGiven = false;            // --op given (--list --op filters the list)
    collective::ScheduleSpec spec;   // --op --algo --ranks --bytes --root --ranks-per-node --chunks
    double alphaSeconds = 10e-6;     // --alpha, per message
    double bandwidth = 10e9 / 8;     // --bandwidth, B/s (10 Gb/s)
    bool json = false;
    bool steps = false;              // --steps: the whole schedule, step by step
    DisplayUnits units;
    bool operator==(const CollectiveOptions&) const = default;
};

// sweep: the scenario on several cluster sizes (--gpus LIST), one simulated step each.
struct SweepCommandOptions {
    ScenarioOptions scenario;          // --scenario / --preset, --json, --units
    std::vector<std::uint64_t> gpus;   // --gpus, parsed by scenario::parseGpuList (ascending)
    bool strong = false;               // --strong: keep the global batch (strong scaling)
    bool csv = false;                  // --csv: one header line, one row per size
    bool operator==(const SweepCommandOptions&) const = default;
};

// validate: tokenwire's predictions against a measured dataset (issue #10).
struct ValidateOptions {
    std::string dataFile; // --data FILE; empty: the committed dataset compiled into the program
    bool json = false;
    bool operator==(const ValidateOptions&) const = default;
};

// busbw (issue #17): one NCCL collective over all GPUs of the scenario, per message size, as NCCL's
// model predicts it (nccl-tests' table). Algorithm and protocol names are nccl::toString's.
struct BusbwOptions {
    ScenarioOptions scenario;               // --scenario / --preset, --json
    collective::Op op = collective::Op::AllReduce; // --op (required)
    std::string algorithm = "auto";         // --algo
    std::string protocol = "auto";          // --protocol
    double minBytes = 8;                    // --min-bytes (nccl-tests' K/M/G = powers of 1024)
    double maxBytes = 8.0 * 1024 * 1024 * 1024; // --max-bytes
    std::uint64_t factor = 2;               // --factor
    std::string dtype = "bf16";             // --dtype
    std::uint64_t channels = 0;             // --channels, 0 = NCCL's search
    bool operator==(const BusbwOptions&) const = default;
};

// busbw's data types as nccl-tests names them (-d): int8 uint8 int32 uint32 int64 uint64 half float
// double bfloat16 f8e4m3 f8e5m2, with the aliases fp16 fp32 fp64 bf16 fp8; their size in bytes, 0 when
// unknown (cmd_busbw.cpp).
[[nodiscard]] int busbwDtypeSize(std::string_view name);

// fit: the plans that fit the scenario's model on its cluster, best first (scenario/fitsearch.h).
struct FitCommandOptions {
    ScenarioOptions scenario; // --scenario / --preset, --json
    std::uint64_t top = 10;     // --top N: plans listed
    std::uint64_t simulate = 6; // --simulate K: layouts simulated exactly (the rest keep the coarse estimate)
    bool operator==(const FitCommandOptions&) const = default;
};

// run (issue #40): the whole training run of the scenario's simulated step.
struct RunCommandOptions {
    ScenarioOptions scenario;     // --scenario / --preset, --json
    std::optional<double> tokens; // --tokens COUNT (15.6T); else the scenario's run.tokens
    std::optional<double> price;  // --price P per GPU-hour; else run.price_per_gpu_hour
    bool operator==(const RunCommandOptions&) const = default;
};

struct Invocation {
    Command command = Command::None;
    bool help = false;    // --help on the tool (command None) or on a command
    bool version = false; // --version
    TokenizeOptions tokenize;
    TrainBpeOptions trainBpe;
    ScenarioOptions scenario; // derive, tensors, explain, plan, memory
    CollectiveOptions collective;
    SweepCommandOptions sweep;
    ValidateOptions validate;
    BusbwOptions busbw;
    FitCommandOptions fit;
    RunCommandOptions run;
    bool schemaMarkdown = false; // schema --markdown: docs/scenario.md instead of the JSON Schema
    bool operator==(const Invocation&) const = default;
};

// Parses argv[1..]; a usage error names the option (Location::field) and what is wrong with it.
[[nodiscard]] Result<Invocation> parseArgs(const std::vector<std::string_view>& args);

// The --help text of the tool (Command::None) or of one command.
[[nodiscard]] std::string usage(Command command);

} // namespace tw::cli
