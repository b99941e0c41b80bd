#!/usr/bin/env python3
"""Lists every C++ function body longer than a limit (default 120 lines) in core/, ui/ and app/.

A body's length runs from the line of its opening brace to the line of its closing brace. Comments,
string literals (raw strings included), character literals and digit separators are blanked before
the braces are matched, so a brace inside them does not count; a lambda, a local class or a nested
block belongs to the function around it. Braces at namespace scope that open a data initializer
(`= {`, `kTable{...}`) are not functions.

Usage:
  function-lengths.py [--root DIR] [--limit N] [--allowlist FILE] [--list] [FILE...]
  function-lengths.py --expect FILE   (the checker's own test: FILE's "// expect NAME LINES" lines)
Without FILE it scans core/, ui/ and app/ under the root. With --allowlist it exits 1 when a function
over the limit is not on the list, or when an entry names no function over the limit (a stale entry);
--list prints every function over the limit with its length. The allowlist has one entry a line:
  path  QualifiedName  # reason
(blank lines and lines starting with # are ignored; the reason is required).
"""
import argparse
import bisect
import os
import re
import sys

SCANNED_DIRS = ("core", "ui", "app")
EXTENSIONS = (".cpp", ".h", ".hpp", ".cc")


LEXEMES = re.compile(
    r'(?:\b(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(.*?\)\1")'   # a raw string
    r'|//[^\n]*'                                              # a line comment
    r'|/\*.*?\*/'                                             # a block comment
    r'|"(?:\\.|[^"\\\n])*"'                                  # a string
    r"|'(?:\\.|[^'\\\n])*'"                                  # a character
    r"|(?<![\w.])\.?\d(?:[\w.]|'(?=\w)|(?<=[eEpP])[+-])*"       # a number, with digit separators
    r'|^[ \t]*#(?:[^\n]*\\\n)*[^\n]*',                         # a directive and its continuation lines
    re.DOTALL | re.MULTILINE)


def blank(text):
    """Returns text with comments, literals and preprocessor lines replaced by spaces (newlines kept)."""
    return LEXEMES.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def paren_state(header):
    """(a ( ) group closed at depth 0, a ':' after it (a constructor's member initializers), a ( open)."""
    depth = 0
    closed = init_list = False
    for c in header.replace("::", "  "):
        if c == "(":
            depth += 1
        elif c == ")":
            depth = max(0, depth - 1)
            closed = closed or depth == 0
        elif c == ":" and depth == 0 and closed:
            init_list = True
    return closed, init_list, depth > 0


def top_level(text):
    """text with every ( ) and < > group's contents removed (the depth-0 characters only)."""
    out = []
    depth = 0
    for c in text:
        if c == "(":
            depth += 1
            out.append(c)
        elif c == ")":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(c)
    return "".join(out)


SCOPE = re.compile(r"(?:^|\s)(?:inline\s+)?namespace\b|^\s*extern\s*$")
CLASS = re.compile(r"(?:^|[\s>])(?:class|struct|union|enum)\b")
NOT_NAMES = {"alignas", "__attribute__", "__declspec", "decltype", "noexcept", "requires", "if", "for",
             "while", "switch", "return", "sizeof"}


def class_name(top):
    """The name a class, struct or union header declares (None for an anonymous one or an enum)."""
    m = re.search(r"(?:^|[\s>])(class|struct|union|enum)\b(.*)", top)
    if not m or m.group(1) == "enum":
        return None
    rest = re.sub(r"<[^<>]*>", "", m.group(2).replace("::", "##"))
    names = re.findall(r"[A-Za-z_][A-Za-z0-9_#]*", rest.split(":")[0].replace(" final", " "))
    return names[-1].replace("##", "::") if names else None


def classify(header):
    """'scope' (namespace, extern), 'class' (with its name), 'function' (with its name) or 'data' for the
    '{' after header."""
    h = re.sub(r"\[\[.*?\]\]", " ", header)
    h = re.sub(r"\s+", " ", h).strip()
    h = re.sub(r"^(?:(?:public|private|protected|signals|Q_SIGNALS|public slots|private slots|"
               r"protected slots|Q_SLOTS)\s*:\s*)+", "", h)
    top = top_level(h)
    if SCOPE.search(h) and "(" not in top:
        return "scope", None
    if CLASS.search(top) and "(" not in top.split(":")[0].replace("alignas(", ""):
        return "class", class_name(top)
    eq = re.search(r"(?<![=!<>+\-*/%&|^])=(?!=)", top.replace("operator=", "operator"))
    if eq:
        if re.search(r"=\s*\[[^\]]*\]\s*(?:\(|\{|$)", h):  # a lambda at namespace scope
            m = re.search(r"([A-Za-z_][A-Za-z0-9_:]*)\s*=", h)
            return "function", (m.group(1) if m else "<lambda>")
        return "data", None
    if not paren_state(h)[0]:
        return "data", None
    # The name stands before the first ( ) group that is not an attribute or a specifier.
    for m in re.finditer(r"((?:[A-Za-z_~][A-Za-z0-9_]*\s*::\s*)*(?:operator\s*(?:\(\)|[^\s(]+)|~?[A-Za-z_][A-Za-z0-9_]*))"
                         r"\s*(?:<[^()]*>)?\s*\(", h):
        name = re.sub(r"\s+", "", m.group(1))
        if name.split("::")[-1] not in NOT_NAMES:
            return "function", name
    return "function", "<unnamed>"


def functions(path, text):
    """Yields (name, first line, last line) of every function body in a file."""
    code = blank(text)
    newlines = [m.start() for m in re.finditer("\n", code)]

    def line_of(pos):
        return bisect.bisect_left(newlines, pos) + 1

    stack = []  # per open brace: ('scope'|'class'|'function'|'data'|'block', name, line)
    header_start = 0  # where the text before the next '{' at a declaration scope starts
    skip_until = -1  # the end of a member's brace initializer, which belongs to the header
    for m in re.finditer(r"[{};]", code):
        pos, c = m.start(), m.group(0)
        if pos < skip_until:
            continue
        in_declarations = all(kind in ("scope", "class") for kind, _, _ in stack)
        if c == "{":
            if in_declarations:
                header = code[header_start:pos]
                _, init_list, open_paren = paren_state(header)
                if open_paren or (init_list and re.search(r"[A-Za-z0-9_>]\s*$", header)):
                    # A default argument's or a member's brace initializer: part of the header.
                    depth = 0
                    for k in range(pos, len(code)):
                        depth += {"{": 1, "}": -1}.get(code[k], 0)
                        if depth == 0:
                            skip_until = k + 1
                            break
                    continue
                kind, name = classify(header)
                if kind == "function" and "::" not in name:  # a member defined in its class
                    name = "::".join([n for k, n, _ in stack if k == "class" and n] + [name])
                stack.append((kind, name, line_of(pos)))
            else:
                stack.append(("block", None, line_of(pos)))
            header_start = pos + 1
        elif c == "}":
            if not stack:
                raise ValueError(f"{path}:{line_of(pos)}: '}}' without '{{'")
            kind, name, first = stack.pop()
            if kind == "function":
                yield name, first, line_of(pos)
            header_start = pos + 1
        elif in_declarations:  # ';'
            header_start = pos + 1
    if stack:
        raise ValueError(f"{path}: {len(stack)} '{{' without '}}' (first at line {stack[0][2]})")


def source_files(root):
    for top in SCANNED_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(EXTENSIONS):
                    yield os.path.relpath(os.path.join(dirpath, f), root)


def read_allowlist(path):
    entries = {}
    problems = []
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            s = raw.strip()
            if not s or s.startswith("#"):
                continue
            body, _, reason = s.partition("#")
            fields = body.split()
            if len(fields) != 2 or not reason.strip():
                problems.append(f"{path}:{number}: expected 'path  QualifiedName  # reason'")
                continue
            entries[(fields[0], fields[1])] = number
    return entries, problems


def check_expectations(path):
    """Exit status 0 when the functions found in path are exactly its '// expect NAME LINES' lines."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    expected = sorted((m.group(1), int(m.group(2))) for m in re.finditer(r"^// expect (\S+) (\d+)$", text, re.M))
    found = sorted((name, last - first + 1) for name, first, last in functions(path, text))
    for item in sorted(set(expected) - set(found)):
        print(f"{path}: expected {item[0]} of {item[1]} lines, not found")
    for item in sorted(set(found) - set(expected)):
        print(f"{path}: found {item[0]} of {item[1]} lines, not expected")
    ok = expected == found and bool(expected)
    print(f"function-lengths: {len(found)} function(s) found, {len(expected)} expected: {'ok' if ok else 'MISMATCH'}")
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    parser.add_argument("--limit", type=int, default=120)
    parser.add_argument("--allowlist")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("files", nargs="*")
    parser.add_argument("--expect")
    args = parser.parse_args()
    if args.expect:
        return check_expectations(args.expect)

    root = os.path.abspath(args.root)
    files = args.files or list(source_files(root))
    long_ones = []
    try:
        for rel in files:
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                text = f.read()
            for name, first, last in functions(rel, text):
                length = last - first + 1
                if length > args.limit:
                    long_ones.append((rel, name, first, length))
    except ValueError as e:
        print(f"function-lengths: cannot read the braces: {e}", file=sys.stderr)
        return 2

    if args.list or not args.allowlist:
        for rel, name, first, length in sorted(long_ones, key=lambda x: -x[3]):
            print(f"{length:5d}  {rel}:{first}  {name}")
    if not args.allowlist:
        return 0

    entries, problems = read_allowlist(args.allowlist)
    found = {(rel, name) for rel, name, _, _ in long_ones}
    for rel, name, first, length in long_ones:
        if (rel, name) not in entries:
            problems.append(f"{rel}:{first}: {name} is {length} lines (over {args.limit}): cut it into "
                            f"named steps, or add it to {os.path.basename(args.allowlist)} with a reason")
    for (rel, name), number in sorted(entries.items(), key=lambda x: x[1]):
        if (rel, name) not in found:
            problems.append(f"{args.allowlist}:{number}: {rel} {name} is no longer over {args.limit} lines "
                            f"(or no longer exists): remove the entry")
    for p in problems:
        print(p)
    print(f"function-lengths: {len(long_ones)} function(s) over {args.limit} lines, "
          f"{len(entries)} allowed, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
