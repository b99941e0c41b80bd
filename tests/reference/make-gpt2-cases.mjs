// Writes tests/data/gpt2_cases.json: GPT-2 token ids of strings chosen to break tokenizers, as
// given by the npm package tiktoken (the Rust tiktoken compiled to WebAssembly; encoding "gpt2",
// encode(text, [], []) so <|endoftext|> is plain text). Run: npm install && node make-gpt2-cases.mjs
// (js-tiktoken differs from it on U+0085 and U+FEFF: it is not the reference.)
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { get_encoding } = require('tiktoken');
const tiktokenVersion = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'node_modules/tiktoken/package.json'), 'utf8')).version;

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');

// A 10,000-character word (a long piece: exercises the O(n log n) merge path).
const longWord = 'antidisestablishmentarianism'.repeat(400).slice(0, 10000);

const cases = [
  ['contractions', "I'm sure it's what we'd've done; they'll say you're right, I've seen't"],
  ['contractions_upper', "I'M SURE IT'S WHAT WE'D DO, THEY'LL SAY YOU'RE RIGHT, I'VE"],
  ['contractions_mixed', "don't DON'T Don'T 's 'S ''s '' 'x 'LL 'Ll"],
  ['contractions_typographic', 'it’s it\'s IT’S we’ll'],
  ['space_runs', 'a  b   c    d     e'],
  ['newline_runs', 'line1\n\n\nline2\n\n\n\nline3\n'],
  ['trailing_spaces', 'trailing   '],
  ['leading_spaces', '   leading'],
  ['only_spaces', '     '],
  ['only_newlines', '\n\n\n'],
  ['tabs', '\tindent\t\tx \t y\t'],
  ['crlf', 'one\r\ntwo\r\n\r\nthree\r\n  \r\n'],
  ['mixed_whitespace_run', 'x \t \n \u00A0\u3000 y \n\t'],
  ['u0085_next_line', 'next\u0085line \u0085 x\u0085\u0085 y \u0085'],
  ['ufeff_bom', '\uFEFFbom start and\uFEFFinside \uFEFF end \uFEFF\uFEFF'],
  ['u180e_mongolian_vowel_separator', 'mongolian\u180Evowel \u180E x\u180E\u180E y \u180E\'s a\u180E'],
  ['u00a0_nbsp', 'non\u00A0breaking \u00A0 space\u00A0\u00A0 x\u00A0'],
  ['unicode_spaces', 'en\u2002em\u2003thin\u2009hair\u200A ideographic\u3000narrow\u202Fmath\u205Fogham\u1680 quad\u2000\u2001 \u2002 \u3000\u3000end'],
  ['line_paragraph_separators', 'a\u2028b\u2029c \u2028\u2029 d'],
  ['spaces_before_symbols', '  !  😀\n\n! \u00A0! \u3000中'],
  ['digits', '0 1 12 123 1234 12345 123456789012 3.14159 1,000,000 1e-10 0x1F 2024-06-01'],
  ['number_formats', '$1,234.56 €7.890,12 50% 3/4 ½ ² ³ ¼ ١٢٣ ٤٥٦ १२३ ๑๒๓ Ⅻ ①②'],
  ['letters_and_digits', 'abc123def 456ghi a1b2c3 1st 2nd 3rd 10th'],
  ['punctuation_runs', '!!!??? ... --- *** ### @@@ <<>> ;;; :-) (-: !?!? ,,, """ \'\'\' ```'],
  ['italian_accents', 'perché città più così è È à ò ù ì ó Perché CITTÀ'],
  ['italian_apostrophes', 'ch’i’ fui, l’amor che move il sole e l’altre stelle; dov’è l\'anima d\'un \'l sol'],
  ['emoji_skin_tones', '👍🏽 👋🏿 hello👍🏻 👍 🏽'],
  ['emoji_zwj_sequences', '👨‍👩‍👧‍👦 🏳️‍🌈 👩🏽‍💻 ❤️‍🔥'],
  ['cjk', '中文分词测试，日本語のテキスト、한국어 텍스트。'],
  ['combining_marks', 'e\u0301 a\u0300 n\u0303o Zalgo z\u0351\u0352\u0353a \u0301 x\u0301\u0301'],
  ['zero_width', 'a\u200Db\u200Cc \u200D \u200B d\u200B'],
  ['unicode15_letters', 'Kawi \u{11F04}\u{11F05}\u{11F06} x\u{11F07} ext-H \u{31350}\u{31351} cyr \u{1E030}\u{1E031} \u{11F04}\'s \u{31350}\'s'],
  ['unicode15_digits', 'Kawi digits \u{11F50}\u{11F51}\u{11F52} 1\u{11F53} \u{11F50}\'s \u{1D2C0}\u{1D2C1}'],
  ['unicode16_letters', '\u{1C89}\u{1C8A} Garay \u{10D4A}\u{10D4B} Todhri \u{105C0}\u{105C1} ramshorn \u{A7CB}\u{A7CC} \u{1C89}\'s \u{105C0}\'s a\u{A7CB}b'],
  ['unicode16_digits', 'outlined \u{1CCF0}\u{1CCF1} kirat \u{16D70}\u{16D71} garay \u{10D40} \u{1CCF0}\'s 1\u{16D70}'],
  ['unicode17_not_letters', 'sidetic \u{10940}\u{10941} taiyo \u{1E6C0} ext-J \u{323B0} \u{10940}\'s \u{1E6C0}\'s \u{323B0}\'s'],
  ['scripts', 'Привет мир! Γειά σου Κόσμε! مرحبا بالعالم שלום עולם नमस्ते दुनिया'],
  ['control_chars', '\u0000nul\u0001\u001f\u007f bell\u0007 \u001b[0m \u000b\u000c'],
  ['endoftext_plain', 'Hello<|endoftext|>World <|endoftext|> <|endoftext|><|endoftext|>'],
  ['empty', ''],
  ['long_word_10000', longWord],
  ['long_letter_run', 'a'.repeat(3000)],
  ['inferno_canto1_it', readFileSync(join(root, 'resources/text/inferno-canto1-it.txt'), 'utf8')],
  ['inferno_canto1_en', readFileSync(join(root, 'resources/text/inferno-canto1-en.txt'), 'utf8')],
];

const enc = get_encoding('gpt2');
const out = {
  source: `npm tiktoken ${tiktokenVersion}, get_encoding("gpt2").encode(text, [], [])`,
  generator: 'tests/reference/make-gpt2-cases.mjs',
  cases: cases.map(([name, text]) => ({
    name,
    n_bytes: Buffer.byteLength(text, 'utf8'),
    text,
    ids: Array.from(enc.encode(text, [], [])),
  })),
};
enc.free();
const names = new Set(out.cases.map((c) => c.name));
if (names.size !== out.cases.length) throw new Error('duplicate case names');
writeFileSync(join(root, 'tests/data/gpt2_cases.json'), JSON.stringify(out, null, 1) + '\n');
console.log(`wrote ${out.cases.length} cases`);
