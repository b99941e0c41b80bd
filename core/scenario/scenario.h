#pragma once
// The one source of truth: every input of all five stages. The GUI edits it (with undo), saves and
// loads it; the CLI derives from it. Display units are not part of it (a viewer preference).

#include "collective/binding.h"
#include "model/gpucatalog.h"
#include "model/model.h"
#include "model/tensors.h"
#include "fabric/topology.h"
#include "parallel/plan.h"

#include "base/error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tw::scenario {

inline constexpr int kSchemaVersion = 5;

// Where stage 1's text comes from: a sample embedded in the program, a file, or text typed inline.
struct TextSource {
    enum class Kind { Sample, File, Inline };
    Kind kind = Kind::Sample;
    std::string sample = "inferno-canto1-it"; // "inferno-canto1-it" | "inferno-canto1-en"
    std::string path;                         // Kind::File
    std::string text;                         // Kind::Inline (UTF-8)
    std::uint64_t documents = 1;              // documents packed, separated by <|endoftext|>
    bool operator==(const TextSource&) const = default;
};

struct TokenizerChoice {
    enum class Kind { Gpt2, Trained, File };
    Kind kind = Kind::Gpt2;
    std::uint64_t trainedVocab = 8192; // Kind::Trained: V of the BPE trained on the text
    std::string path;                  // Kind::File: a tokenizer.json
    bool operator==(const TokenizerChoice&) const = default;
};

struct Hardware {
    std::string gpu = "a100-80gb";     // a catalog id, or "custom"
    model::GpuSpec custom;             // used when gpu == "custom"
    std::uint64_t nodes = 1;           // the cluster of stage 3: nodes × GPUs per node
    std::uint64_t gpusPerNode = 8;
    bool operator==(const Hardware&) const = default;

    [[nodiscard]] parallel::Cluster cluster() const { return {nodes, gpusPerNode}; }
    [[nodiscard]] std::uint64_t gpuCount() const { return nodes * gpusPerNode; }
};

// A whole training run of the scenario's step (scenario/run.h): the tokens to train and what energy and
// cost are counted from. Every coefficient is an input; none is written to a file while at its default.
// Unexpected interruptions of the job per 10^6 hours of one unit (docs/model.md §5.7). The defaults are
// Llama 3's: 419 unexpected interruptions in a 54-day snapshot of 16,384 H100s in 2,048 servers (Dubey et
// al. 2024, arXiv 2407.21783 §3.3.4, Table 5), grouped below and divided by its 21.23 M GPU-hours (2.654 M
// server-hours), to 3 digits.
struct FailureRates {
    double gpu = 9.23;       // per GPU: faulty GPU 148, GPU SRAM 19, GPU system processor 17, thermal 6, SDC 6 = 196
    double gpuMemory = 3.39; // per GPU: GPU HBM3 memory 72
    double network = 1.98;   // per GPU (one NIC each): network switch and cable 35, NIC 7 = 42
    double software = 2.97;  // per GPU (more ranks, more crashes): software bug 54, NCCL watchdog 7, dependency 2 = 63
    double host = 17.3;      // per server: host maintenance 32, SSD 3, power supply 3, chassis 2, IO board 2, CPU 2,
                             // system memory 2 = 46
    bool operator==(const FailureRates&) const = default;
};

// How the run survives its interruptions: checkpoints of the model's states written to (and read back
// from) a storage system, and the restart in between (docs/model.md §5.7).
struct CheckpointSettings {
    // GB/s of storage per GPU for writing and reading checkpoints: Llama 3's storage sustained 2 TB/s for its
    // 16,384 GPUs (arXiv 2407.21783 §3.3.1), 2,000 / 16,384 = 0.122 GB/s per GPU.
    double storageGBpsPerGpu = 0.122;
    double restartSeconds = 600;           // from an interruption to training again, before the checkpoint is read
    std::optional<double> intervalSeconds; // nullopt: the Young/Daly interval √(2 · write time · MTBF)
    bool operator==(const CheckpointSettings&) const = default;
};

// One phase of a batch-size ramp: the optimizer steps until `untilTokens` tokens of the run are trained
// take `globalBatchTokens` tokens each, in sequences of `sequenceLength` (0: the scenario's T), on `dp`
// data-parallel replicas (0: the plan's; fewer replicas are fewer nodes, pp and tp kept). Llama 3 405B:
// 4M tokens of T = 4,096 until 252M, 8M of T = 8,192 until 2.87T, then 16M (arXiv 2407.21783 §3.4.1).
// Each phase's step is simulated with its own batch and cluster (run.h simulateRamp).
struct BatchPhase {
    double untilTokens = 0;
    std::uint64_t globalBatchTokens = 0;
    std::uint64_t sequenceLength = 0;
    std::uint64_t dp = 0;
    bool operator==(const BatchPhase&) const = default;
};

struct RunSettings {
    double tokens = 0;                  // D, tokens to train; 0: no run (the CLI's --tokens can give it)
    std::optional<double> gpuPowerWatts; // W per GPU; nullopt: the GPU's datasheet TDP (run.h gpuTdpWatts)
    double hostPowerWattsPerGpu = 0;    // W per GPU of the rest of the server (CPUs, NICs, fans); 0: GPUs only
    double pue = 1.10;                  // the facility's power usage effectiveness
    double pricePerGpuHour = 0;         // currency per GPU-hour; 0: no cost
    FailureRates failures;
    CheckpointSettings checkpoint;
    // Phases of smaller batches before the scenario's own (its batch block) takes over, in order of
    // untilTokens; empty: the scenario's batch from the first step.
    std::vector<BatchPhase> batchRamp;
    bool operator==(const RunSettings&) const = default;
};

struct Scenario {
    std::string name = "paper-reference";
    std::string description;
    TextSource text;
    TokenizerChoice tokenizer;
    bool modelVocabFromTokenizer = true; // V of the model follows the tokenizer of stage 1
    model::ModelConfig model;
    model::BatchShape batch;
    Hardware hardware;
    parallel::ParallelPlan parallel;  // stage 3: degrees, sharding, pipeline schedule, GPU placement
    collective::AlgorithmChoice collectives; // stage 4: the algorithm of each collective, α and β
    network::TopologySpec topology;          // stage 5: the fabric the cluster's GPUs sit in
    RunSettings run;                         // the whole run: tokens, power, price
    bool operator==(const Scenario&) const = default;
};

// Ranges of the inputs outside the model (model::validate holds the model's).
inline constexpr std::uint64_t kMaxSequenceLength = std::uint64_t{1} << 20; // T
inline constexpr std::uint64_t kMaxMicroBatch = std::uint64_t{1} << 20;     // B
inline constexpr std::uint64_t kMaxGlobalBatchTokens = std::uint64_t{1} << 40; // G
inline constexpr std::uint64_t kMaxDocuments = std::uint64_t{1} << 32;
inline constexpr std::uint64_t kMaxGpuCount = std::uint64_t{1} << 20; // nodes × GPUs per node
inline constexpr std::uint64_t kMaxGpusPerNode = 1024;
inline constexpr double kMaxRunTokens = 1e16;   // 10 quadrillion: far past any published run (15.6T for Llama 3)

// JSON names of the kinds: "sample" | "file" | "inline" and "gpt2" | "trained" | "file".
[[nodiscard]] std::string_view toString(TextSource::Kind kind);
[[nodiscard]] std::optional<TextSource::Kind> textKindFromString(std::string_view s);
[[nodiscard]] std::string_view toString(TokenizerChoice::Kind kind);
[[nodiscard]] std::optional<TokenizerChoice::Kind> tokenizerKindFromString(std::string_view s);

// Every problem with a scenario, each naming its JSON path ("batch.micro_batch: …"); empty when
// every stage can be derived from it. Fields a kind does not use are not checked.
// The parallel plan is not checked here: an impossible plan is stage 3's finding (Derivation::planErrors),
// not a reason to refuse stages 1 and 2.
[[nodiscard]] std::vector<Error> validate(const Scenario& scenario);

// After the cluster changed size: keeps pp and tp and gives DP the rest when pp·tp divides the GPUs
// (ep kept when it still divides dp, else 1), and drops an explicit placement that no longer fits.
// Leaves the plan alone when pp·tp does not divide the GPUs (stage 3 then says why). A one-server
// topology becomes a leaf–spine fabric of such servers when the cluster has several nodes.
void fitPlanToCluster(Scenario& scenario);

// The scenario with catalogue model `modelId` (model::knownModelIds) instead of its own: the shape is
// the catalogue's; precisions and recomputation stay the scenario's; V follows the tokenizer only for
// GPT-2-shaped models (Llama and Mixtral bring their own vocabulary); a dense model drops the expert
// degree; a layer partition or per-layer times for another depth are dropped. An unknown id is an Error.
[[nodiscard]] Result<Scenario> withCatalogueModel(const Scenario& scenario, const std::string& modelId);

// The scenario on fabric `kind`, with the cluster reshaped as the kind needs (the stage 5 pane's and the toolbar's rule):
// one server holds every GPU (at most kMaxServerGpus); the paper's testbed has one GPU per server on
// 10 Gb/s Ethernet without GPUDirect; a leaf–spine keeps the servers (one server becomes two halves
// when it can). The plan follows the cluster (scenario::fitPlanToCluster). Errors name the cluster size.
inline constexpr std::uint64_t kMaxServerGpus = 16;
[[nodiscard]] Result<Scenario> withFabric(const Scenario& scenario, network::TopologyKind kind);

// The catalogue model whose shape the scenario's model has (family, L, d, heads, KV heads, d_ff,
// experts, top-k); empty when none.
[[nodiscard]] std::string catalogueModelOf(const model::ModelConfig& model);

// Sets one parallel degree. When pp or tp changes, DP takes the rest of the GPUs if that divides
// evenly; ep falls back to 1 when it no longer divides dp. A placement or a layer partition that no
// longer fits the mesh is dropped (the defaults apply). Setting dp changes nothing else.
void setParallelDegree(Scenario& scenario, parallel::Strategy strategy, std::uint64_t degree);

// The NVLink generation of a catalog GPU (gpucatalog.h ids): a100-40gb, a100-80gb → NVLink 3 (300 GB/s
// per direction); h100-sxm, h200 → NVLink 4 (450 GB/s). Nullopt for GPUs without NVSwitch-class NVLink in
// the protocol list (V100's NVLink 2, H100 PCIe's bridges, MI300X's Infinity Fabric, L40S, RTX 4090,
// custom GPUs): their "auto" falls back to network::kUnresolvedNvLink.
[[nodiscard]] std::optional<network::Protocol> nvlinkOfGpu(std::string_view gpuId);

// The NIC rate stage 5 uses and why: the scenario's own when given; for "auto", the protocol's rate
// when its name says it (InfiniBand HDR 200 Gb/s, NDR 400 Gb/s, Ethernet 10/25/100/400G), and RoCEv2
// (which runs on any Ethernet rate) by the GPU's server generation — the NICs DGX-class servers of that
// GPU ship with: A100 → 200 Gb/s (ConnectX-6), H100 SXM and H200 → 400 Gb/s (ConnectX-7), any other
// GPU 100 Gb/s, a typical port. The reason names what was picked (stage 5's net.nic_bandwidth).
struct NicRate {
    double bytesPerSecond = 0;
    std::string why; // "auto: RoCEv2 on H100 SXM servers: 400 Gb/s (DGX H100's ConnectX-7 NICs)"
};
[[nodiscard]] NicRate nicRate(const Scenario& scenario);

// The PCIe generation stage 5 uses and why: the scenario's own when given; for "auto", the generation of
// the GPU's host interface (its datasheet: V100 Gen3; A100, L40S, RTX 4090 Gen4; H100, H200, MI300X Gen5),
// which its servers' switches and NICs run at (DGX A100: Gen4 switches, DGX H100: Gen5). Other GPUs Gen4.
struct PcieChoice {
    network::Protocol generation = network::kUnresolvedPcie;
    std::string why; // "auto: H100 SXM servers are PCIe Gen5 x16 (the GPU's host interface)"
};
[[nodiscard]] PcieChoice pcieChoice(const Scenario& scenario);

// The scenario's topology with its "auto" fields resolved: PCIe and NVLink from the GPU (above), the NIC
// rate as nicRate says. Explicit values are kept. Stage 5 builds the fabric from this.
[[nodiscard]] network::TopologySpec resolvedTopology(const Scenario& scenario);

// Swaps the mesh places of GPUs a and b (the placement becomes explicit); false when either GPU does
// not exist or the plan's mesh does not match the cluster.
bool swapGpus(Scenario& scenario, std::uint64_t a, std::uint64_t b);

// Drops the plan's explicit parts that no longer match its degrees: a layer partition without pp·v
// entries, a placement without one entry per GPU or with coordinates outside the mesh.
void dropStalePlanParts(Scenario& scenario);

} // namespace tw::scenario
