#pragma once
// Freeing a large result (a derivation of GPT-3 175B holds thousands of tensors, calls and strings)
// costs as much as building it: ≈0.8 ms of a 1.6 ms re-derivation after an edit (perf, bench_derive:
// malloc_consolidate, _int_free). releaseLater() hands the last reference to one background thread
// that drops it, so the thread that replaced the result (the deriver's cache, the GUI) does not wait
// for the free. The memory comes back a moment later; nothing else changes.

#include <memory>

namespace tw {

// Drops `object` on the release thread (inline during process exit, when that thread is gone).
void releaseLater(std::shared_ptr<const void> object);

// Waits until everything handed over so far has been released (tests and benchmarks).
void drainReleases();

} // namespace tw
