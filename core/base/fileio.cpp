#include "fileio.h"

#include <cerrno>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tw {

namespace {

Error systemError(const std::string& path, const std::string& what, int err)
{
    return makeError(what + ": " + std::strerror(err), Location{path, 0, 0, {}, {}});
}

// Writes all of data to fd, retrying short writes and EINTR; returns 0 or an errno value.
int writeAll(int fd, std::string_view data, const FileWriter& writer)
{
    std::size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = writer.write ? writer.write(fd, data.data() + done, data.size() - done)
                                       : ::write(fd, data.data() + done, data.size() - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (n == 0)
            return EIO;
        done += static_cast<std::size_t>(n);
    }
    return 0;
}

std::string directoryOf(const std::string& path)
{
    const auto slash = path.rfind('/');
    if (slash == std::string::npos)
        return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

} // namespace

Status saveFileAtomically(const std::string& path, std::string_view data, const FileWriter& writer)
{
    if (path.empty())
        return makeError("cannot save: the file name is empty");
    struct stat target {};
    const bool exists = ::stat(path.c_str(), &target) == 0;
    if (exists && S_ISDIR(target.st_mode))
        return makeError("cannot save: is a directory, not a file", Location{path, 0, 0, {}, {}});

    if (exists && !S_ISREG(target.st_mode)) {
        // A device or FIFO: write in place (renaming would replace the node itself).
        const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
        if (fd < 0)
            return systemError(path, "cannot save", errno);
        const int err = writeAll(fd, data, writer);
        const int closeErr = ::close(fd) == 0 ? 0 : errno;
        if (err || closeErr)
            return systemError(path, "cannot save", err ? err : closeErr);
        return Ok{};
    }

    std::string tmpl = directoryOf(path) + "/." + path.substr(path.rfind('/') + 1) + ".tmp-XXXXXX";
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    const int fd = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd < 0)
        return systemError(path, "cannot save (creating a temporary file beside it)", errno);
    const std::string tmp(name.data());

    // Keep the permissions of the file being replaced; a new file gets 0666 minus the umask.
    mode_t mode = 0;
    if (exists) {
        mode = target.st_mode & 07777;
    } else {
        const mode_t mask = ::umask(0);
        ::umask(mask);
        mode = 0666 & ~mask;
    }
    int err = ::fchmod(fd, mode) == 0 ? 0 : errno;
    if (!err)
        err = writeAll(fd, data, writer);
    if (!err && ::fsync(fd) != 0)
        err = errno;
    if (::close(fd) != 0 && !err)
        err = errno;
    if (!err && ::rename(tmp.c_str(), path.c_str()) != 0)
        err = errno;
    if (err) {
        ::unlink(tmp.c_str());
        return systemError(path, "cannot save", err);
    }
    return Ok{};
}

} // namespace tw
