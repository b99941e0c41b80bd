#pragma once
// Character classes that make PCRE2 10.42 (Unicode 14 tables) cut text exactly as tiktoken does.
//
// Source: measured, not assumed. The npm package tiktoken 1.0.22 (Rust tiktoken in WebAssembly,
// encoding "gpt2") was asked, for every code point X, whether X + "'s" ends with the token "'s"
// (id 338: X is a letter, digit or white space for its regex) or with "s" (id 82: X joined the
// punctuation run). Compared with PCRE2 10.42's \p{L} ∪ \p{N} ∪ \s, tiktoken knows exactly the
// letters and digits added in Unicode 15.0, 15.1 and 16.0 and none of Unicode 17.0 (e.g. Sidetic
// U+10940, Tai Yo U+1E6C0, CJK Extension J U+323B0 are not letters there): its tables are
// Unicode 16.0. No code point PCRE2 classes as L or N is anything else for tiktoken. The split
// of the additions into L and N follows the General_Category of Node 20's ICU (Unicode 17.0).
// The script doing this is tests/reference/classify-unicode.mjs.
//
// White space: Rust regex's \s is the White_Space property, which lacks U+180E MONGOLIAN VOWEL
// SEPARATOR (a format character since Unicode 6.3); PCRE2's \s with UCP still includes it. So the
// pattern spells white space out as kWhiteSpaceClass.

#include <string_view>

namespace tw::text::unicode {

// White_Space (PropList.txt, Unicode 16.0): the members of \s for tiktoken's regex.
inline constexpr std::string_view kWhiteSpaceClass =
    "\\x{9}-\\x{D}\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";

// Letters (General_Category L*) assigned in Unicode 15.0–16.0, absent from PCRE2 10.42's \p{L}.
inline constexpr std::string_view kExtraLetterClass =
    "\\x{1C89}-\\x{1C8A}\\x{A7CB}-\\x{A7CD}\\x{A7DA}-\\x{A7DC}\\x{105C0}-\\x{105F3}"
    "\\x{10D4A}-\\x{10D65}\\x{10D6F}-\\x{10D85}\\x{10EC2}-\\x{10EC4}\\x{1123F}-\\x{11240}"
    "\\x{11380}-\\x{11389}\\x{1138B}\\x{1138E}\\x{11390}-\\x{113B5}\\x{113B7}\\x{113D1}\\x{113D3}"
    "\\x{11BC0}-\\x{11BE0}\\x{11F02}\\x{11F04}-\\x{11F10}\\x{11F12}-\\x{11F33}\\x{1342F}"
    "\\x{13441}-\\x{13446}\\x{13460}-\\x{143FA}\\x{16100}-\\x{1611D}\\x{16D40}-\\x{16D6C}\\x{18CFF}"
    "\\x{1B132}\\x{1B155}\\x{1DF25}-\\x{1DF2A}\\x{1E030}-\\x{1E06D}\\x{1E4D0}-\\x{1E4EB}"
    "\\x{1E5D0}-\\x{1E5ED}\\x{1E5F0}\\x{2B739}\\x{2EBF0}-\\x{2EE5D}\\x{31350}-\\x{323AF}";

// Digits and other numbers (General_Category N*) assigned in Unicode 15.0–16.0, absent from
// PCRE2 10.42's \p{N}.
inline constexpr std::string_view kExtraNumberClass =
    "\\x{10D40}-\\x{10D49}\\x{116D0}-\\x{116E3}\\x{11BF0}-\\x{11BF9}\\x{11F50}-\\x{11F59}"
    "\\x{16130}-\\x{16139}\\x{16D70}-\\x{16D79}\\x{1CCF0}-\\x{1CCF9}\\x{1D2C0}-\\x{1D2D3}"
    "\\x{1E4F0}-\\x{1E4F9}\\x{1E5F1}-\\x{1E5FA}";

// Code points PCRE2 10.42 classes as L or N that tiktoken does not: none were found.

} // namespace tw::text::unicode
