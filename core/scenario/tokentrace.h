#pragma once
// The story's live thread: one token of the text followed through the five stages. Stage 1: its
// span, id and piece. Stage 2: its sequence, its row b and position t in the micro-batch [B,T] and
// the row x[b,t,:] of the hidden state (d values at the activation precision). Stage 3: the
// optimizer step, DP replica, micro-batch and GPUs that train it (parallel::placeToken). Stage 4:
// the collective calls of that step that carry its row — TP AllReduce / ReduceScatter / AllGather on
// its TP groups, PP Send/Recv between its stages, EP All-to-All — with its bytes in each, and the
// gradient reductions (DP, the tied embedding's) that every token feeds through the summed gradients,
// for which no per-token byte count exists. Stage 5: the links those transfers cross, routed with the
// network code (the same Router and flow ids as network::mapLinkLoads). Every number is a Figure
// "trace.*" whose inputs are the derivation's figures, so its chain walks back to the text.
//
// Buffer layout (for which transfers of a schedule carry the row): Megatron keeps the hidden state
// sequence-first, [T,B,d] (arXiv 2205.05198 §4.2.2: sequence parallelism splits it along T), so the
// row of (b, t) is bytes [(t·B + b)·d·s_act, (t·B + b + 1)·d·s_act) of a TP collective's buffer; a
// transfer carries part of the row when its chunk overlaps that range.

#include "derive.h"

#include "base/error.h"
#include "base/figure.h"
#include "base/progress.h"
#include "fabric/topology.h"
#include "parallel/plan.h"
#include "text/bpe.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tw::network {
class Router;
}

namespace tw::scenario {

// One collective call of the step that carries the token.
struct TokenTraceCall {
    // Row: the call moves the token's own row (activations or their gradients) — bytes can be
    // counted. Gradients: a gradient reduction the token feeds only through the summed gradients of
    // its whole micro-batch — every token contributes, no byte of it is the token's own.
    enum class Carries { Row, Gradients };
    std::uint32_t call = 0;             // index into CommPlan::calls and CollectiveDerivation::calls
    Carries carries = Carries::Row;
    std::vector<std::uint32_t> groups;  // the call's groups that carry it (indices into CommPlan::groups)
    double rowBytes = 0;                // Row: its bytes in the call's payloads, summed over `groups`
    double wireBytes = 0;               // Row: its bytes on the wire, once per step (the schedule's transfers
                                        // whose chunk holds part of the row; EP: the uniform-routing expectation)
    std::string rowFigure, wireFigure;  // ids of the figures holding rowBytes and wireBytes ("" for Gradients)
    std::string note;                   // how the call carries the token, in one sentence
};

// A link direction the token's traffic crosses in the step.
struct TokenTraceLink {
    std::uint32_t link = 0;   // network::LinkId
    double rowBytes = 0;      // bytes of its row crossing the link per step (0: only gradients)
    bool gradients = false;   // also carries a gradient reduction the token feeds
};

struct TokenTrace {
    // Stage 1.
    std::uint64_t token = 0;
    text::TokenSpan span;
    std::string piece;              // the token's bytes in the text
    // Stage 2: row b, position t of micro-batch [B,T]; the row x[b,t,:] is d values of s_act bytes.
    std::uint64_t B = 0, T = 0, d = 0;
    std::uint64_t sequence = 0, row = 0, position = 0;
    double rowBytes = 0;
    std::string activationType;     // "bf16" …
    // Stage 3 (placed = false when the plan cannot run).
    bool placed = false;
    parallel::TokenPlacement placement;
    std::vector<std::vector<std::uint32_t>> stageGpus; // per pipeline stage: its replica's GPUs there, by TP rank
    // Stage 4, in step order.
    std::vector<TokenTraceCall> calls;
    // Stage 5 (routed = false without a topology): ascending link ids.
    bool routed = false;
    std::vector<TokenTraceLink> links;
    FigureSet figures;              // "trace.*"
    std::vector<std::string> notes; // what is not counted per token, and why

    [[nodiscard]] const TokenTraceCall* findCall(std::uint32_t call) const;
    // The links its row crosses (rowBytes > 0), and those that carry only gradient reductions.
    [[nodiscard]] std::vector<std::uint32_t> rowLinks() const;
    [[nodiscard]] std::vector<std::uint32_t> gradientOnlyLinks() const;
};

// Follows token `tokenIndex` of the derivation's text. With a topology (stage 5's fabric for the same
// plan), the transfers are routed onto its links; `router` (a Router of that topology, kept by the
// caller) lets successive traces share its cached paths: routing a thousand GPUs' rings from scratch
// takes about a second in a debug build, with the paths cached some tens of milliseconds.
// Errors: an index past the text's tokens, a topology without one of the plan's GPUs or without a
// path between two of them, a stop request. Without a stage 3 plan the trace stops after stage 2
// (placed = false, a note says why).
[[nodiscard]] Result<TokenTrace> traceToken(const Derivation& derivation, const Scenario& scenario,
                                            std::uint64_t tokenIndex, const network::Topology* topology = nullptr,
                                            const Progress& progress = {}, network::Router* router = nullptr);

} // namespace tw::scenario
