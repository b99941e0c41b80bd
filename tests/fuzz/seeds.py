#!/usr/bin/env python3
# Writes the seed corpus of every fuzz target into tests/fuzz/corpus/<target>/ (run from anywhere).
# Tiny synthetic tokenizers only: never GPT-2's real files. Crash regressions are kept by hand as
# corpus/<target>/regress-*; this script does not touch them.
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "corpus")


def bytes_to_unicode():
    # GPT-2's encoder.py table: printable bytes map to themselves, the others to U+0100 onwards.
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


B2U = bytes_to_unicode()


def show(bs):
    return "".join(B2U[b] for b in bs)


def write(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def merges_for(words):
    # Left-to-right merges that build each word from bytes: ((left, right), ...), in order.
    out, have = [], set()
    for w in words:
        cur = w[:1]
        for k in range(1, len(w)):
            nxt = w[: k + 1]
            if nxt not in have:
                out.append((cur, w[k : k + 1]))
                have.add(nxt)
            cur = nxt
    return out


def tiny_tokenizer(words, eot=True, gpt2_byte_order=True):
    # (vocab: display form → id, merges: [(left display, right display)]) of a byte-level BPE.
    order = list(B2U.keys()) if gpt2_byte_order else list(range(256))
    vocab = {show(bytes([b])): i for i, b in enumerate(order)}
    merges = []
    for l, r in merges_for(words):
        vocab[show(l + r)] = len(vocab)
        merges.append((show(l), show(r)))
    if eot:
        vocab["<|endoftext|>"] = len(vocab)
    return vocab, merges


TEXTS = {
    "dante": open(os.path.join(HERE, "..", "..", "resources", "text", "inferno-canto1-it.txt"), "rb").read()[:700],
    "english": b"In the middle of the journey of our life I found myself within a dark wood.\n",
    "contractions": b"I'm sure you've seen it; they'll say it's what we'd done, isn't it? 'S 'T 'RE",
    "numbers": b"12345 3.14159 -42 1,000,000 0x1F 2024-05-01 \xe2\x85\xa7 \xd9\xa3",
    "spaces": b"a  b   c\t\td \r\n  \n\n\n   trailing   \t",
    "emoji": "tokens 🧠🔥 go ✨ to 👩‍👩‍👧 the wire 🚀".encode(),
    "cjk": "人生の旅の途中で 我在人生旅途的中途 인생길 한중간에서".encode(),
    "mixed": "Ωμέγα Кириллица עברית العربية हिन्दी ไทย".encode(),
    "combining": "e\u0301 n\u0303 a\u0308\u0301 Z\u0351\u0352\u0353".encode(),
    "eot": b"first document<|endoftext|>second document <|endoftext|><|endoftext|>",
    "invalid": b"ok \xff\xfe bad \xc0\xaf overlong \xed\xa0\x80 surrogate \xf4\x90\x80\x80 big \xe2\x82",
    "nul": b"nul\x00inside\x00\x00 and at the end\x00",
    "repeat": b"a" * 300 + b" " + b"ab" * 100,
    "punct": b"!!!??? ... --- ((())) [[]] {{}} @#$%^&*~`|\\/ '\"",
    "allbytes": bytes(range(256)),
    "code": b"def f(x):\n    return x**2  # square\n\nif __name__ == '__main__':\n\tprint(f(3))\n",
    "empty": b"",
    "one": b"x",
    "newline": b"\n",
    "space": b" ",
    "nbsp": "a\u00a0b\u2007c\u202fd\u3000e\u2028f".encode(),
}


def gpt2_roundtrip():
    for name, data in TEXTS.items():
        write("gpt2_roundtrip", name, data)


def utf8():
    cases = dict(TEXTS)
    cases.update({
        "bom": b"\xef\xbb\xbfhello",
        "four-byte": "𝄞 𐍈 🜁".encode(),
        "stray-cont": b"\x80\x81abc",
        "overlong-2": b"\xc1\xbf",
        "overlong-3": b"\xe0\x80\xaf",
        "overlong-4": b"\xf0\x80\x80\xaf",
        "surrogate": b"\xed\xbf\xbf",
        "too-large": b"\xf4\x90\x80\x80\xf5\x80",
        "never": b"\xf8\x88\x80\x80\x80\xfe\xff",
        "truncated-end": b"abc\xe2\x82",
        "truncated-mid": b"abc\xe2\x82d\xf0\x9f\x98e",
        "line3": b"one\ntwo\nthr\xffee\n",
        "crlf": b"a\r\nb\r\n\xc3",
        "max": "\U0010ffff\ud7ff\ue000".encode("utf-8", "surrogatepass"),
    })
    for name, data in cases.items():
        write("utf8", name, data)


def hf_json(vocab, merges, pre=None, merge_style="array", added=True, extra=None):
    root = {
        "version": "1.0",
        "added_tokens": ([{"id": vocab["<|endoftext|>"], "content": "<|endoftext|>", "special": True}]
                         if added and "<|endoftext|>" in vocab else []),
        "pre_tokenizer": pre if pre is not None else {"type": "ByteLevel", "add_prefix_space": False},
        "model": {
            "type": "BPE",
            "vocab": vocab,
            "merges": [[l, r] if merge_style == "array" else l + " " + r for l, r in merges],
        },
    }
    if extra:
        extra(root)
    return json.dumps(root, ensure_ascii=False, separators=(",", ":"))


def tokenizer_json():
    words = [b" the", b" selva", b"ing", b" di", b"ch\xc3\xa9", b" \xf0\x9f\x9a\x80"]
    v, m = tiny_tokenizer(words)
    write("tokenizer_json", "ok-array", hf_json(v, m))
    write("tokenizer_json", "ok-string-merges", hf_json(v, m, merge_style="string"))
    write("tokenizer_json", "ok-sequence", hf_json(v, m, pre={"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "x"}}, {"type": "ByteLevel", "add_prefix_space": False}]}))
    vb, mb = tiny_tokenizer(words, gpt2_byte_order=False)
    write("tokenizer_json", "ok-byte-order", hf_json(vb, mb))
    vn, mn = tiny_tokenizer([b" the", b"aaaa"], eot=False)
    write("tokenizer_json", "ok-no-eot", hf_json(vn, mn, added=False))
    # <|endoftext|> only in added_tokens, right after the vocabulary.
    va, ma = tiny_tokenizer([b"ab"], eot=False)
    write("tokenizer_json", "ok-eot-added-only", hf_json(va, ma, extra=lambda r: r.__setitem__(
        "added_tokens", [{"id": len(va), "content": "<|endoftext|>"}])))
    write("tokenizer_json", "ok-pretty", json.dumps(json.loads(hf_json(v, m)), indent=2, ensure_ascii=True))
    # Broken ones: each an Error, each a path the loader must walk without crashing.
    good = hf_json(v, m)
    write("tokenizer_json", "bad-truncated", good[: len(good) // 2])
    write("tokenizer_json", "bad-empty", "")
    write("tokenizer_json", "bad-not-object", "[1,2,3]")
    write("tokenizer_json", "bad-model-type", hf_json(v, m, extra=lambda r: r["model"].__setitem__("type", "WordPiece")))
    write("tokenizer_json", "bad-pre", hf_json(v, m, pre={"type": "Whitespace"}))
    write("tokenizer_json", "bad-prefix-space", hf_json(v, m, pre={"type": "ByteLevel", "add_prefix_space": True}))
    write("tokenizer_json", "bad-id-type", hf_json(dict(v, **{"Ġthe": "5"}), m))
    write("tokenizer_json", "bad-id-negative", hf_json(dict(v, **{"Ġthe": -1}), m))
    write("tokenizer_json", "bad-id-twice", hf_json(dict(v, **{"Ġthe": 3}), m))
    write("tokenizer_json", "bad-id-huge", good.replace('"Ġthe":' + str(v["Ġthe"]), '"Ġthe":18446744073709551615'))
    write("tokenizer_json", "bad-id-float", good.replace('"Ġthe":' + str(v["Ġthe"]), '"Ġthe":1e400'))
    write("tokenizer_json", "bad-merge-unknown", hf_json(v, m + [("Ġthe", "zzz")]))
    write("tokenizer_json", "bad-merge-shape", hf_json(v, m, extra=lambda r: r["model"]["merges"].append([1, 2, 3])))
    write("tokenizer_json", "bad-merge-not-token", hf_json(v, m + [("a", "b")]))
    write("tokenizer_json", "bad-missing-byte", hf_json({k: i for i, k in enumerate(list(v)[1:])}, []))
    write("tokenizer_json", "bad-added", hf_json(v, m, extra=lambda r: r.__setitem__("added_tokens", [{"id": 9999, "content": "<|endoftext|>"}])))
    write("tokenizer_json", "bad-added-other", hf_json(v, m, extra=lambda r: r.__setitem__("added_tokens", [{"id": 3, "content": "<pad>"}])))
    write("tokenizer_json", "bad-deep", '{"model":' + "[" * 2000 + "]" * 2000 + "}")
    write("tokenizer_json", "bad-deep-pre", '{"pre_tokenizer":' + "[" * 2000 + "]" * 2000 + ',"model":{}}')
    write("tokenizer_json", "bad-nul", good[:40] + "\x00" + good[40:])
    write("tokenizer_json", "bad-invalid-utf8", good.encode()[:30] + b"\xff\xfe" + good.encode()[30:])


def gpt2_pair(vocab, merges, header=True, crlf=False):
    enc = json.dumps(vocab, ensure_ascii=False)
    nl = "\r\n" if crlf else "\n"
    bpe = ("#version: 0.2" + nl if header else "") + "".join(l + " " + r + nl for l, r in merges)
    return enc.encode() + b"\x00" + bpe.encode()


def gpt2_files():
    words = [b" the", b" selva", b"ing", b"ch\xc3\xa9", b"\n\n", b"  "]
    v, m = tiny_tokenizer(words)
    write("gpt2_files", "ok", gpt2_pair(v, m))
    write("gpt2_files", "ok-crlf", gpt2_pair(v, m, crlf=True))
    write("gpt2_files", "ok-no-header", gpt2_pair(v, m, header=False))
    write("gpt2_files", "ok-escaped", json.dumps(v, ensure_ascii=True).encode() + b"\x00" + gpt2_pair(v, m).split(b"\x00", 1)[1])
    write("gpt2_files", "ok-pretty", json.dumps(v, indent=1, ensure_ascii=False).encode() + b"\x00" + gpt2_pair(v, m).split(b"\x00", 1)[1])
    vn, mn = tiny_tokenizer([b"aa", b"aaaa", b"aaaaaaaa"], eot=False)
    write("gpt2_files", "ok-no-eot", gpt2_pair(vn, mn))
    vb, mb = tiny_tokenizer(words, gpt2_byte_order=False)
    write("gpt2_files", "ok-byte-order", gpt2_pair(vb, mb))
    write("gpt2_files", "ok-bytes-only", gpt2_pair(tiny_tokenizer([], eot=False)[0], []))
    # Broken ones.
    write("gpt2_files", "bad-no-nul", json.dumps(v).encode())
    write("gpt2_files", "bad-empty", b"")
    write("gpt2_files", "bad-only-nul", b"\x00")
    write("gpt2_files", "bad-missing-byte", gpt2_pair({k: i for i, k in enumerate(list(v)[1:])}, []))
    write("gpt2_files", "bad-gap", gpt2_pair(dict(v, **{"Ġthe": 5000}), m))
    write("gpt2_files", "bad-dup-id", gpt2_pair(dict(v, **{"Ġthe": 3}), m))
    write("gpt2_files", "bad-id-string", gpt2_pair(dict(v, **{"Ġthe": "3"}), m))
    write("gpt2_files", "bad-negative", gpt2_pair(dict(v, **{"Ġthe": -1}), m))
    write("gpt2_files", "bad-not-alphabet", gpt2_pair(dict(v, **{" raw space": len(v)}), m))
    write("gpt2_files", "bad-merge-unknown", gpt2_pair(v, m + [("Ġthe", "zz")]))
    write("gpt2_files", "bad-merge-not-token", gpt2_pair(v, m + [("a", "b")]))
    write("gpt2_files", "bad-merge-shape", gpt2_pair(v, m + [("a b", "c")]))
    enc = gpt2_pair(v, m).split(b"\x00", 1)[0]
    write("gpt2_files", "bad-truncated", enc[: len(enc) // 2] + b"\x00")
    write("gpt2_files", "bad-array", b"[\"a\", 1]\x00")
    write("gpt2_files", "bad-deep", b"[" * 2000 + b"]" * 2000 + b"\x00a b\n")


def bpe_image():
    # The first byte: bit 0 clear, 5-byte patches (offset u32 little-endian, byte) of the target's sound
    # image; bit 0 set, the image itself. Bit 1: checksums recomputed before loading.
    def patch(offset, value):
        return offset.to_bytes(4, "little") + bytes([value])
    write("bpe_image", "sound", b"\x00")
    write("bpe_image", "sound-resealed", b"\x02")
    write("bpe_image", "magic", b"\x00" + patch(7, ord("X")))
    write("bpe_image", "version", b"\x00" + patch(8, 2))
    write("bpe_image", "version-resealed", b"\x02" + patch(8, 2))
    write("bpe_image", "vocab-resealed", b"\x02" + patch(184, 0xFF) + patch(185, 0xFF))
    write("bpe_image", "table-byte", b"\x00" + patch(300, 0xFF))
    write("bpe_image", "table-bytes-resealed", b"\x02" + b"".join(patch(256 + 97 * k, k) for k in range(40)))
    write("bpe_image", "raw-empty", b"\x01")
    write("bpe_image", "raw-header-only", b"\x03TWBPEIMG" + bytes(200))


if __name__ == "__main__":
    gpt2_roundtrip()
    utf8()
    tokenizer_json()
    gpt2_files()
    bpe_image()
