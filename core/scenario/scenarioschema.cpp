#include "scenarioschema.h"

#include "scenario.h"
#include "scenariojson.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

namespace tw::scenario {

namespace {

using Json = nlohmann::ordered_json;

// A whole number as an integer, so the defaults read 12, not 12.0.
Json num(double v)
{
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9007199254740992.0 && v >= 0)
        return static_cast<std::uint64_t>(v);
    return v;
}

Json name(std::string_view v) { return std::string(v); }

// What the reader cannot say about a key. `def` reads the default from a default-constructed
// Scenario (the value a missing key keeps); `derived` says how it is worked out when there is none.
struct Row {
    const char* path;
    const char* unit;
    const char* section;
    const char* meaning;
    Json (*def)(const Scenario&);
    const char* derived;
    const char* extra;
};

#define DEF(expr) [](const Scenario& s) -> Json { return expr; }

const Row kRows[] = {
    {"$schema", "", "", "the JSON Schema the file follows, for editors (the program ignores it)", nullptr, "absent", ""},
    {"schema_version", "", "", "the file's version; older versions are migrated when read", nullptr, "required",
     R"({"minimum": 0})"},
    {"name", "", "", "the scenario's name (window title, reports)", DEF(s.name), nullptr, ""},
    {"description", "", "", "free text shown with the scenario", DEF(s.description), nullptr, ""},
    {"model_vocab_from_tokenizer", "", "§1", "the model's V follows the tokenizer of stage 1",
     DEF(s.modelVocabFromTokenizer), nullptr, ""},
    // text
    {"text", "", "§1", "stage 1's text", nullptr, "the sample", ""},
    {"text.source", "", "§1", "where the text comes from", DEF(name(toString(s.text.kind))), nullptr, ""},
    {"text.sample", "", "§1", "an embedded sample: inferno-canto1-it or inferno-canto1-en", DEF(s.text.sample), nullptr,
     R"({"enum": ["inferno-canto1-it", "inferno-canto1-en"]})"},
    {"text.path", "", "§1", "a UTF-8 text file (relative to the scenario file's folder)", DEF(s.text.path), nullptr, ""},
    {"text.text", "", "§1", "the text itself (source inline)", DEF(s.text.text), nullptr, ""},
    {"text.documents", "", "§1", "copies packed one after another, separated by <|endoftext|>",
     DEF(s.text.documents), nullptr, R"({"minimum": 1})"},
    // tokenizer
    {"tokenizer", "", "§1", "stage 1's tokenizer", nullptr, "GPT-2's", ""},
    {"tokenizer.kind", "", "§1", "GPT-2's vocabulary, a BPE trained on the text, or a tokenizer.json",
     DEF(name(toString(s.tokenizer.kind))), nullptr, ""},
    {"tokenizer.vocab_size", "", "§1", "V of the trained BPE (kind trained)", DEF(s.tokenizer.trainedVocab), nullptr,
     R"({"minimum": 256})"},
    {"tokenizer.path", "", "§1", "a Hugging Face tokenizer.json (kind file)", DEF(s.tokenizer.path), nullptr, ""},
    // model
    {"model", "", "§2", "the Transformer's shape and precisions", nullptr, "GPT-2 small", ""},
    {"model.name", "", "§2", "the model's name", DEF(s.model.name), nullptr, ""},
    {"model.family", "", "§2.1", "gpt2: learned positions, LayerNorm, GELU MLP; llama: RoPE, RMSNorm, SwiGLU",
     DEF(name(model::toString(s.model.family))), nullptr, ""},
    {"model.layers", "", "§2.1", "L, Transformer blocks", DEF(s.model.layers), nullptr, R"({"minimum": 1})"},
    {"model.hidden_size", "", "§2.1", "d, the model width", DEF(s.model.hiddenSize), nullptr, R"({"minimum": 1})"},
    {"model.heads", "", "§2.1", "a, attention heads (d must divide by a)", DEF(s.model.heads), nullptr,
     R"({"minimum": 1})"},
    {"model.kv_heads", "", "§2.1", "key/value heads (grouped-query attention; = heads without it)",
     DEF(s.model.kvHeads), nullptr, R"({"minimum": 1})"},
    {"model.ffn_size", "", "§2.1", "d_ff, the MLP's inner width (per expert in MoE layers)", DEF(s.model.ffnSize),
     nullptr, R"({"minimum": 1})"},
    {"model.vocab_size", "", "§2.1", "V (the tokenizer's when model_vocab_from_tokenizer)", DEF(s.model.vocabSize),
     nullptr, R"({"minimum": 1})"},
    {"model.max_positions", "", "§2.1", "rows of the learned position table (gpt2; unused with RoPE)",
     DEF(s.model.maxPositions), nullptr, ""},
    {"model.tied_embeddings", "", "§2.1", "the output head reuses the embedding table", DEF(s.model.tiedEmbeddings),
     nullptr, ""},
    {"model.vocab_pad_multiple", "", "§2.1", "V padded up to a multiple (64: 50,257 → 50,304); 0 = none",
     DEF(s.model.vocabPadMultiple), nullptr, ""},
    {"model.moe", "", "§2.1", "Mixture of Experts: absent or experts ≤ 1 is a dense model", nullptr, "dense", ""},
    {"model.moe.experts", "", "§2.1", "E, experts per MoE layer", DEF(s.model.moe.experts), nullptr, ""},
    {"model.moe.top_k", "", "§2.1", "experts each token is routed to", DEF(s.model.moe.topK), nullptr, ""},
    {"model.moe.capacity_factor", "", "§3.2", "an expert's buffer over the mean load (All-to-All payload)",
     DEF(num(s.model.moe.capacityFactor)), nullptr, R"({"exclusiveMinimum": 0})"},
    {"model.moe.layer_interval", "", "§2.1", "every n-th block is an MoE block (1 = all)",
     DEF(s.model.moe.layerInterval), nullptr, R"({"minimum": 1})"},
    {"model.weights", "", "§2.3", "precision of the weights", DEF(name(model::toString(s.model.weights))), nullptr, ""},
    {"model.activations", "", "§2.2", "precision of the activations (and of the GEMMs: the peak MFU is measured against)",
     DEF(name(model::toString(s.model.activations))), nullptr, ""},
    {"model.gradients", "", "§2.3", "precision of the gradients (and of their collectives)",
     DEF(name(model::toString(s.model.gradients))), nullptr, ""},
    {"model.optimizer_state", "", "§2.3", "precision of Adam's moments (and master weights)",
     DEF(name(model::toString(s.model.optimizerState))), nullptr, ""},
    {"model.fp8_recipe", "", "§2.2",
     "FP8 training beside bf16/fp16 activations (Transformer Engine): the linear layers' GEMMs in FP8 with their "
     "casts (delayed or current scaling); attention, the head and what is stored or sent stay 16-bit",
     DEF(name(model::toString(s.model.fp8Recipe))), nullptr, ""},
    {"model.recompute", "", "§2.2", "activation recomputation: none, the attention core (selective) or whole blocks",
     DEF(name(model::toString(s.model.recompute))), nullptr, ""},
    {"model.attention", "", "§3.4", "attention kernel: fused (flash) keeps no scores; auto follows the GPU",
     DEF(name(model::toString(s.model.attention))), nullptr, ""},
    // batch
    {"batch", "", "§2.2", "the batch", nullptr, "", ""},
    {"batch.sequence_length", "", "§2.2", "T, tokens per sequence", DEF(s.batch.sequenceLength), nullptr,
     R"({"minimum": 1})"},
    {"batch.micro_batch", "", "§3.3", "B, sequences per micro-batch on one replica", DEF(s.batch.microBatch), nullptr,
     R"({"minimum": 1})"},
    {"batch.global_batch_tokens", "", "§3.3", "G, tokens per optimizer step over all replicas",
     DEF(s.batch.globalBatchTokens), nullptr, R"({"minimum": 1})"},
    // hardware
    {"hardware", "", "§3.1", "the cluster", nullptr, "one server of 8 A100s", ""},
    {"hardware.gpu", "", "§3.1", "a catalog id (tokenwire-cli presets lists them) or custom", DEF(s.hardware.gpu),
     nullptr, ""},
    {"hardware.nodes", "", "§3.1", "servers", DEF(s.hardware.nodes), nullptr, R"({"minimum": 1})"},
    {"hardware.gpus_per_node", "", "§3.1", "GPUs per server", DEF(s.hardware.gpusPerNode), nullptr,
     R"({"minimum": 1, "maximum": 1024})"},
    {"hardware.custom", "", "§3.3", "the GPU when gpu is custom (docs/compute.md: the kernel model's constants)",
     nullptr, "an A100-like kernel model", ""},
    {"hardware.custom.id", "", "§3.3", "its id", DEF(s.hardware.custom.id), nullptr, ""},
    {"hardware.custom.name", "", "§3.3", "its name", DEF(s.hardware.custom.name), nullptr, ""},
    {"hardware.custom.memory_bytes", "B", "§3.4", "memory per GPU", DEF(num(s.hardware.custom.memoryBytes)), nullptr,
     R"({"exclusiveMinimum": 0})"},
    {"hardware.custom.peak_fp32", "FLOP/s", "§3.3", "plain fp32 peak (not TF32)", DEF(num(s.hardware.custom.peakFp32)),
     nullptr, R"({"minimum": 0})"},
    {"hardware.custom.peak_bf16", "FLOP/s", "§3.3", "dense bf16 tensor-core peak", DEF(num(s.hardware.custom.peakBf16)),
     nullptr, R"({"exclusiveMinimum": 0})"},
    {"hardware.custom.peak_fp16", "FLOP/s", "§3.3", "dense fp16 peak", DEF(num(s.hardware.custom.peakFp16)), nullptr,
     R"({"minimum": 0})"},
    {"hardware.custom.peak_fp8", "FLOP/s", "§3.3", "dense fp8 peak; 0 = no fp8", DEF(num(s.hardware.custom.peakFp8)),
     nullptr, R"({"minimum": 0})"},
    {"hardware.custom.memory_bandwidth", "B/s", "§3.3", "HBM peak", DEF(num(s.hardware.custom.memoryBandwidth)),
     nullptr, R"({"exclusiveMinimum": 0})"},
    {"hardware.custom.l2_bytes", "B", "§3.3", "last-level cache", DEF(num(s.hardware.custom.l2Bytes)), nullptr,
     R"({"minimum": 0})"},
    {"hardware.custom.l2_bandwidth", "B/s", "§3.3", "L2 to the SMs", DEF(num(s.hardware.custom.l2Bandwidth)), nullptr,
     R"({"exclusiveMinimum": 0})"},
    {"hardware.custom.sm_count", "", "§3.3", "SMs (one GEMM tile per SM per wave)", DEF(s.hardware.custom.smCount),
     nullptr, R"({"minimum": 1})"},
    {"hardware.custom.gemm_fraction", "", "§3.3", "best large GEMM over the tensor-core peak",
     DEF(num(s.hardware.custom.gemmFraction)), nullptr, R"({"exclusiveMinimum": 0, "maximum": 1})"},
    {"hardware.custom.memory_fraction", "", "§3.3", "streaming kernels over the memory bandwidth",
     DEF(num(s.hardware.custom.memoryFraction)), nullptr, R"({"exclusiveMinimum": 0, "maximum": 1})"},
    {"hardware.custom.gemm_memory_fraction", "", "§3.3", "a GEMM's operand streaming over the memory bandwidth",
     DEF(num(s.hardware.custom.gemmMemoryFraction)), nullptr, R"({"exclusiveMinimum": 0, "maximum": 1})"},
    {"hardware.custom.flash_forward_fraction", "", "§3.3", "flash attention forward over the peak",
     DEF(num(s.hardware.custom.flashForwardFraction)), nullptr, R"({"exclusiveMinimum": 0, "maximum": 1})"},
    {"hardware.custom.flash_backward_fraction", "", "§3.3", "flash attention backward over the peak",
     DEF(num(s.hardware.custom.flashBackwardFraction)), nullptr, R"({"exclusiveMinimum": 0, "maximum": 1})"},
    {"hardware.custom.kernel_seconds", "s", "§3.3", "fixed cost per kernel (launch, prologue, tail)",
     DEF(num(s.hardware.custom.kernelSeconds)), nullptr, R"({"minimum": 0})"},
    // parallel
    {"parallel", "", "§3.1", "the parallel plan", nullptr, "pure data parallelism over every GPU", ""},
    {"parallel.dp", "", "§3.1", "data-parallel degree (dp · pp · tp = GPUs)", nullptr,
     "nodes × gpus_per_node without a parallel block, else 1", R"({"minimum": 1})"},
    {"parallel.pp", "", "§3.1", "pipeline stages", DEF(s.parallel.pp), nullptr, R"({"minimum": 1})"},
    {"parallel.tp", "", "§3.1", "tensor-parallel degree", DEF(s.parallel.tp), nullptr, R"({"minimum": 1})"},
    {"parallel.ep", "", "§3.1", "expert-parallel degree (inside the data-parallel group)", DEF(s.parallel.ep), nullptr,
     R"({"minimum": 1})"},
    {"parallel.sharding", "", "§3.2", "how the model states are split over the data-parallel group",
     DEF(name(parallel::toString(s.parallel.sharding))), nullptr, ""},
    {"parallel.shard_group_size", "", "§3.2", "GPUs of one shard group (fsdp-hybrid)", DEF(s.parallel.shardGroupSize),
     nullptr, ""},
    {"parallel.sequence_parallel", "", "§3.2", "Megatron sequence parallelism beside tp",
     DEF(s.parallel.sequenceParallel), nullptr, ""},
    {"parallel.schedule", "", "§3.3", "pipeline schedule", DEF(name(parallel::toString(s.parallel.schedule))), nullptr,
     ""},
    {"parallel.virtual_stages", "", "§3.3", "model chunks per GPU (interleaved)", DEF(s.parallel.virtualStages),
     nullptr, R"({"minimum": 1})"},
    {"parallel.layer_partition", "", "§3.3", "layers of each pipeline stage (sums to L); absent = even", nullptr,
     "even", R"({"items": {"type": "integer", "minimum": 0}})"},
    {"parallel.layer_forward_time_s", "s", "§3.3", "a measured forward time per layer, overriding the kernel model",
     nullptr, "the kernel model", R"({"items": {"type": "number", "minimum": 0}})"},
    {"parallel.compute_efficiency", "", "§3.3", "a fixed share of the peak, or auto for the kernel model", nullptr,
     "\"auto\"", ""},
    {"parallel.bucket_bytes", "B", "§3.2", "gradient bucket, or auto for the framework's default", nullptr, "\"auto\"",
     ""},
    {"parallel.ddp_overlap", "", "§5.4", "data-parallel gradients overlap the backward pass",
     DEF(s.parallel.ddpOverlap), nullptr, ""},
    {"parallel.fp8_all_gather", "", "§3.2",
     "ZeRO-3 / FSDP gathers the layers' weights in FP8 (torchtitan's float8 all-gather; with model.fp8_recipe, "
     "else no effect)",
     DEF(s.parallel.fp8AllGather), nullptr, ""},
    {"parallel.tp_overlap", "", "§5.4", "tensor-parallel collectives overlap the GEMMs", DEF(s.parallel.tpOverlap),
     nullptr, ""},
    {"parallel.memory_reserve_bytes", "B", "§3.4", "the framework's reserve per GPU (CUDA context, workspaces)",
     DEF(num(s.parallel.memoryReserveBytes)), nullptr, R"({"minimum": 0, "maximum": 1e15})"},
    {"parallel.memory_headroom", "", "§3.4", "share of each GPU's memory kept free for the allocator's fragmentation",
     DEF(num(s.parallel.memoryHeadroomFraction)), nullptr, R"({"minimum": 0, "maximum": 0.5})"},
    {"parallel.comm_buffer_bytes", "B", "§3.4", "NCCL buffers per communicator", DEF(num(s.parallel.commBufferBytes)),
     nullptr, R"({"minimum": 0, "maximum": 1e15})"},
    {"parallel.assignment", "", "§3.1", "[dp, pp, tp] of each GPU in order; absent = tp fastest, then dp, then pp",
     nullptr, "Megatron's order",
     R"({"items": {"type": "array", "items": {"type": "integer", "minimum": 0}, "minItems": 3, "maxItems": 3}})"},
    // collectives
    {"collectives", "", "§4", "the algorithm of each collective and the α–β link of stage 4", nullptr, "NCCL's choice",
     ""},
    {"collectives.allreduce", "", "§4", "AllReduce's algorithm (auto: NCCL's tuner)",
     DEF(collective::toString(s.collectives.allReduce)), nullptr, ""},
    {"collectives.reducescatter", "", "§4", "ReduceScatter's algorithm", DEF(collective::toString(s.collectives.reduceScatter)),
     nullptr, ""},
    {"collectives.allgather", "", "§4", "AllGather's algorithm", DEF(collective::toString(s.collectives.allGather)),
     nullptr, ""},
    {"collectives.alltoall", "", "§4", "All-to-All's algorithm", DEF(collective::toString(s.collectives.allToAll)),
     nullptr, ""},
    {"collectives.broadcast", "", "§4", "Broadcast's algorithm", DEF(collective::toString(s.collectives.broadcast)),
     nullptr, ""},
    {"collectives.alpha_s", "s", "§4", "α, the start-up time of one message in stage 4's model",
     DEF(num(s.collectives.link.alphaSeconds)), nullptr, R"({"minimum": 0})"},
    {"collectives.bandwidth", "B/s", "§4", "β⁻¹, the link rate of stage 4's model", DEF(num(s.collectives.link.bandwidth)),
     nullptr, R"({"exclusiveMinimum": 0})"},
    // topology
    {"topology", "", "§5.3", "the fabric of stage 5", nullptr, "one server: nvswitch-node; several: leaf-spine", ""},
    {"topology.kind", "", "§5.3", "the fabric's shape", DEF(name(network::toString(s.topology.kind))), nullptr, ""},
    {"topology.gpus_per_pcie_switch", "", "§5.3", "GPUs sharing one PCIe switch", DEF(s.topology.gpusPerPcieSwitch),
     nullptr, R"({"minimum": 1})"},
    {"topology.gpudirect_p2p", "", "§5.3", "GPUs exchange directly over PCIe (else through host memory)",
     DEF(s.topology.gpuDirectP2P), nullptr, ""},
    {"topology.pcie", "", "§5.1", "PCIe generation of the servers; auto follows the GPU (H100: Gen5, A100: Gen4)",
     nullptr, "\"auto\"", R"({"enum": ["auto", "pcie-gen3", "pcie-gen4", "pcie-gen5"]})"},
    {"topology.nvlink", "", "§5.1", "NVLink generation; auto follows the GPU", nullptr, "\"auto\"",
     R"({"enum": ["auto", "nvlink3", "nvlink4"]})"},
    {"topology.intra_node", "", "§5.3", "how a server's GPUs meet", DEF(name(network::toString(s.topology.intraNode))),
     nullptr, ""},
    {"topology.nic_placement", "", "§5.3", "a NIC per GPU (rail-optimized) or one per server",
     DEF(name(network::toString(s.topology.nicPlacement))), nullptr, ""},
    {"topology.nic_protocol", "", "§5.1", "the NICs' link", DEF(name(network::toString(s.topology.nicProtocol))),
     nullptr, ""},
    {"topology.nic_bandwidth", "B/s", "§5.1",
     "a NIC's rate; auto: the protocol's (RoCEv2 by the servers' generation), or with its unit: 400Gbps, 50GB/s",
     nullptr, "\"auto\"", ""},
    {"topology.oversubscription", "", "§5.3", "leaf downlink : uplink capacity", DEF(num(s.topology.oversubscription)),
     nullptr, R"({"minimum": 1})"},
    {"topology.nics_per_leaf", "", "§5.3", "NICs under one leaf switch", DEF(s.topology.nicsPerLeaf), nullptr,
     R"({"minimum": 1})"},
    {"topology.spines", "", "§5.3", "spine switches", DEF(s.topology.spines), nullptr, R"({"minimum": 1})"},
    {"topology.gpus_per_pod", "", "§5.3", "GPUs of one pod (three-tier)", DEF(s.topology.gpusPerPod), nullptr,
     R"({"minimum": 1})"},
    {"topology.leaves_per_pod", "", "§5.3", "leaf switches of one pod (three-tier)", DEF(s.topology.leavesPerPod),
     nullptr, R"({"minimum": 1})"},
    {"topology.spines_per_pod", "", "§5.3", "spine switches of one pod (three-tier)", DEF(s.topology.spinesPerPod),
     nullptr, R"({"minimum": 1})"},
    {"topology.core_switches", "", "§5.3", "core switches, a multiple of spines_per_pod (three-tier)",
     DEF(s.topology.coreSwitches), nullptr, R"({"minimum": 1})"},
    {"topology.core_oversubscription", "", "§5.3", "spine downlink : uplink capacity (three-tier)",
     DEF(num(s.topology.coreOversubscription)), nullptr, R"({"minimum": 1})"},
    {"topology.rail_optimized", "", "§5.3", "each NIC of a server on its own rail leaf (three-tier)",
     DEF(s.topology.railOptimized), nullptr, ""},
    {"topology.leaf_spine_bandwidth", "B/s", "§5.1", "a leaf–spine link; auto from the NICs and the oversubscription",
     nullptr, "\"auto\"", ""},
    {"topology.spine_core_bandwidth", "B/s", "§5.1", "a spine–core link; auto from the core oversubscription", nullptr,
     "\"auto\"", ""},
    // run
    {"run", "", "§5.6", "the whole training run of this step: tokens, power, price", nullptr, "no run", ""},
    {"run.tokens", "tokens", "§5.6", "D, tokens to train: a number or a count with its unit (\"15.6T\", \"300B\")",
     DEF(num(s.run.tokens)), nullptr, ""},
    {"run.gpu_power_w", "W", "§5.6", "power per GPU; auto: the GPU's datasheet TDP", nullptr, "\"auto\"",
     R"({"anyOf": [{"type": "number", "exclusiveMinimum": 0, "maximum": 5000}, {"const": "auto"}]})"},
    {"run.host_power_w_per_gpu", "W", "§5.6", "the rest of the server per GPU (CPUs, NICs, fans); 0: GPUs only",
     DEF(num(s.run.hostPowerWattsPerGpu)), nullptr, R"({"minimum": 0, "maximum": 10000})"},
    {"run.pue", "", "§5.6", "the facility's power usage effectiveness (total / IT power)", DEF(num(s.run.pue)), nullptr,
     R"({"minimum": 1, "maximum": 3})"},
    {"run.price_per_gpu_hour", "per GPU-hour", "§5.6", "price of one GPU-hour; 0: no cost", DEF(num(s.run.pricePerGpuHour)),
     nullptr, R"({"minimum": 0, "maximum": 10000})"},
    {"run.failures", "", "§5.7", "unexpected interruptions per 10⁶ hours of one part (defaults: Llama 3's, Table 5)",
     nullptr, "Llama 3's rates", ""},
    {"run.failures.gpu", "per 10⁶ GPU-h", "§5.7", "GPU faults (the chip, its SRAM, system processor, sensors, SDC)",
     DEF(num(s.run.failures.gpu)), nullptr, R"({"exclusiveMinimum": 0, "maximum": 100000})"},
    {"run.failures.gpu_memory", "per 10⁶ GPU-h", "§5.7", "GPU memory (HBM) faults", DEF(num(s.run.failures.gpuMemory)),
     nullptr, R"({"exclusiveMinimum": 0, "maximum": 100000})"},
    {"run.failures.network", "per 10⁶ GPU-h", "§5.7", "switches, cables and NICs (one NIC per GPU)",
     DEF(num(s.run.failures.network)), nullptr, R"({"exclusiveMinimum": 0, "maximum": 100000})"},
    {"run.failures.software", "per 10⁶ GPU-h", "§5.7", "software bugs, collective timeouts, dependencies",
     DEF(num(s.run.failures.software)), nullptr, R"({"exclusiveMinimum": 0, "maximum": 100000})"},
    {"run.failures.host", "per 10⁶ server-h", "§5.7", "the server's other parts (CPU, memory, SSD, power, chassis)",
     DEF(num(s.run.failures.host)), nullptr, R"({"exclusiveMinimum": 0, "maximum": 100000})"},
    {"run.checkpoint", "", "§5.7", "checkpoints and restarts", nullptr, "Llama 3's storage, 10-minute restarts", ""},
    {"run.checkpoint.storage_gb_per_s_per_gpu", "GB/s", "§5.7",
     "storage bandwidth per GPU for writing and reading checkpoints", DEF(num(s.run.checkpoint.storageGBpsPerGpu)),
     nullptr, R"({"exclusiveMinimum": 0, "maximum": 1000})"},
    {"run.checkpoint.restart_s", "s", "§5.7", "from an interruption to training again, before the checkpoint is read",
     DEF(num(s.run.checkpoint.restartSeconds)), nullptr, R"({"minimum": 0, "maximum": 604800})"},
    {"run.checkpoint.interval_s", "s", "§5.7", "compute time between checkpoints; auto: Young/Daly √(2·write·MTBF)",
     nullptr, "\"auto\"",
     R"({"anyOf": [{"type": "number", "exclusiveMinimum": 0, "maximum": 10000000}, {"const": "auto"}]})"},
    {"run.batch_ramp", "", "§5.6",
     "smaller batches first, one object per phase in order: until (the run's tokens it lasts to, a count), "
     "global_batch_tokens (G of its steps), sequence_length (its T; absent: the batch's), dp (its data-parallel "
     "replicas, fewer nodes; absent: the plan's); then the batch block's G on the whole cluster",
     nullptr, "none",
     R"({"items": {"type": "object", "additionalProperties": false, "required": ["until", "global_batch_tokens"], )"
     R"("properties": {"until": {"anyOf": [{"type": "number", "exclusiveMinimum": 0}, {"type": "string"}]}, )"
     R"("global_batch_tokens": {"type": "integer", "minimum": 1}, "sequence_length": {"type": "integer", "minimum": 1}, "dp": {"type": "integer", "minimum": 1}}}})"},
};

#undef DEF

const Row* rowOf(const std::string& path)
{
    for (const Row& r : kRows)
        if (path == r.path)
            return &r;
    return nullptr;
}

KeyLog readerKeys() { return scenarioReaderKeys(); }

// A table cell: a "|" would end it.
std::string cell(const std::string& text)
{
    std::string out;
    for (char c : text)
        out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
}

} // namespace

std::vector<KeyDoc> scenarioKeyDocs()
{
    const Scenario defaults;
    std::vector<KeyDoc> out;
    for (const ReadKey& k : readerKeys()) {
        KeyDoc d;
        d.path = k.path;
        d.type = k.type;
        d.values = k.values;
        if (const Row* r = rowOf(k.path)) {
            d.unit = r->unit;
            d.section = r->section;
            d.meaning = r->meaning;
            d.defaultText = r->def ? r->def(defaults).dump() : r->derived;
            d.defaultIsJson = r->def != nullptr || std::string_view(r->derived).starts_with('"');
            d.schemaExtra = r->extra;
        }
        out.push_back(std::move(d));
    }
    return out;
}

std::vector<std::string> keysWithoutDoc()
{
    std::vector<std::string> out;
    for (const ReadKey& k : readerKeys())
        if (!rowOf(k.path))
            out.push_back(k.path);
    return out;
}

std::vector<std::string> docsWithoutKey()
{
    std::set<std::string> read;
    for (const ReadKey& k : readerKeys())
        read.insert(k.path);
    std::vector<std::string> out;
    for (const Row& r : kRows)
        if (!read.count(r.path))
            out.push_back(r.path);
    return out;
}

namespace {

// The schema of one key, without its children.
Json keySchema(const KeyDoc& d)
{
    Json s;
    if (d.type == "integer") {
        s["type"] = "integer";
        s["minimum"] = 0;
    } else if (d.type == "number" || d.type == "boolean" || d.type == "string" || d.type == "object"
               || d.type == "array") {
        s["type"] = d.type;
    } else if (d.type == "name") {
        s["type"] = "string";
        s["enum"] = d.values;
    } else if (d.type == "count") {
        s["anyOf"] = Json::array(
            {Json{{"type", "number"}, {"minimum", 0}},
             Json{{"type", "string"}, {"pattern", "^\\s*[0-9][0-9_,]*(\\.[0-9]*)?([eE][+-]?[0-9]+)?\\s*[kKMBGTP]?\\s*$"}}});
    } else if (d.type == "number-or-auto") {
        s["anyOf"] = Json::array({Json{{"type", "number"}, {"minimum", 0}}, Json{{"const", "auto"}}});
    } else if (d.type == "rate") {
        // The reader is the authority on units (base/unitparse.h); this pattern guides editors.
        s["anyOf"] = Json::array(
            {Json{{"type", "number"}, {"exclusiveMinimum", 0}}, Json{{"const", "auto"}},
             Json{{"type", "string"},
                  {"pattern", "^\\s*[0-9][0-9_,]*(\\.[0-9]*)?([eE][+-]?[0-9]+)?\\s*[kKMGTP]?i?(B/s|Bps|b/s|bps|bit/s)\\s*$"}}});
    }
    if (!d.schemaExtra.empty()) {
        const Json extra = Json::parse(d.schemaExtra);
        for (const auto& [key, value] : extra.items())
            s[key] = value;
    }
    std::string description = d.meaning;
    if (!d.unit.empty())
        description += " [" + d.unit + "]";
    if (!d.defaultText.empty())
        description += ". Default: " + d.defaultText;
    if (!d.section.empty())
        description += ". docs/model.md " + d.section;
    s["description"] = description;
    if (d.defaultIsJson)
        s["default"] = Json::parse(d.defaultText);
    if (d.type == "object") {
        s["additionalProperties"] = false;
        s["properties"] = Json::object();
    }
    return s;
}

} // namespace

std::string scenarioJsonSchema()
{
    Json root;
    root["$schema"] = "https://json-schema.org/draft/2020-12/schema";
    root["title"] = "TokenWire scenario";
    root["description"] = "A TokenWire scenario file (schema_version " + std::to_string(kSchemaVersion)
                          + "): every input of the five stages. Written from the program's reader; docs/scenario.md "
                            "says the same in prose. Older schema versions are migrated when read.";
    root["type"] = "object";
    root["additionalProperties"] = false;
    root["required"] = Json::array({"schema_version"});
    root["properties"] = Json::object();
    std::vector<KeyDoc> docs = scenarioKeyDocs(); // the top level's own keys first, then the sections
    std::stable_partition(docs.begin(), docs.end(),
                          [](const KeyDoc& d) { return d.path.find('.') == std::string::npos && d.type != "object"; });
    for (const KeyDoc& d : docs) {
        // "model.moe.experts" → /properties/model/properties/moe/properties/experts ("$schema" escaped)
        std::string pointer;
        std::size_t from = 0;
        for (std::size_t dot = d.path.find('.'); ; dot = d.path.find('.', from)) {
            std::string part = d.path.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
            pointer += "/properties/" + part;
            if (dot == std::string::npos)
                break;
            from = dot + 1;
        }
        root[Json::json_pointer(pointer)] = keySchema(d);
    }
    root["properties"]["schema_version"]["maximum"] = kSchemaVersion;
    return root.dump(2) + "\n";
}

std::string scenarioKeysMarkdown()
{
    std::string md;
    md += "# The scenario file\n\n";
    md += "A scenario is one JSON file holding every input of the five stages (`schema_version` "
          + std::to_string(kSchemaVersion) + "). This page is generated from the program's reader "
                                             "(`tokenwire-cli schema --markdown`); a test fails when it and the "
                                             "reader differ. Editors validate and complete files with the JSON "
                                             "Schema `tokenwire-cli schema` prints (installed as "
                                             "`share/tokenwire/scenario.schema.json`; add "
                                             "`\"$schema\": \"<its path>\"` to a file).\n\n";
    md += "Units: sizes in bytes (B), times in seconds (s), rates in bytes per second (B/s), compute in "
          "FLOP/s; a rate of the topology may also be written with its unit (`\"400Gbps\"`, `\"50GB/s\"`: "
          "b = bit, B = byte, k/M/G/T = 10³ⁿ, Ki/Mi/Gi = 2¹⁰ⁿ). Fractions are fractions (0.1, not 10 %). A "
          "missing key keeps its default; an unknown key, a wrong type or an unknown name is an error naming "
          "its path. Sections (§) are those of docs/model.md.\n";
    // The top level's own keys first, then a section per object.
    std::vector<KeyDoc> docs = scenarioKeyDocs();
    std::stable_partition(docs.begin(), docs.end(),
                          [](const KeyDoc& d) { return d.path.find('.') == std::string::npos && d.type != "object"; });
    std::string section;
    for (const KeyDoc& d : docs) {
        const std::string top = d.path.substr(0, d.path.find('.'));
        const bool isSection = d.type == "object" && d.path.find('.') == std::string::npos;
        if (isSection || section.empty()) {
            section = isSection ? top : "(top level)";
            md += "\n## " + (isSection ? "`" + top + "`" : std::string("Top level")) + "\n\n";
            if (isSection) {
                std::string intro = d.meaning + (d.defaultText.empty() ? "" : " (absent: " + d.defaultText + ")") + ".";
                intro[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(intro[0])));
                md += intro + "\n\n";
            }
            md += "| Key | Type | Unit | Default | Values | § | Meaning |\n|---|---|---|---|---|---|---|\n";
            if (isSection)
                continue;
        }
        // The schema's narrower list (the validation's) before the reader's.
        const Json extra = d.schemaExtra.empty() ? Json::object() : Json::parse(d.schemaExtra);
        std::string values;
        for (const std::string& v : extra.contains("enum") ? extra["enum"].get<std::vector<std::string>>() : d.values)
            values += (values.empty() ? "" : ", ") + ("`" + v + "`");
        {
            const auto bound = [&](const char* k, const char* op) {
                if (extra.contains(k))
                    values += (values.empty() ? "" : ", ") + std::string(op) + " " + extra[k].dump();
            };
            bound("minimum", "≥");
            bound("exclusiveMinimum", ">");
            bound("maximum", "≤");
        }
        std::string def = d.defaultText;
        if (!def.empty() && (def.front() == '"' || std::isdigit(static_cast<unsigned char>(def.front()))
                             || def == "true" || def == "false"))
            def = "`" + def + "`";
        md += "| `" + d.path + "` | " + d.type + " | " + d.unit + " | " + cell(def) + " | " + cell(values) + " | "
              + d.section + " | " + cell(d.meaning) + " |\n";
    }
    return md;
}

} // namespace tw::scenario
