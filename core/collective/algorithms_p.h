#pragma once
// Private to core/collective: the step generators behind Schedule, one per (operation, algorithm).
// A generator also tells the data checker what its chunks hold: the buffer is cut into `atoms`
// (pieces of the even split of M, sizes differing by at most one byte; All-to-All: the N×N blocks)
// and every chunk of the table is a run of atoms. The checker follows atoms, so 0-byte pieces
// (M < N) are still checked.

#include "schedule.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tw::collective::detail {

// A run of `count` atoms from `first`; it wraps past the last atom (Bruck AllGather's cyclic runs).
struct AtomRange {
    std::uint32_t first = 0, count = 0;
};

// Byte offset of piece i when `total` bytes are cut into `pieces` pieces of sizes differing by ≤ 1
// (the first total mod pieces pieces get the extra byte).
[[nodiscard]] inline std::uint64_t evenOffset(std::uint64_t total, std::uint64_t pieces, std::uint64_t i)
{
    return i * (total / pieces) + (i < total % pieces ? i : total % pieces);
}
[[nodiscard]] inline std::uint64_t evenSize(std::uint64_t total, std::uint64_t pieces, std::uint64_t i)
{
    return total / pieces + (i < total % pieces ? 1 : 0);
}

class Generator {
public:
    explicit Generator(const ScheduleSpec& spec);
    virtual ~Generator() = default;

    // Sequential generation; the stateless generators compute step s directly (O(N) per step).
    virtual bool next(std::vector<Transfer>& step);
    virtual void reset() { m_step = 0; }
    [[nodiscard]] virtual std::uint64_t stepCount() const = 0;
    [[nodiscard]] virtual std::string phaseOf(std::uint64_t step) const = 0;

    [[nodiscard]] virtual std::uint32_t atomCount() const = 0;
    [[nodiscard]] virtual std::uint32_t chunkCount() const = 0;
    [[nodiscard]] virtual AtomRange atoms(std::uint32_t chunk) const = 0;
    // The chunk that is exactly this atom (named in the checker's messages).
    [[nodiscard]] virtual std::uint32_t chunkOfAtom(std::uint32_t atom) const { return atom; }
    // Offset and bytes of a chunk: its atoms' share of the even split of M (a wrapping run starts at
    // its first atom's offset).
    [[nodiscard]] virtual Chunk chunk(std::uint32_t index) const;
    // Bytes of one atom.
    [[nodiscard]] virtual std::uint64_t atomBytes(std::uint32_t atom) const;
    // Direct exchange sends each rank's own input (its send buffer), not what it has summed so far.
    [[nodiscard]] virtual bool sendsInput() const { return false; }

    [[nodiscard]] std::uint64_t ranks() const { return m_n; }
    [[nodiscard]] std::uint64_t bytes() const { return m_bytes; }

protected:
    // Fills `out` with the transfers of step s < stepCount() (stateless generators).
    virtual void emitStep(std::uint64_t s, std::vector<Transfer>& out) const;
    // A transfer of chunk c from a to b with the chunk's bytes.
    [[nodiscard]] Transfer transfer(std::uint64_t a, std::uint64_t b, std::uint32_t c, bool reduce) const
    {
        return Transfer{static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b), c, chunk(c).bytes, reduce};
    }

    ScheduleSpec m_spec;
    std::uint64_t m_n = 1;
    std::uint64_t m_bytes = 0; // M as an integer
    std::uint64_t m_step = 0;
};

// The generator of a valid spec (an empty one, 0 steps, for an invalid spec).
[[nodiscard]] std::unique_ptr<Generator> makeGenerator(const ScheduleSpec& spec);

// The pipeline chunks a tree or chain uses: the spec's, or min(ceil(share / 64 KiB), 64) ≥ 1 where
// share is the bytes one tree or the chain carries.
[[nodiscard]] std::uint64_t pipelineChunksFor(const ScheduleSpec& spec);

// The data checker of checkSchedule, on any generator (tests hand it a broken one).
[[nodiscard]] Status checkGenerator(const ScheduleSpec& spec, Generator& gen);

// Test-only: a generator that breaks another one at step `step` — drops its transfer `index`,
// sends it twice, or turns a reduce into a copy (and a copy into a reduce).
enum class Defect { Drop, Duplicate, FlipReduce };
[[nodiscard]] std::unique_ptr<Generator> withDefect(std::unique_ptr<Generator> inner, Defect defect,
                                                    std::uint64_t step, std::size_t index);

} // namespace tw::collective::detail
