// Replays a corpus through a fuzz target without libFuzzer: every file of each directory given (and
// every file given) goes through LLVMFuzzerTestOneInput once. Used by CTest as fuzz_replay_<target>.
// The inputs run on a thread with a 2 MiB stack, a quarter of Linux's usual 8 MiB, so that recursion
// on the nesting depth of an input crashes on small corpus files.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <pthread.h>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kStackBytes = std::size_t{2} << 20;

struct Job {
    int argc;
    char** argv;
    int status = 2;
};

int replay(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
        return 2;
    }
    std::vector<fs::path> files;
    for (int a = 1; a < argc; ++a) {
        const fs::path arg = argv[a];
        std::error_code ec;
        if (fs::is_directory(arg, ec)) {
            for (const auto& entry : fs::directory_iterator(arg, ec))
                if (entry.is_regular_file())
                    files.push_back(entry.path());
        } else if (fs::is_regular_file(arg, ec)) {
            files.push_back(arg);
        } else {
            std::fprintf(stderr, "%s: not a file or directory\n", arg.c_str());
            return 2;
        }
    }
    if (files.empty()) {
        std::fprintf(stderr, "no corpus files found: an empty corpus proves nothing\n");
        return 2;
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
        std::ifstream in(f, std::ios::binary);
        if (!in) {
            std::fprintf(stderr, "%s: cannot read\n", f.c_str());
            return 2;
        }
        const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        std::fprintf(stderr, "replay %s (%zu bytes)\n", f.filename().c_str(), bytes.size());
        // A copy in its own allocation, so AddressSanitizer sees reads past the end of the input.
        std::vector<std::uint8_t> input(bytes.begin(), bytes.end());
        LLVMFuzzerTestOneInput(input.empty() ? nullptr : input.data(), input.size());
    }
    std::printf("replayed %zu inputs\n", files.size());
    return 0;
}

void* runJob(void* arg)
{
    auto* job = static_cast<Job*>(arg);
    job->status = replay(job->argc, job->argv);
    return nullptr;
}

} // namespace

int main(int argc, char** argv)
{
    Job job{argc, argv};
    pthread_attr_t attr;
    pthread_t thread;
    if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, kStackBytes) != 0
        || pthread_create(&thread, &attr, runJob, &job) != 0) {
        std::fprintf(stderr, "cannot start the replay thread\n");
        return 2;
    }
    pthread_join(thread, nullptr);
    pthread_attr_destroy(&attr);
    return job.status;
}
