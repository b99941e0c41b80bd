// Finds which Unicode version tiktoken's regex uses (source of core/text/unicodeextra.h).
// For every code point X, tiktoken ("gpt2") encodes X + "'s": the last id is 338 ("'s") when X is a
// letter, number or white space for its regex (X is a piece of its own), and 82 ("s") when X
// joined the punctuation run "X'". The result is compared with Node's ICU (\p{L}, \p{N},
// \p{White_Space}; Node 20 ships Unicode 17): code points ICU has as L/N that tiktoken does not
// are newer than tiktoken's tables. Run: node classify-unicode.mjs
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { get_encoding } = require('tiktoken');
const enc = get_encoding('gpt2');

const isLN = /^[\p{L}\p{N}\p{White_Space}]$/u;
const hex = (c) => c.toString(16).toUpperCase().padStart(4, '0');
const onlyIcu = [];
const onlyTiktoken = [];
const add = (list, c) => {
  const last = list[list.length - 1];
  if (last && last[1] === c - 1) last[1] = c;
  else list.push([c, c]);
};
for (let c = 0; c < 0x110000; ++c) {
  if (c >= 0xd800 && c < 0xe000) continue;
  if (c === 0x20) continue; // " 's" joins the space to the punctuation: not informative
  const s = String.fromCodePoint(c);
  const ids = enc.encode(s + "'s", [], []);
  const tik = ids[ids.length - 1] === 338;
  const icu = isLN.test(s);
  if (icu && !tik) add(onlyIcu, c);
  if (tik && !icu) add(onlyTiktoken, c);
}
enc.free();
console.log(`Unicode in this Node: ${process.versions.unicode}`);
console.log('L/N/White_Space in ICU but not in tiktoken (newer than tiktoken):');
for (const [a, b] of onlyIcu) console.log(`  U+${hex(a)}..U+${hex(b)}`);
console.log('L/N/White_Space in tiktoken but not in ICU:');
for (const [a, b] of onlyTiktoken) console.log(`  U+${hex(a)}..U+${hex(b)}`);
