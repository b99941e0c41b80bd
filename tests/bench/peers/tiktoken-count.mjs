// Whole-process peer of `tokenwire-cli tokenize --count FILE|-`: read, load GPT-2, encode, print the count.
import { readFileSync } from "node:fs";
import { get_encoding } from "tiktoken";

const file = process.argv[2];
if (!file) {
  console.error("usage: node tiktoken-count.mjs FILE|-");
  process.exit(2);
}
const text = readFileSync(file === "-" ? 0 : file, "utf8");
const enc = get_encoding("gpt2");
console.log(enc.encode(text, [], []).length);
enc.free();
