// Encoding throughput of the npm tiktoken package (Rust tiktoken in WebAssembly), GPT-2 encoding.
// Usage: node tiktoken-encode.mjs FILE [runs]   (the peer of bench_tokenizer; same output lines)
import { readFileSync } from "node:fs";
import { get_encoding } from "tiktoken";

const [file, runsArg] = process.argv.slice(2);
if (!file) {
  console.error("usage: node tiktoken-encode.mjs FILE [runs]");
  process.exit(2);
}
const runs = Number(runsArg ?? 10);
const bytes = readFileSync(file);
const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes); // the bench text must be valid UTF-8

const tLoad = process.hrtime.bigint();
const enc = get_encoding("gpt2");
const loadSeconds = Number(process.hrtime.bigint() - tLoad) / 1e9;

const rates = [];
let tokens = 0;
for (let r = 0; r < runs; ++r) {
  const t0 = process.hrtime.bigint();
  const ids = enc.encode(text, [], []); // special tokens as plain text, like TokenWire
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  tokens = ids.length;
  rates.push(bytes.length / 1e6 / seconds);
}
enc.free();
rates.sort((a, b) => a - b);
const median = rates.length % 2 ? rates[(rates.length - 1) / 2] : (rates[rates.length / 2 - 1] + rates[rates.length / 2]) / 2;
const peakMb = process.resourceUsage().maxRSS / 1024; // maxRSS is in KiB
console.log(`tiktoken (npm, wasm): ${bytes.length} bytes, ${tokens} tokens, ${runs} runs, encoding loaded in ${(loadSeconds * 1e3).toFixed(1)} ms`);
console.log(`  median ${median.toFixed(2)} MB/s, min ${rates[0].toFixed(2)} MB/s, max ${rates[rates.length - 1].toFixed(2)} MB/s, peak RSS ${peakMb.toFixed(1)} MiB`);
console.log(`RESULT name=tiktoken median_mbps=${median.toFixed(3)} min_mbps=${rates[0].toFixed(3)} max_mbps=${rates[rates.length - 1].toFixed(3)} tokens=${tokens} peak_rss_mib=${peakMb.toFixed(1)}`);
