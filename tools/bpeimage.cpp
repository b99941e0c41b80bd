// Builds a vocabulary's tables once, at build time (issue 42):
//   tokenwire_bpeimage OUT.bin gpt2 ENCODER.json VOCAB.bpe
// parses the text files with core's own parser (core/text/bpe.cpp, compiled into this tool), writes
// BpeModel::toImage() recording each file's sha256 to OUT.bin, and reads it back with
// BpeModel::fromImage() (every check) before it counts as built. tools/embed.cpp then compiles the
// image into core, where gpt2() views it instead of parsing the text at each start.
#include "text/bpe.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

// SHA-256 of bytes as 64 lowercase hex digits (FIPS 180-4, section 6.2).
std::string sha256Hex(const std::string& bytes)
{
    static constexpr std::uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
        0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
        0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
        0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
        0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
        0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    std::uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    std::string msg = bytes;
    const std::uint64_t bits = std::uint64_t(bytes.size()) * 8;
    msg += char(0x80);
    while (msg.size() % 64 != 56)
        msg += char(0);
    for (int s = 56; s >= 0; s -= 8)
        msg += char(bits >> s);
    auto rotr = [](std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); };
    for (std::size_t block = 0; block < msg.size(); block += 64) {
        std::uint32_t w[64];
        for (int t = 0; t < 16; ++t)
            w[t] = std::uint32_t(std::uint8_t(msg[block + 4 * t])) << 24 | std::uint32_t(std::uint8_t(msg[block + 4 * t + 1])) << 16
                | std::uint32_t(std::uint8_t(msg[block + 4 * t + 2])) << 8 | std::uint32_t(std::uint8_t(msg[block + 4 * t + 3]));
        for (int t = 16; t < 64; ++t) {
            const std::uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
            const std::uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
            w[t] = w[t - 16] + s0 + w[t - 7] + s1;
        }
        std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
        for (int t = 0; t < 64; ++t) {
            const std::uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[t] + w[t];
            const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            hh = g;
            g = f;
            f = e;
            e = d + t1;
            d = c;
            c = b;
            b = a;
            a = t1 + t2;
        }
        const std::uint32_t add[8] = {a, b, c, d, e, f, g, hh};
        for (int i = 0; i < 8; ++i)
            h[i] += add[i];
    }
    static const char* digits = "0123456789abcdef";
    std::string hex;
    for (std::uint32_t word : h)
        for (int s = 28; s >= 0; s -= 4)
            hex += digits[(word >> s) & 15];
    return hex;
}

bool readFile(const char* path, std::string& out)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return false;
    out.assign(std::istreambuf_iterator<char>(in), {});
    return !in.bad();
}

int fail(const std::string& message)
{
    std::fprintf(stderr, "tokenwire_bpeimage: %s\n", message.c_str());
    return 1;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 5 || std::string(argv[2]) != "gpt2") {
        std::fprintf(stderr, "usage: tokenwire_bpeimage OUT.bin gpt2 ENCODER.json VOCAB.bpe\n");
        return 2;
    }
    std::string encoder, vocab;
    if (!readFile(argv[3], encoder))
        return fail(std::string("cannot read ") + argv[3]);
    if (!readFile(argv[4], vocab))
        return fail(std::string("cannot read ") + argv[4]);
    const std::array<std::string, 2> sha = {sha256Hex(encoder), sha256Hex(vocab)};
    const std::array<std::string_view, 2> sources = {sha[0], sha[1]};
    auto model = tw::text::BpeModel::fromGpt2Files(encoder, vocab, "GPT-2");
    if (!model)
        return fail(model.error().toString());
    auto image = model->toImage(sources);
    if (!image)
        return fail(image.error().toString());
    // Read back with every check of the run-time loader (a std::string's buffer is aligned for it).
    const auto* bytes = reinterpret_cast<const unsigned char*>(image->data());
    auto back = tw::text::BpeModel::fromImage({bytes, image->size()}, sources, "GPT-2");
    if (!back)
        return fail("the image just written does not load: " + back.error().toString());
    if (back->vocabSize() != model->vocabSize() || back->merges() != model->merges())
        return fail("the image just written does not hold the parsed vocabulary and merges");
    std::ofstream out(argv[1], std::ios::binary | std::ios::trunc);
    out << image.value();
    if (!out.flush())
        return fail(std::string("cannot write ") + argv[1]);
    std::printf("tokenwire_bpeimage: %s, %zu ids, %zu merges, %zu bytes (encoder.json %s, vocab.bpe %s)\n", argv[1],
                model->vocabSize(), model->merges().size(), image->size(), sha[0].substr(0, 12).c_str(), sha[1].substr(0, 12).c_str());
    return 0;
}
