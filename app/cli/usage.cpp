// The --help text of the tool and of each command (args.h's usage): one place for every usage text.
#include "args.h"

#include <string>

namespace tw::cli {

namespace {

// Option lines several commands share, written once so that every --help says them alike.
const std::string kScenarioOptions =
    "  --scenario FILE        a scenario file (.tokenwire.json), or - for standard input\n"
    "  --preset NAME          a preset shipped with the program (see tokenwire-cli presets)\n";
const std::string kDegreeOptions =
    "  --dp N --pp N --tp N   set a degree; after --pp or --tp alone, DP takes the rest of the GPUs\n"
    "  --ep N                 expert-parallel degree (divides dp and the experts)\n";
const std::string kShardingOptions =
    "  --zero K               ZeRO stage 0-3 (0 = plain DDP)\n"
    "  --sharding NAME        ddp, zero1, zero2, zero3, fsdp-full or fsdp-hybrid\n";
const std::string kUnitsOption =
    "  --units si|iec         byte sizes in MB (10^6 B, the default) or MiB (2^20 B)\n";
const std::string kHelpOption =
    "  -h, --help             this text\n";
const std::string kOpOption =
    "  --op OP                allreduce, reducescatter, allgather, broadcast, reduce, alltoall or sendrecv\n";

} // namespace

std::string usage(Command command)
{
    switch (command) {
    case Command::Tokenize:
        return R"(Usage: tokenwire-cli tokenize [options] FILE|-

Tokenizes a text (FILE, or - for standard input) and prints the dataset figures of stage 1:
bytes, code points, words, lines, tokens, tokens per word, bytes per token, sequences of T
tokens, micro-batches of B, optimizer steps for a global batch of G tokens, each with its formula.

Options:
  --tokenizer gpt2|FILE  gpt2 (embedded, the default) or a Hugging Face tokenizer.json
                         (BPE model, byte-level); write ./gpt2 for a file named gpt2
  --json                 one JSON object: n_tokens, n_bytes, ids, tokenizer, figures
                         ({id,label,value,unit,formula,inputs}), length_histogram, warnings
  --count                only the number of tokens
)" + kUnitsOption + R"(  --seq-len T            tokens per training sequence (default 1024)
  --micro-batch B        sequences per micro-batch (default 32)
  --global-batch G       tokens per optimizer step (default 524288)
)" + kHelpOption + R"(
Tokenization is byte-level, so any bytes can be tokenized: invalid UTF-8 is reported as a
warning on standard error (with its line and column) and the bytes are tokenized as they are.
Exit status: 0 done, 1 unreadable or corrupt input or tokenizer, 2 wrong usage.
)";
    case Command::TrainBpe:
        return R"(Usage: tokenwire-cli train-bpe --vocab-size V [--out tokenizer.json] FILE|-

Trains a byte-level BPE vocabulary of V tokens on a text (FILE, or - for standard input) with
GPT-2's pre-tokenizer: 256 byte tokens, V-257 merges and <|endoftext|>. Writes a Hugging Face
tokenizer.json that `tokenwire-cli tokenize --tokenizer FILE` reads back.

Options:
  --vocab-size V         target vocabulary size, 257…65,536 (required)
  --out FILE             where to write tokenizer.json (default: standard output)
)" + kHelpOption + R"(
A summary (merges learned, time, file written) goes to standard error. When the text runs out
of pairs before V, the smaller vocabulary is written and a warning says so.
Exit status: 0 done, 1 unreadable input or unwritable output, 2 wrong usage.
)";
    case Command::Derive:
        return R"(Usage: tokenwire-cli derive (--scenario FILE | --preset NAME) [--json] [--units si|iec]

Derives every figure of a scenario: stage 1 (the text, its tokens, sequences, batches) and stage 2
(parameters, tensors, memory per GPU, FLOPs), each with its value, unit and formula.

Options:
)" + kScenarioOptions + R"(  --json                 one JSON object: scenario, description, figures ({id,label,value,unit,
                         formula,inputs}), problems
)" + kUnitsOption + kHelpOption + R"(
Relative paths in a scenario file are relative to the file's folder.
Exit status: 0 done, 1 unreadable or invalid scenario (every problem is listed with its JSON
path), 2 wrong usage.
)";
    case Command::Tensors:
        return R"(Usage: tokenwire-cli tensors (--scenario FILE | --preset NAME) [--json] [--units si|iec]

Prints the tensor inventory of one training step: every tensor of the forward pass layer by layer,
then weights, gradients and optimizer state, with its shape in symbols and numbers, dtype, bytes,
layer and phase.

Options:
)" + kScenarioOptions + R"(  --json                 one JSON object: scenario, tensors ({name,component,shape_symbols,shape,
                         dtype,bytes,layer,phase,kind})
)" + kUnitsOption + kHelpOption + R"(
Exit status: 0 done, 1 unreadable or invalid scenario, 2 wrong usage.
)";
    case Command::Explain:
        return R"(Usage: tokenwire-cli explain ID (--scenario FILE | --preset NAME) [--json] [--units si|iec]

Prints how the figure ID was derived: its value and formula, then the figures it came from,
indented by depth, back to the inputs (the text, the tokenizer, the scenario's numbers). Stage 5's
figures (net.*, sim.*) simulate the step first; the run's (run.*) repeat it over run.tokens (none: 20
tokens per parameter, as stage 5's Run tab counts; tokenwire-cli run takes --tokens).

Options:
)" + kScenarioOptions + R"(  --json                 one JSON object: id, chain ({id,label,value,unit,formula,inputs,depth})
)" + kUnitsOption + kHelpOption + R"(
An unknown ID is refused with the ids close to it. `tokenwire-cli derive` lists every id.
Exit status: 0 done, 1 unreadable or invalid scenario, 2 wrong usage or unknown ID.
)";
    case Command::Plan:
        return R"(Usage: tokenwire-cli plan (--scenario FILE | --preset NAME) [--dp N] [--pp N] [--tp N] [--ep N]
                         [--zero K | --sharding NAME] [--json] [--units si|iec]

Stage 3: checks the scenario's parallel plan (dp x pp x tp GPUs, EP carved out of DP) and prints
its communication signature per strategy (payload per call, frequency, peers, bytes per GPU per
optimizer step, whether its groups leave a node) and every collective call of one optimizer step.

Options:
)" + kScenarioOptions + kDegreeOptions + kShardingOptions + R"(  --json                 one JSON object: valid, errors, figures, signature, groups, calls
)" + kUnitsOption + kHelpOption + R"(
An impossible plan (8-way TP of 12 heads, dp x pp x tp not the GPU count, ...) is printed with
every reason and the valid choices; the exit status is then 1.
Exit status: 0 a valid plan, 1 unreadable scenario or impossible plan, 2 wrong usage.
)";
    case Command::Kernels:
        return R"(Usage: tokenwire-cli kernels (--scenario FILE | --preset NAME) [--dp N] [--pp N] [--tp N] [--ep N]
                            [--json]

Stage 3: the kernels of one Transformer layer on one GPU under the scenario's plan, forward, backward
and recomputed: name, shape (M×N×K for GEMMs), FLOPs, bytes, time, what bounds it (compute or
memory) and the achieved TFLOP/s or GB/s; then the embedding, the head, the optimizer step and the
layer totals (docs/compute.md). With parallel.compute_efficiency set to a number or per-layer times
given, the plan does not use these times (the table says so).

Options:
)" + kScenarioOptions + kDegreeOptions + R"(  --json                 one JSON document instead of the table
)" + kHelpOption + R"(
Exit status: 0 done, 1 unreadable scenario or impossible plan, 2 wrong usage.
)";
    case Command::Fit:
        return R"(Usage: tokenwire-cli fit (--scenario FILE | --preset NAME) [--top N] [--simulate K] [--json]
                        [--units si|iec]

Stage 3: the plans that fit the scenario's model on its cluster. Every layout dp x pp x tp (x ep), DDP
or ZeRO-1/2/3, sequence parallelism, recomputation, micro-batch size, pipeline schedule and v is
validated and its memory computed for every GPU; those that fit are ranked by a coarse estimate
(compute, pipeline bubble, communication at nominal rates), then the best K layouts are simulated as `simulate` does and ranked by
step time. Kept: the cluster, the model, T, the global batch G, the fabric. Bounds (docs/memory.md):
TP inside a node, v <= 4, micro-batch <= 64, at most 500,000 candidates.

Options:
)" + kScenarioOptions + R"(  --top N                plans listed (1-1000, default 10)
  --simulate K           layouts simulated exactly (0-1000, default 6; a 1,024-GPU step takes seconds),
                         the others listed with their coarse estimate, marked ~
  --json                 {"plans": [{dp, pp, tp, ep, sharding, sequence_parallel, schedule,
                         virtual_stages, micro_batch, accumulation, recompute, simulated, step_time_s,
                         coarse_step_time_s, mfu, exposed_comm_s, peak_bytes}, ...], "candidates",
                         "valid", "fitting", "truncated", "capacity_bytes"}
  --units si|iec         byte units of the table

Exit status: 0 done (also when no plan fits), 1 unreadable scenario, 2 wrong usage.
)";
    case Command::Memory:
        return R"(Usage: tokenwire-cli memory (--scenario FILE | --preset NAME) [--dp N] [--pp N] [--tp N] [--ep N]
                           [--zero K | --sharding NAME] [--json] [--units si|iec]

Stage 3: the memory of every GPU under the scenario's parallel plan, per pipeline stage: weights,
gradients, optimizer state (divided by TP, PP, EP and ZeRO/FSDP), activations (Korthikanti et al.
Table 2 times the micro-batches in flight), buffers (DDP buckets, gathered ZeRO-3/FSDP units, NCCL),
the framework reserve, the peak, the capacity and whether it fits (docs/memory.md).

Options:
)" + kScenarioOptions + kDegreeOptions + kShardingOptions + R"(  --json                 {"gpus": [{gpu, stage, weights, gradients, optimizer, activations, buffers,
                         reserve, total}, ...], "roles": [...], "peak_bytes", "capacity_bytes", "fits"}
                         (bytes as numbers; total = the GPU's peak without the reserve)
)" + kUnitsOption + kHelpOption + R"(
Exit status: 0 the plan can run (fitting or not: see "fits"), 1 unreadable scenario or impossible
plan, 2 wrong usage.
)";
    case Command::Collective:
        return R"(Usage: tokenwire-cli collective --op OP [--algo NAME] --ranks N --bytes SIZE [--alpha TIME]
                         [--bandwidth RATE] [--root R] [--ranks-per-node K] [--chunks C]
                         [--json] [--steps] [--units si|iec]
       tokenwire-cli collective --list [--op OP] [--json]

Stage 4: schedules one collective call step by step with the algorithm NAME and counts it from the
schedule itself: steps, bytes on the wire, bytes each rank sends and receives, the alpha-beta time
(Hockney: the sum over steps of alpha + the step's largest message / beta), algbw = M / time and
busbw = algbw x factor (nccl-tests: 2(N-1)/N AllReduce, (N-1)/N ReduceScatter, AllGather,
All-to-All, 1 Broadcast, Reduce, Send/Recv; n/a for N = 1), and the closed form when there is one.
In one step a rank sends at most one message and receives at most one (single-port, full duplex).

Options:
)" + kOpOption + R"(  --algo NAME            an algorithm of OP (default: the first --list shows for it: ring for
                         allreduce, reducescatter and allgather; binomial for broadcast and reduce;
                         pairwise for alltoall)
  --ranks N              number of ranks, 1-16,384 (sendrecv: 2, rank 0 sends to rank 1)
  --bytes SIZE           M, the buffer: AllReduce's buffer, AllGather's output, ReduceScatter's
                         input, each rank's All-to-All send buffer, the root's Broadcast/Reduce
                         buffer, the Send/Recv message. 256MB (10^6), 48MiB (2^20), 1.5GB, 4096 or
                         4096B (bytes); units B, kB/KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB;
                         whole bytes below 2^53
  --alpha TIME           per-message latency alpha (default 10us); units s, ms, us (or µs), ns
  --bandwidth RATE       link bandwidth beta (default 10Gbps = 1.25 GB/s); b = bits (Gbps, Gb/s,
                         Gbit/s), B = bytes (GB/s, GBps), KiB/s ... TiB/s; a plain number is B/s
  --root R               root rank of broadcast, reduce and reduce-broadcast (default 0)
  --ranks-per-node K     hierarchical: K consecutive ranks share a node (default: one node)
  --chunks C             pipeline chunks of binary-tree, double-binary-tree and chain
                         (default: the algorithm's own)
  --steps                also print the whole schedule, step by step: phase, src -> dst, chunk,
                         bytes, reduce or copy (large N gives long outputs)
  --json                 one JSON object: op, algorithm, ranks, bytes, root, ranks_per_node,
                         pipeline_chunks, alpha_s, bandwidth_bytes_per_s, steps, transfers,
                         total_bytes, per_rank_sent_bytes, per_rank_received_bytes,
                         max_rank_sent_bytes, time_s, algbw, busbw (B/s), busbw_factor (null for
                         N = 1), closed_form (null or {formula, per_rank_sent_bytes, total_bytes,
                         steps, matches}); with --steps also chunks ({index, offset, bytes, origin,
                         destination}) and schedule ([{step, phase, transfers: [{src, dst, chunk,
                         bytes, reduce}]}], steps numbered from 1). Sizes are plain bytes.
  --units si|iec         table sizes in MB (10^6 B, the default) or MiB (2^20 B)
  --list                 every operation with its algorithms (the default first), one sentence each
)" + kHelpOption + R"(
Exit status: 0 done, 1 a spec the algorithm cannot schedule (every reason is printed: a root out
of range, ranks per node that do not divide N, sendrecv with N other than 2, ...), 2 wrong usage
(an unknown operation or algorithm, an algorithm OP does not have, a bad size, time or rate).
)";
    case Command::Simulate:
        return R"(Usage: tokenwire-cli simulate (--scenario FILE | --preset NAME) [--json] [--units si|iec]

Stage 5: one optimizer step of the scenario's plan simulated on its fabric ("topology"): every
transfer of every scheduled collective is a flow on its routed path, flows share links by max-min
fairness, compute blocks follow the pipeline schedule, DDP buckets overlap the backward pass.
Prints the step time, compute, exposed communication (per strategy), the communication share, MFU
and the busiest links.

Options:
)" + kScenarioOptions + R"(  --json                 one JSON object: step_time_s, compute_s, exposed_comm_s, comm_share, mfu,
                         links ({id,from,to,type,bytes,wire_bytes,utilization}), figures
)" + kUnitsOption + kHelpOption + R"(
Exit status: 0 done, 1 unreadable scenario, impossible plan or fabric, 2 wrong usage.
)";
    case Command::Sweep:
        return R"(Usage: tokenwire-cli sweep (--scenario FILE | --preset NAME) --gpus LIST [--strong]
                         [--json | --csv] [--units si|iec]

Stage 5's scaling sweep: the scenario on each cluster size of LIST, one simulated optimizer step
each (as `simulate`), with the paper's appendix A.3 quantities: step time, exposed communication
share ("AllReduce share" for a DDP plan), tokens/s, speedup and efficiency against the smallest size
that ran. Weak scaling (the default): data parallelism takes the GPUs (dp = GPUs / (pp x tp)), each
replica keeps its micro-batch and accumulation steps, so the global batch grows with dp. A size up to
the scenario's GPUs per node is one node; a larger size is whole nodes of that many GPUs. For the
paper-testbed fabric every GPU is a node, and the paper's measured points (15 % share at 2 nodes;
24.5 %, 67 % efficiency and 4.69x at 7) are printed next to the prediction with the gap in words.

Options:
)" + kScenarioOptions + R"(  --gpus LIST            cluster sizes: 1,2,4,8 or 1-7 or 1,2,4-8 (at most 64 sizes of 1-4,096 GPUs)
  --strong               strong scaling: keep the global batch (accumulation shrinks with dp)
  --json                 one JSON object: scenario, base_gpus, points ({gpus, nodes, dp, pp, tp, ep,
                         step_time_s, compute_s, exposed_comm_s, comm_share, tokens_per_s, speedup,
                         efficiency, mfu, ok, error}), measured ({gpus, comm_share, efficiency,
                         speedup, source}; null when not measured), gaps, figures
  --csv                  one header line, then one row per size (the point fields of --json)
)" + kUnitsOption + kHelpOption + R"(
Example: tokenwire-cli sweep --preset paper-testbed --gpus 1-7
Exit status: 0 done, 1 unreadable scenario or a size that cannot run (the other sizes are still
printed; the reasons go to standard error), 2 wrong usage (a malformed --gpus, too many sizes, more
than 4,096 GPUs).
)";
    case Command::Validate:
        return R"(Usage: tokenwire-cli validate [--data FILE] [--json]

Compares tokenwire's predicted payload bytes with real collectives measured on loopback (Open MPI
over TCP on lo; tools/measure/tokenwire-measure, scripts/measure.sh): one line per measured row with
Open MPI's algorithm, the tokenwire schedule it maps to, measured and predicted bytes and the error.
Rows whose algorithm tokenwire does not model are listed as exclusions with the reason.

Options:
  --data FILE  a measured dataset (default: data/measurements/openmpi-loopback.json, compiled in)
  --json       one JSON object: tolerance, rows ({op, algorithm_id, algorithm, ranks, bytes,
               measured_payload_bytes, predicted_payload_bytes, ratio, error, tokenwire, how, excluded, pass}),
               misses, exclusions
  -h, --help   this text

Exit status: 0 every modelled row within 2 % of its measured payload, 1 a miss (or an unreadable
dataset), 2 wrong usage.
)";
    case Command::Busbw:
        return R"(Usage: tokenwire-cli busbw (--scenario FILE | --preset NAME) --op OP [--algo auto|ring|tree|nvls|
         nvls-tree|collnet-direct|collnet-chain|pat] [--protocol auto|simple|ll128|ll] [--min-bytes 8]
         [--max-bytes 8G] [--factor 2] [--dtype bf16] [--channels N] [--json]

One NCCL collective over all GPUs of the scenario's cluster on its fabric, per message size, as NCCL's
own performance model (src/graph/tuning.cc, NCCL 2.30.7) predicts it on the channels its topology
search would build: a table in nccl-tests' layout (size, count, type, time, algbw, busbw) with the
algorithm and protocol used. auto picks what NCCL's tuner picks (the minimum predicted time).
See docs/nccl.md for the rules followed and simplified. Predictions, not measurements.

Options:
)" + kScenarioOptions + kOpOption + R"(  --algo NAME            auto (default) or one of NCCL's algorithms for the operation; alltoall and
                         sendrecv run point-to-point (auto only)
  --protocol NAME        auto (default), simple, ll128 or ll
  --min-bytes SIZE       smallest size (default 8); K, M, G = powers of 1024 as in nccl-tests
  --max-bytes SIZE       largest size (default 8G)
  --factor F             multiply the size by F from one row to the next (default 2)
  --dtype TYPE           element type (default bf16): sizes must be multiples of its size
  --channels N           force the ring's (and tree's) channel count (1…32), as NCCL_MIN/MAX_NCHANNELS
  --json                 {"op", "gpus", "nodes", "dtype", "fabric", "channels", "graphs" (per algorithm
                         its channels: GPU order and NIC), "rows": [{"bytes", "count", "time_s", "algbw",
                         "busbw", "algorithm", "protocol", "channels", "latency_s", "bandwidth_s"}]};
                         bandwidths in B/s, busbw null for one GPU
)" + kHelpOption + R"(
Sizes: the whole buffer as nccl-tests counts it (AllGather's output, ReduceScatter's input); for
allgather, reducescatter and alltoall the count is rounded down to a multiple of the GPU count.
Exit status: 0 done, 1 unreadable scenario or a pair NCCL does not have (the message names it), 2
wrong usage.
)";
    case Command::Run:
        return R"(Usage: tokenwire-cli run (--scenario FILE | --preset NAME) [--tokens COUNT] [--price P] [--json]

The whole training run of the scenario's simulated step (docs/model.md §5.6): D tokens at G tokens per
optimizer step take ⌈D / G⌉ steps; the wall-clock days and GPU-hours back to back, tokens per second
per GPU and MFU. Failures (§5.7): interruptions at run.failures' rates (Llama 3's by default) scaled
with the cluster, checkpoints of the weights and optimizer state every Young/Daly interval, restarts,
and the goodput and days with failures they leave. The energy (GPU-hours with failures · (GPU power, by
default its datasheet TDP, + host power per GPU) · PUE) and the cost at a price per GPU-hour count the
time with failures. The scenario's "run" block gives the defaults (docs/scenario.md).

Options:
)" + kScenarioOptions + R"(  --tokens COUNT         tokens to train: 15.6T, 300B (billion), 2e12; else the scenario's run.tokens
  --price P              price of one GPU-hour (any currency); else run.price_per_gpu_hour, 0 = no cost
  --json                 {"scenario", "tokens", "tokens_per_step", "steps", "step_time_s", "seconds", "days",
                         "gpus", "gpu_hours", "tokens_per_s_per_gpu", "mfu", "gpu_power_w",
                         "host_power_w_per_gpu", "pue", "interruptions", "interruptions_per_day", "mtbf_s",
                         "checkpoint_bytes", "checkpoint_write_s", "recovery_s", "checkpoint_interval_s",
                         "goodput", "days_with_failures", "gpu_hours_with_failures", "energy_kwh", "cost"
                         (null without a price), "goodput_by_cluster_size" [{"gpus", "mtbf_s",
                         "checkpoint_interval_s", "goodput"}], "figures"}
)" + kHelpOption + R"(
Example: tokenwire-cli run --preset llama3-405b --tokens 15.6T --price 2
Exit status: 0 done, 1 unreadable scenario, a plan that cannot run, no tokens or a custom GPU without
run.gpu_power_w, 2 wrong usage.
)";
    case Command::Schema:
        return R"(Usage: tokenwire-cli schema [--markdown]

Prints the JSON Schema (draft 2020-12) of a scenario file, built from the program's own reader: every
key with its type, unit, default, valid values and the section of docs/model.md that uses it. Point an
editor at it ("$schema" in a scenario file, or the editor's schema settings) to validate and complete
scenario files. The installed copy is share/tokenwire/scenario.schema.json.

Options:
  --markdown             docs/scenario.md (one table per section) instead of the schema
)" + kHelpOption + R"(
Exit status: 0 done, 2 wrong usage.
)";
    case Command::Presets:
        return R"(Usage: tokenwire-cli presets

Lists the scenarios shipped with the program: one name per line, then a blank line, then
"name — description" lines. Use a name with --preset.
)";
    case Command::None:
        break;
    }
    return R"(Usage: tokenwire-cli COMMAND [options]

From words to bits on the wire: the stages of "The Life of a Token" from the shell.

Commands:
  tokenize     tokenize a text (GPT-2 or a tokenizer.json) and print its dataset figures
  train-bpe    train a byte-level BPE vocabulary on a text and write tokenizer.json
  derive       derive every figure of a scenario (--scenario FILE or --preset NAME)
  tensors      the tensor inventory of one training step of a scenario
  explain      the derivation chain of one figure back to the inputs
  plan         the parallel plan: validation, communication signature, collective calls
  memory       memory of every GPU under the plan: states, activations, buffers, peak, fits
  kernels      the kernels of one layer on one GPU: shapes, FLOPs, bytes, time, compute- or memory-bound
  collective   one collective call scheduled step by step: bytes per rank, steps, time, busbw
  simulate     one training step on the scenario's fabric: step time, exposed communication, MFU
  sweep        the step on several cluster sizes: speedup, efficiency, communication share
  presets      the scenarios shipped with the program
  validate     predicted vs measured bytes of real collectives on loopback (exit 1 on a miss > 2 %)
  run          the whole training run of the step: days, GPU-hours, energy, cost (--tokens 15.6T)
  schema       the scenario file's JSON Schema (--markdown: the key reference, docs/scenario.md)
  busbw        NCCL's predicted bus bandwidth per message size on the scenario's fabric (nccl-tests' table)
  fit          the plans that fit the model on the cluster, ranked by simulated step time

Options:
  -h, --help   this text; `tokenwire-cli COMMAND --help` for a command's options
  --version    the program version

Exit status: 0 done, 1 unreadable or corrupt input, 2 wrong usage.
)";
}

} // namespace tw::cli
