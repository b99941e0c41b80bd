#pragma once
// Saving files so that a failure never destroys what was there: write a temporary file beside
// the target, flush it to disk, then rename it over the target (POSIX rename is atomic).

#include "error.h"

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include <sys/types.h>

namespace tw {

// The system calls a save uses; tests replace `write` to fail midway.
struct FileWriter {
    std::function<ssize_t(int fd, const void* data, std::size_t size)> write; // default ::write
};

// Replaces path's contents with data atomically. A target that exists but is not a regular file
// (/dev/full, a FIFO) is written in place, since renaming over it would replace the device node.
// Errors name the path and the system's reason; on failure the old file is untouched and no
// temporary file is left behind.
[[nodiscard]] Status saveFileAtomically(const std::string& path, std::string_view data, const FileWriter& writer = {});

} // namespace tw
