#include "scenariofield.h"

#include <QCoreApplication>

#include <algorithm>
#include <functional>

namespace tw::ui {

namespace {
using scenario::Scenario;

struct FieldInfo {
    Field field;
    const char* jsonPath;
    const char* command;
    const char* label;
    std::function<FieldValue(const Scenario&)> get;
    std::function<bool(Scenario&, const FieldValue&)> set;
};

template <class T>
const T* as(const FieldValue& v)
{
    return std::get_if<T>(&v);
}

// A member read and written through `access` (a lambda returning a reference to it); the edit's value
// must hold the FieldValue alternative V.
template <class V, class Access>
FieldInfo typed(Field f, const char* path, const char* command, const char* label, Access access)
{
    return {f, path, command, label, [access](const Scenario& s) { return FieldValue(access(const_cast<Scenario&>(s))); },
            [access](Scenario& s, const FieldValue& v) {
                const auto* x = as<V>(v);
                if (!x)
                    return false;
                access(s) = *x;
                return true;
            }};
}

// A count, a flag and a real quantity (base units: B, s, FLOP/s …).
template <class Access>
FieldInfo count(Field f, const char* path, const char* command, const char* label, Access access)
{
    return typed<std::uint64_t>(f, path, command, label, access);
}

template <class Access>
FieldInfo flag(Field f, const char* path, const char* command, const char* label, Access access)
{
    return typed<bool>(f, path, command, label, access);
}

template <class Access>
FieldInfo real(Field f, const char* path, const char* command, const char* label, Access access)
{
    return typed<double>(f, path, command, label, access);
}

// An enum stored in the scenario, edited by its JSON name.
template <class Access, class ToString, class FromString>
FieldInfo named(Field f, const char* path, const char* command, const char* label, Access access, ToString toStr,
                FromString fromStr)
{
    return {f, path, command, label,
            [access, toStr](const Scenario& s) { return FieldValue(std::string(toStr(access(const_cast<Scenario&>(s))))); },
            [access, fromStr](Scenario& s, const FieldValue& v) {
                const auto* name = as<std::string>(v);
                if (!name)
                    return false;
                const auto parsed = fromStr(*name);
                if (!parsed)
                    return false;
                access(s) = *parsed;
                return true;
            }};
}

// A real quantity of the user-defined GPU.
FieldInfo customGpuReal(Field f, const char* path, const char* command, const char* label, double model::GpuSpec::*member)
{
    return real(f, path, command, label, [member](Scenario& s) -> double& { return s.hardware.custom.*member; });
}

// The algorithm of one collective (auto, NCCL's or a textbook one): only those the collective has are accepted.
FieldInfo algorithm(Field f, collective::Op op, const char* path, const char* command, const char* label)
{
    return {f, path, command, label,
            [op](const Scenario& s) { return FieldValue(collective::toString(s.collectives.pick(op))); },
            [op](Scenario& s, const FieldValue& v) {
                // "auto", one of NCCL's algorithms for the op, or a textbook schedule of the op.
                const auto* name = as<std::string>(v);
                const auto pick = name ? collective::pickFromString(*name) : std::nullopt;
                if (!pick)
                    return false;
                const std::vector<std::string> valid = collective::pickNamesFor(op);
                if (std::find(valid.begin(), valid.end(), collective::toString(*pick)) == valid.end())
                    return false;
                s.collectives.set(op, *pick);
                return true;
            }};
}

FieldInfo linkReal(Field f, const char* path, const char* command, const char* label, double collective::LinkModel::*member)
{
    return real(f, path, command, label, [member](Scenario& s) -> double& { return s.collectives.link.*member; });
}

FieldInfo precision(Field f, const char* path, const char* command, const char* label,
                    model::Precision model::ModelConfig::*member)
{
    return named(
        f, path, command, label, [member](Scenario& s) -> model::Precision& { return s.model.*member; },
        [](model::Precision p) { return model::toString(p); }, [](const std::string& s) { return model::precisionFromString(s); });
}

const std::vector<FieldInfo>& table()
{
    using model::ModelConfig;
    static const std::vector<FieldInfo> fields = {
        {Field::TextSample, "text.sample", QT_TRANSLATE_NOOP("tw::ui::Field", "Choose text"),
         QT_TRANSLATE_NOOP("tw::ui::Field", "Text"), [](const Scenario& s) { return FieldValue(s.text.sample); },
         [](Scenario& s, const FieldValue& v) {
             const auto* name = as<std::string>(v);
             if (!name)
                 return false;
             s.text.kind = scenario::TextSource::Kind::Sample;
             s.text.sample = *name;
             return true;
         }},
        count(Field::Documents, "text.documents", QT_TRANSLATE_NOOP("tw::ui::Field", "Set documents"),
              QT_TRANSLATE_NOOP("tw::ui::Field", "Documents"), [](Scenario& s) -> auto& { return s.text.documents; }),
        named(
            Field::TokenizerKind, "tokenizer.kind", QT_TRANSLATE_NOOP("tw::ui::Field", "Choose tokenizer"),
            QT_TRANSLATE_NOOP("tw::ui::Field", "Tokenizer"), [](Scenario& s) -> auto& { return s.tokenizer.kind; },
            [](scenario::TokenizerChoice::Kind x) { return scenario::toString(x); },
            [](const std::string& s) { return scenario::tokenizerKindFromString(s); }),
        count(Field::TrainedVocab, "tokenizer.vocab_size", QT_TRANSLATE_NOOP("tw::ui::Field", "Set trained vocabulary"),
              QT_TRANSLATE_NOOP("tw::ui::Field", "Trained V"), [](Scenario& s) -> auto& { return s.tokenizer.trainedVocab; }),
        named(
            Field::Family, "model.family", QT_TRANSLATE_NOOP("tw::ui::Field", "Choose family"),
            QT_TRANSLATE_NOOP("tw::ui::Field", "Family"), [](Scenario& s) -> auto& { return s.model.family; },
            [](model::Family x) { return model::toString(x); }, [](const std::string& s) { return model::familyFromString(s); }),
        count(Field::Layers, "model.layers", QT_TRANSLATE_NOOP("tw::ui::Field", "Set layers"),
              QT_TRANSLATE_NOOP("tw::ui::Field", "Layers L"), [](Scenario& s) -> auto& { return s.model.layers; }),
        count(Field::HiddenSize, "model.hidden_size", QT_TRANSLATE_NOOP("tw::ui::Field", "Set hidden size"),
              QT_TRANSLATE_NOOP("tw::ui::Field", "Hidden size d"), [](Scenario& s) -> auto& { return s.model.hiddenSize; }),
        count(Field::Heads, "model.heads", QT_TRANSLATE_NOOP("tw::ui::Field", "Set heads"),
              QT_TRANSLATE_NOOP("tw::ui::Field", "Heads a"), [](Scenario& s) -> auto& { return s.model.heads; }),
        count(Field::KvHeads, "model.kv_heads", QT_TRANSLATE_NOOP("tw::ui::Field", "Set key/value heads"),
              QT_TRANSLATE_NOOP("tw::ui::Field", "KV heads n_kv"), [](Scenario& s) -> auto& { return s.model.kvHeads; }),
        count(Field::FfnSize, "model.ffn_size", QT_TRANSLATE_NOOP("tw::ui::Field", "Set MLP size"),
              QT_TRANSLATE_NOOP("tw::ui::Field", "MLP size d_ff"), [](Scenario& s) -> auto& { return s.model.ffnSize; }),
        flag(Field::VocabFromTokenizer, "model_vocab_from_tokenizer",
             QT_TRANSLATE_NOOP("tw::ui::Field", "Take V from the tokenizer"),
             QT_TRANSLATE_NOOP("tw::ui::Field", "V from tokenizer"), [](Scenario& s) -> auto& { return s.modelVocabFromTokenizer; }),
        count(Field::VocabSize, "model.vocab_size", QT_TRANSLATE_NOOP("tw::ui::Field", "Set vocabulary size"),
              QT_TRANSLATE_NOOP("tw::ui::Field", "Vocabulary V"), [](Scenario& s) -> auto& { return s.model.vocabSize; }),
        count(Field::VocabPadMultiple, "model.vocab_pad_multiple", QT_TRANSLATE_NOOP("tw::ui::Field", "Set vocabulary padding"),
              QT_TRANSLATE_NOOP("tw::ui::Field", "Pad V to multiple of"),
              [](Scenario& s) -> auto& { return s.model.vocabPadMultiple; }),
        flag(Field::TiedEmbeddings, "model.tied_embeddings", QT_TRANSLATE_NOOP("tw::ui::Field", "Tie the head"),
             QT_TRANSLATE_NOOP("tw::ui::Field", "Tied head"), [](Scenario& s) -> auto& { return s.model.tiedEmbeddings; }),
        count(Field::MaxPositions, "model.max_positions", QT_TRANSLATE_NOOP("tw::ui::Field", "Set learned positions"),
              QT_TRANSLATE_NOOP("tw::ui::Field", "Positions T_max"), [](Scenario& s) -> auto& { return s.model.maxPositions; }),
        count(Field::MoeExperts, "model.moe.experts", QT_TRANSLATE_NOOP("tw::ui::Field", "Set experts"),
              QT_TRANSLATE_NOOP("tw::ui::Field", "Experts E"), [](Scenario& s) -> auto& { return s.model.moe.experts; }),
        count(Field::MoeTopK, "model.moe.top_k", QT_TRANSLATE_NOOP("tw::ui::Field", "Set experts per token"),
              QT_TRANSLATE_NOOP("tw::ui::Field", "Top-k"), [](Scenario& s) -> auto& { return s.model.moe.topK; }),
        real(Field::MoeCapacityFactor, "model.moe.capacity_factor", QT_TRANSLATE_NOOP("tw::ui::Field", "Set capacity factor"),
             QT_TRANSLATE_NOOP("tw::ui::Field", "Capacity factor"), [](Scenario& s) -> auto& { return s.model.moe.capacityFactor; }),
        count(Field::MoeLayerInterval, "model.moe.layer_interval", QT_TRANSLATE_NOOP("tw::ui::Field", "Set MoE interval"),
              QT_TRANSLATE_NOOP("tw::ui::Field", "MoE every k-th layer"),
              [](Scenario& s) -> auto& { return s.model.moe.layerInterval; }),
        precision(Field::WeightsPrecision, "model.weights", QT_TRANSLATE_NOOP("tw::ui::Field", "Choose weight precision"),
                  QT_TRANSLATE_NOOP("tw::ui::Field", "Weights"), &ModelConfig::weights),
        precision(Field::ActivationsPrecision, "model.activations",
                  QT_TRANSLATE_NOOP("tw::ui::Field", "Choose activation precision"),
                  QT_TRANSLATE_NOOP("tw::ui::Field", "Activations"), &ModelConfig::activations),
        precision(Field::GradientsPrecision, "model.gradients", QT_TRANSLATE_NOOP("tw::ui::Field", "Choose gradient precision"),
                  QT_TRANSLATE_NOOP("tw::ui::Field", "Gradients"), &ModelConfig::gradients),
        precision(Field::OptimizerPrecision, "model.optimizer_state",
                  QT_TRANSLATE_NOOP("tw::ui::Field", "Choose optimizer precision"),
                  QT_TRANSLATE_NOOP("tw::ui::Field", "Optimizer state"), &ModelConfig::optimizerState),
        named(
            Field::Recompute, "model.recompute", QT_TRANSLATE_NOOP("tw::ui::Field", "Choose recomputation"),
            QT_TRANSLATE_NOOP("tw::ui::Field", "Recompute"), [](Scenario& s) -> auto& { return s.model.recompute; },
            [](model::Recompute x) { return model::toString(x); },
            [](const std::string& s) { return model::recomputeFromString(s); }),
        named(
            Field::Fp8Recipe, "model.fp8_recipe", QT_TRANSLATE_NOOP("tw::ui::Field", "Choose FP8 recipe"),
            QT_TRANSLATE_NOOP("tw::ui::Field", "FP8 recipe"), [](Scenario& s) -> auto& { return s.model.fp8Recipe; },
            [](model::Fp8Recipe x) { return model::toString(x); },
            [](const std::string& s) { return model::fp8RecipeFromString(s); }),
        {Field::Gpu, "hardware.gpu", QT_TRANSLATE_NOOP("tw::ui::Field", "Choose GPU"), QT_TRANSLATE_NOOP("tw::ui::Field", "GPU"),
         [](const Scenario& s) { return FieldValue(s.hardware.gpu); },
         [](Scenario& s, const FieldValue& v) {
             const auto* id = as<std::string>(v);
             if (!id || id->empty())
                 return false;
             s.hardware.gpu = *id;
             return true;
         }},
        {Field::CustomGpuName, "hardware.custom.name", QT_TRANSLATE_NOOP("tw::ui::Field", "Set custom GPU name"),
         QT_TRANSLATE_NOOP("tw::ui::Field", "Name"), [](const Scenario& s) { return FieldValue(s.hardware.custom.name); },
         [](Scenario& s, const FieldValue& v) {
             const auto* name = as<std::string>(v);
             if (!name)
                 return false;
             s.hardware.custom.name = *name;
             return true;
         }},
        customGpuReal(Field::CustomGpuMemory, "hardware.custom.memory_bytes",
                      QT_TRANSLATE_NOOP("tw::ui::Field", "Set custom GPU memory"),
                      QT_TRANSLATE_NOOP("tw::ui::Field", "Memory (GiB)"), &model::GpuSpec::memoryBytes),
        customGpuReal(Field::CustomGpuPeakFp32, "hardware.custom.peak_fp32",
                      QT_TRANSLATE_NOOP("tw::ui::Field", "Set custom GPU fp32 peak"),
                      QT_TRANSLATE_NOOP("tw::ui::Field", "Peak fp32 (TFLOP/s)"), &model::GpuSpec::peakFp32),
        customGpuReal(Field::CustomGpuPeakBf16, "hardware.custom.peak_bf16",
                      QT_TRANSLATE_NOOP("tw::ui::Field", "Set custom GPU bf16 peak"),
                      QT_TRANSLATE_NOOP("tw::ui::Field", "Peak bf16 (TFLOP/s)"), &model::GpuSpec::peakBf16),
        customGpuReal(Field::CustomGpuPeakFp16, "hardware.custom.peak_fp16",
                      QT_TRANSLATE_NOOP("tw::ui::Field", "Set custom GPU fp16 peak"),
                      QT_TRANSLATE_NOOP("tw::ui::Field", "Peak fp16 (TFLOP/s)"), &model::GpuSpec::peakFp16),
        customGpuReal(Field::CustomGpuPeakFp8, "hardware.custom.peak_fp8",
                      QT_TRANSLATE_NOOP("tw::ui::Field", "Set custom GPU fp8 peak"),
                      QT_TRANSLATE_NOOP("tw::ui::Field", "Peak fp8 (TFLOP/s)"), &model::GpuSpec::peakFp8),
        count(Field::Nodes, "hardware.nodes", QT_TRANSLATE_NOOP("tw::ui::Field", "Set nodes"),
              QT_TRANSLATE_NOOP("tw::ui::Field", "Nodes"), [](Scenario& s) -> auto& { return s.hardware.nodes; }),
        count(Field::GpusPerNode, "hardware.gpus_per_node", QT_TRANSLATE_NOOP("tw::ui::Field", "Set GPUs per node"),
              QT_TRANSLATE_NOOP("tw::ui::Field", "GPUs per node"), [](Scenario& s) -> auto& { return s.hardware.gpusPerNode; }),
        count(Field::SequenceLength, "batch.sequence_length", QT_TRANSLATE_NOOP("tw::ui::Field", "Set sequence length"),
              QT_TRANSLATE_NOOP("tw::ui::Field", "Sequence T"), [](Scenario& s) -> auto& { return s.batch.sequenceLength; }),
        count(Field::MicroBatch, "batch.micro_batch", QT_TRANSLATE_NOOP("tw::ui::Field", "Set micro-batch"),
              QT_TRANSLATE_NOOP("tw::ui::Field", "Micro-batch B"), [](Scenario& s) -> auto& { return s.batch.microBatch; }),
        count(Field::GlobalBatchTokens, "batch.global_batch_tokens", QT_TRANSLATE_NOOP("tw::ui::Field", "Set global batch"),
              QT_TRANSLATE_NOOP("tw::ui::Field", "Global batch G"),
              [](Scenario& s) -> auto& { return s.batch.globalBatchTokens; }),
        named(
            Field::Sharding, "parallel.sharding", QT_TRANSLATE_NOOP("tw::ui::Field", "Choose sharding"),
            QT_TRANSLATE_NOOP("tw::ui::Field", "Sharding"), [](Scenario& s) -> auto& { return s.parallel.sharding; },
            [](parallel::Sharding x) { return parallel::toString(x); },
            [](const std::string& s) { return parallel::shardingFromString(s); }),
        flag(Field::SequenceParallel, "parallel.sequence_parallel",
             QT_TRANSLATE_NOOP("tw::ui::Field", "Set sequence parallelism"),
             QT_TRANSLATE_NOOP("tw::ui::Field", "Sequence parallelism"),
             [](Scenario& s) -> auto& { return s.parallel.sequenceParallel; }),
        count(Field::ShardGroupSize, "parallel.shard_group_size", QT_TRANSLATE_NOOP("tw::ui::Field", "Set shard group size"),
              QT_TRANSLATE_NOOP("tw::ui::Field", "Shard group"), [](Scenario& s) -> auto& { return s.parallel.shardGroupSize; }),
        real(Field::ComputeEfficiency, "parallel.compute_efficiency", QT_TRANSLATE_NOOP("tw::ui::Field", "Set compute efficiency"),
             QT_TRANSLATE_NOOP("tw::ui::Field", "Achieved / peak FLOP/s"),
             [](Scenario& s) -> auto& { return s.parallel.computeEfficiency; }),
        algorithm(Field::AllReduceAlgorithm, collective::Op::AllReduce, "collectives.allreduce",
                  QT_TRANSLATE_NOOP("tw::ui::Field", "Choose AllReduce algorithm"), QT_TRANSLATE_NOOP("tw::ui::Field", "AllReduce")),
        algorithm(Field::ReduceScatterAlgorithm, collective::Op::ReduceScatter, "collectives.reducescatter",
                  QT_TRANSLATE_NOOP("tw::ui::Field", "Choose ReduceScatter algorithm"),
                  QT_TRANSLATE_NOOP("tw::ui::Field", "ReduceScatter")),
        algorithm(Field::AllGatherAlgorithm, collective::Op::AllGather, "collectives.allgather",
                  QT_TRANSLATE_NOOP("tw::ui::Field", "Choose AllGather algorithm"), QT_TRANSLATE_NOOP("tw::ui::Field", "AllGather")),
        algorithm(Field::AllToAllAlgorithm, collective::Op::AllToAll, "collectives.alltoall",
                  QT_TRANSLATE_NOOP("tw::ui::Field", "Choose All-to-All algorithm"), QT_TRANSLATE_NOOP("tw::ui::Field", "All-to-All")),
        algorithm(Field::BroadcastAlgorithm, collective::Op::Broadcast, "collectives.broadcast",
                  QT_TRANSLATE_NOOP("tw::ui::Field", "Choose Broadcast algorithm"), QT_TRANSLATE_NOOP("tw::ui::Field", "Broadcast")),
        linkReal(Field::LinkAlpha, "collectives.alpha_s", QT_TRANSLATE_NOOP("tw::ui::Field", "Set link latency"),
                 QT_TRANSLATE_NOOP("tw::ui::Field", "Latency α"), &collective::LinkModel::alphaSeconds),
        linkReal(Field::LinkBandwidth, "collectives.bandwidth", QT_TRANSLATE_NOOP("tw::ui::Field", "Set link bandwidth"),
                 QT_TRANSLATE_NOOP("tw::ui::Field", "Bandwidth β"), &collective::LinkModel::bandwidth),
        real(Field::RunTokens, "run.tokens", QT_TRANSLATE_NOOP("tw::ui::Field", "Set tokens to train"),
             QT_TRANSLATE_NOOP("tw::ui::Field", "Tokens to train D"), [](Scenario& s) -> auto& { return s.run.tokens; }),
        real(Field::RunPricePerGpuHour, "run.price_per_gpu_hour", QT_TRANSLATE_NOOP("tw::ui::Field", "Set price per GPU-hour"),
             QT_TRANSLATE_NOOP("tw::ui::Field", "Price per GPU-hour"),
             [](Scenario& s) -> auto& { return s.run.pricePerGpuHour; }),
        real(Field::RunPue, "run.pue", QT_TRANSLATE_NOOP("tw::ui::Field", "Set PUE"), QT_TRANSLATE_NOOP("tw::ui::Field", "PUE"),
             [](Scenario& s) -> auto& { return s.run.pue; }),
        real(Field::RunRestartSeconds, "run.checkpoint.restart_s", QT_TRANSLATE_NOOP("tw::ui::Field", "Set restart time"),
             QT_TRANSLATE_NOOP("tw::ui::Field", "Restart (s)"),
             [](Scenario& s) -> auto& { return s.run.checkpoint.restartSeconds; }),
        real(Field::RunStorageGBpsPerGpu, "run.checkpoint.storage_gb_per_s_per_gpu",
             QT_TRANSLATE_NOOP("tw::ui::Field", "Set checkpoint storage bandwidth"),
             QT_TRANSLATE_NOOP("tw::ui::Field", "Storage GB/s per GPU"),
             [](Scenario& s) -> auto& { return s.run.checkpoint.storageGBpsPerGpu; }),
    };
    return fields;
}

const FieldInfo& info(Field field)
{
    const FieldInfo& f = table()[static_cast<std::size_t>(field)];
    Q_ASSERT(f.field == field); // the table lists the fields in the enum's order
    return f;
}
} // namespace

const std::vector<Field>& allFields()
{
    static const std::vector<Field> fields = [] {
        std::vector<Field> out;
        for (const FieldInfo& f : table())
            out.push_back(f.field);
        return out;
    }();
    return fields;
}

std::optional<Field> algorithmField(collective::Op op)
{
    switch (op) {
    case collective::Op::AllReduce: return Field::AllReduceAlgorithm;
    case collective::Op::ReduceScatter: return Field::ReduceScatterAlgorithm;
    case collective::Op::AllGather: return Field::AllGatherAlgorithm;
    case collective::Op::AllToAll: return Field::AllToAllAlgorithm;
    case collective::Op::Broadcast: return Field::BroadcastAlgorithm;
    case collective::Op::Reduce:
    case collective::Op::SendRecv: break;
    }
    return std::nullopt;
}

QString fieldJsonPath(Field field)
{
    return QString::fromLatin1(info(field).jsonPath);
}

QString fieldCommandName(Field field)
{
    return QCoreApplication::translate("tw::ui::Field", info(field).command);
}

QString fieldLabel(Field field)
{
    return QCoreApplication::translate("tw::ui::Field", info(field).label);
}

FieldValue fieldValue(const scenario::Scenario& scenario, Field field)
{
    return info(field).get(scenario);
}

bool setFieldValue(scenario::Scenario& scenario, Field field, const FieldValue& value)
{
    return info(field).set(scenario, value);
}

QString toDisplayString(const FieldValue& value)
{
    struct Visitor {
        QString operator()(std::uint64_t n) const { return QString::number(n); }
        QString operator()(double x) const { return QString::number(x); }
        QString operator()(bool b) const { return b ? QStringLiteral("on") : QStringLiteral("off"); }
        QString operator()(const std::string& s) const { return QString::fromStdString(s); }
    };
    return std::visit(Visitor{}, value);
}

} // namespace tw::ui
