#!/usr/bin/env python3
# Writes the input files of the bad-input catalog (manifest.json lists the cases and the messages).
# Kept so the files can be remade; tiny synthetic tokenizers only, never GPT-2's real files.
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def bytes_to_unicode():
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


def write(name, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


# A small valid tokenizer: the 256 bytes, "Ġt" "Ġth" "Ġthe" "in" "ing", <|endoftext|> (id 262).
vocab = {show(bytes([b])): i for i, b in enumerate(B2U)}
merges = [("Ġ", "t"), ("Ġt", "h"), ("Ġth", "e"), ("i", "n"), ("in", "g")]
for l, r in merges:
    vocab[l + r] = len(vocab)
vocab["<|endoftext|>"] = len(vocab)


def enc(v, **kw):
    return json.dumps(v, ensure_ascii=False, **kw)


def bpe(ms, header=True):
    return ("#version: 0.2\n" if header else "") + "".join(l + " " + r + "\n" for l, r in ms)


def hf(v=None, ms=None, pre=None, model_extra=None, root_extra=None, drop=()):
    v = vocab if v is None else v
    ms = merges if ms is None else ms
    model = {"type": "BPE", "vocab": v, "merges": [[l, r] for l, r in ms]}
    model.update(model_extra or {})
    root = {"version": "1.0",
            "added_tokens": [{"id": v.get("<|endoftext|>", 262), "content": "<|endoftext|>", "special": True}],
            "pre_tokenizer": pre if pre is not None else {"type": "ByteLevel", "add_prefix_space": False},
            "model": model}
    root.update(root_extra or {})
    for k in drop:
        root.pop(k, None)
    return json.dumps(root, ensure_ascii=False, indent=1)


# GPT-2 encoder.json + vocab.bpe.
write("gpt2-good.encoder.json", enc(vocab))
write("gpt2-good.vocab.bpe", bpe(merges))
write("gpt2-empty.encoder.json", "")
write("gpt2-blank.encoder.json", " \n\t\n")
good = enc(vocab, indent=1)
write("gpt2-truncated.encoder.json", good[: good.index('"Ġt"')])
write("gpt2-array.encoder.json", '["!", "\\"", "#"]\n')
write("gpt2-id-string.encoder.json", enc(dict(vocab, **{"Ġthe": "258"}), indent=1))
write("gpt2-id-negative.encoder.json", enc(dict(vocab, **{"Ġthe": -3}), indent=1))
write("gpt2-id-float.encoder.json", enc(dict(vocab, **{"Ġthe": 258.0}), indent=1))
write("gpt2-id-huge.encoder.json", good.replace('"Ġthe": 258', '"Ġthe": 18446744073709551615'))
write("gpt2-id-overflow.encoder.json", good.replace('"Ġthe": 258', '"Ġthe": 1e400'))
write("gpt2-id-nan.encoder.json", good.replace('"Ġthe": 258', '"Ġthe": NaN'))
write("gpt2-id-gap.encoder.json", enc(dict(vocab, **{"Ġthe": 300}), indent=1))
write("gpt2-id-twice.encoder.json", enc(dict(vocab, **{"Ġthe": 3}), indent=1))
# The same token twice: "A" and its escape "\u0041" with another id (JSON keeps one key, the last).
write("gpt2-token-twice.encoder.json", good.replace('"Ġthe": 258', '"Ġthe": 258,\n "\\u0041": 262'))
write("gpt2-not-alphabet.encoder.json", enc(dict(vocab, **{"a b": 262}), indent=1))
write("gpt2-missing-byte.encoder.json", enc({k: i for i, k in enumerate(list(vocab)[1:])}, indent=1))
write("gpt2-invalid-utf8.encoder.json", good.encode().replace("\"Ġthe\"".encode(), b"\"\xc4\xa0th\xff\""))
write("gpt2-nul.encoder.json", good.encode().replace("\"Ġthe\"".encode(), b"\"\xc4\xa0th\x00e\""))
write("gpt2-unknown-token.vocab.bpe", bpe(merges + [("Ġthe", "zz")]))
write("gpt2-not-a-token.vocab.bpe", bpe(merges + [("a", "b")]))
write("gpt2-three-parts.vocab.bpe", bpe(merges[:2]) + "Ġth e x\n")
write("gpt2-version-late.vocab.bpe", "i n\n#version: 0.2\n")
write("gpt2-invalid-utf8.vocab.bpe", bpe(merges).encode() + b"\xff \xfe\n")
write("gpt2-nul.vocab.bpe", bpe(merges).encode() + b"i \x00\n")

# Hugging Face tokenizer.json.
write("hf-good.json", hf())
write("hf-empty.json", "")
g = hf()
write("hf-truncated.json", g[: g.index('"merges"')])
write("hf-not-object.json", "[1, 2, 3]\n")
write("hf-no-model.json", hf(drop=("model",)))
write("hf-model-string.json", hf(root_extra={"model": "BPE"}))
write("hf-wordpiece.json", hf(model_extra={"type": "WordPiece"}))
write("hf-pre-whitespace.json", hf(pre={"type": "Whitespace"}))
write("hf-prefix-space.json", hf(pre={"type": "ByteLevel", "add_prefix_space": True}))
write("hf-prefix-space-string.json", hf(pre={"type": "ByteLevel", "add_prefix_space": "yes"}))
write("hf-no-vocab.json", hf(model_extra={"vocab": None}))
write("hf-id-string.json", hf(v=dict(vocab, **{"Ġthe": "258"})))
write("hf-id-negative.json", hf(v=dict(vocab, **{"Ġthe": -3})))
write("hf-id-bool.json", hf(v=dict(vocab, **{"Ġthe": True})))
write("hf-id-huge.json", g.replace('"Ġthe": 258', '"Ġthe": 18446744073709551615'))
write("hf-id-overflow.json", g.replace('"Ġthe": 258', '"Ġthe": 1e400'))
write("hf-id-nan.json", g.replace('"Ġthe": 258', '"Ġthe": NaN'))
write("hf-id-infinity.json", g.replace('"Ġthe": 258', '"Ġthe": -Infinity'))
write("hf-id-twice.json", hf(v=dict(vocab, **{"Ġthe": 3})))
write("hf-token-twice.json", g.replace('"Ġthe": 258', '"Ġthe": 258,\n  "\\u0041": 262'))
write("hf-missing-byte.json", hf(v={k: i for i, k in enumerate(list(vocab)[1:])}, ms=[]))
write("hf-merge-unknown.json", hf(ms=merges + [("Ġthe", "zz")]))
write("hf-merge-not-a-token.json", hf(ms=merges + [("a", "b")]))
write("hf-merge-shape.json", hf(model_extra={"merges": [["Ġ", "t"], ["Ġt", "h", "e"]]}))
write("hf-merge-string-shape.json", hf(model_extra={"merges": ["Ġ t", "Ġt h e"]}))
write("hf-added-not-array.json", hf(root_extra={"added_tokens": {"id": 262}}))
write("hf-added-other.json", hf(root_extra={"added_tokens": [{"id": 263, "content": "<pad>"}]}))
write("hf-added-gap.json", hf(root_extra={"added_tokens": [{"id": 300, "content": "<|endoftext|>"}]}))
write("hf-added-negative.json", hf(root_extra={"added_tokens": [{"id": -1, "content": "<|endoftext|>"}]}))
write("hf-added-taken.json", hf(root_extra={"added_tokens": [{"id": 258, "content": "<|endoftext|>"}]}))
write("hf-invalid-utf8.json", g.encode().replace("\"Ġthe\"".encode(), b"\"\xc4\xa0th\xff\""))
write("hf-nul.json", g.encode().replace("\"Ġthe\"".encode(), b"\"\xc4\xa0th\x00e\""))
write("hf-nul-escaped.json", g.replace('"Ġthe": 258', '"Ġth\\u0000e": 258'))
write("hf-unknown-fields.json", hf(root_extra={"comment": "fields TokenWire does not know are ignored",
                                               "normalizer": {"type": "NFC"}},
                                   model_extra={"dropout": None, "future_option": [1, 2, 3]}))

# Texts for the UTF-8 check and the trainer.
write("text-good.txt", "Nel mezzo del cammin di nostra vita\nmi ritrovai per una selva oscura,\n")
write("text-invalid-byte.txt", b"Nel mezzo\nmi ritr\xc3\xb2vai \xff per\n")
write("text-stray-continuation.txt", b"\x80abc")
write("text-overlong.txt", b"line one\nline two\nslash \xc0\xaf\n")
write("text-surrogate.txt", "caff\u00e8 \n".encode() + b"\xed\xa0\x80\n")
write("text-truncated.txt", "la diritta via \u00e8".encode() + b" smarrit\xe2\x82")
write("text-too-large.txt", b"\xf4\x90\x80\x80")
write("text-never-valid.txt", b"\t\xfe")
write("text-nul.txt", b"NUL\x00bytes\x00are valid UTF-8\n")
write("text-empty.txt", b"")
