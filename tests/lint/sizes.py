#!/usr/bin/env python3
"""The size limits of production code: a function body of at most FUNCTION_LINES_MAX lines and a
file of at most FILE_LINES_MAX lines, in every layer folder. An exception must be named, with its
reason, in docs/ARCHITECTURE.md's section "Size limits and their exceptions" as a list item
"- `path`: reason" (a file) or "- `path` `function`: reason" (a function); an exception that no
longer exceeds its limit fails too, so the list stays true.

Functions are found by a scanner over the source with comments and literals blanked: a brace at
namespace or class scope whose head (the text since the last ';', '{' or '}') has a parameter list
and is no class, namespace, enum or initialiser opens a function body; lambdas and blocks inside a
body count towards it. Its length is the lines from the opening brace to the closing one.

Usage: sizes.py ROOT            check the tree, print every breach, exit 1 on any
       sizes.py ROOT --report   also list the longest functions and files
"""
import os
import re
import sys

FUNCTION_LINES_MAX = 70
FILE_LINES_MAX = 600
LAYERS = ("domain", "net", "observability", "codec", "channels", "persistence", "actors", "http",
          "app", "dev")
EXCEPTIONS_HEADING = "## Size limits and their exceptions"


def blank_comments_and_literals(text):
    """The text with comments, string and character literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'R"([^(\s]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i)
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            # A digit separator (1'000) is no character literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "#" and (i == 0 or text[i - 1] == "\n"):
            # Preprocessor lines (with their continuations) hold no scope.
            j = i
            while True:
                k = text.find("\n", j)
                k = n if k < 0 else k
                if k > 0 and text[k - 1] == "\\" and k < n:
                    j = k + 1
                    continue
                break
            out.append(re.sub(r"[^\n]", " ", text[i:k]))
            i = k
        else:
            out.append(c)
            i += 1
    return "".join(out)


SCOPE_HEAD = re.compile(r"\b(namespace|class|struct|union|enum)\b")


def classify(head):
    """What a brace with this head opens at namespace or class scope."""
    h = " ".join(head.split())
    if re.search(r"\bnamespace\b", h) or re.match(r'^extern\s*$', h) or h.startswith("extern "):
        return "namespace"
    if "(" not in h or h.rstrip().endswith("="):
        if SCOPE_HEAD.search(h):
            return "class"
        return "other"
    # `struct X : Base<f(1)> {` and `enum class E : int {` are classes: the keyword comes first.
    first = h.split("(")[0]
    if SCOPE_HEAD.search(first) and not re.search(r"\boperator\b", first):
        tokens = first.split()
        if tokens and tokens[0] in ("class", "struct", "union", "enum", "template") and \
                not re.search(r"\)\s*(const|noexcept|override|final|->|:|$)", h):
            return "class"
    if re.search(r"=\s*\[", h) or re.search(r"=\s*$", h):
        return "other"
    return "function"


def functions(text):
    """(name, first line, body lines) of every function body in `text`."""
    clean = blank_comments_and_literals(text)
    found = []
    stack = []  # entries: kind, start line, name
    head_start = 0
    line = 1
    for i, c in enumerate(clean):
        if c == "\n":
            line += 1
            continue
        if c not in "{};":
            continue
        in_body = any(kind == "function" for kind, _, _ in stack)
        if c == ";":
            if not in_body:
                head_start = i + 1
            continue
        if c == "{":
            if in_body:
                stack.append(("block", line, ""))
                continue
            head = clean[head_start:i]
            # `b_{a}` in a constructor's initialiser list: part of the head, not a body.
            if re.search(r"\)\s*:(?!:)", head) and re.search(r"[\w>]$", head):
                stack.append(("init", line, ""))
                continue
            kind = classify(head)
            name = ""
            if kind == "function":
                m = re.search(r"([~\w:]+(?:\s*operator\s*[^\s(]+)?)\s*\((?![^()]*\)\s*\()", head)
                name = m.group(1).strip() if m else "?"
            stack.append((kind, line, name))
            head_start = i + 1
            continue
        # c == "}"
        if stack:
            kind, start, name = stack.pop()
            if kind == "function":
                found.append((name, start, line - start + 1))
            if kind == "init":
                continue
        if not any(kind == "function" for kind, _, _ in stack):
            head_start = i + 1
    return found


def read_exceptions(root):
    """{(path, function or None): reason} from docs/ARCHITECTURE.md."""
    path = os.path.join(root, "docs", "ARCHITECTURE.md")
    exceptions = {}
    with open(path, encoding="utf-8") as f:
        text = f.read()
    start = text.find(EXCEPTIONS_HEADING)
    if start < 0:
        return exceptions
    section = text[start + len(EXCEPTIONS_HEADING):]
    end = section.find("\n## ")
    section = section if end < 0 else section[:end]
    for m in re.finditer(r"^- `([^`]+)`(?: `([^`]+)`)?: (.+)$", section, re.M):
        exceptions[(m.group(1), m.group(2))] = m.group(3)
    return exceptions


def sources(root):
    for layer in LAYERS:
        base = os.path.join(root, layer)
        for dirpath, _, names in os.walk(base):
            for name in sorted(names):
                if name.endswith((".cpp", ".hpp")):
                    full = os.path.join(dirpath, name)
                    yield os.path.relpath(full, root), full


def main():
    root = sys.argv[1]
    report = "--report" in sys.argv[2:]
    exceptions = read_exceptions(root)
    used = set()
    breaches = []
    longest = []
    for rel, full in sources(root):
        with open(full, encoding="utf-8") as f:
            text = f.read()
        lines = text.count("\n")
        if lines > FILE_LINES_MAX:
            if (rel, None) in exceptions:
                used.add((rel, None))
            else:
                breaches.append(f"{rel}: {lines} lines (> {FILE_LINES_MAX})")
        for name, start, length in functions(text):
            longest.append((length, f"{rel}:{start} {name}"))
            if length <= FUNCTION_LINES_MAX:
                continue
            short = name.split("::")[-1]
            key = next((k for k in ((rel, name), (rel, short)) if k in exceptions), None)
            if key:
                used.add(key)
            else:
                breaches.append(f"{rel}:{start}: function {name}: {length} lines "
                                f"(> {FUNCTION_LINES_MAX})")
    for key in sorted(set(exceptions) - used, key=str):
        breaches.append(f"docs/ARCHITECTURE.md names {key[0]} {key[1] or ''} as an exception, "
                        "but it is within its limit (or gone): remove it from the list")
    if report:
        for length, where in sorted(longest, reverse=True)[:25]:
            print(f"{length:5d}  {where}")
    for breach in breaches:
        print("FAIL:", breach)
    if breaches:
        print(f"{len(breaches)} size breaches (functions <= {FUNCTION_LINES_MAX} lines, files <= "
              f"{FILE_LINES_MAX}; exceptions in docs/ARCHITECTURE.md '{EXCEPTIONS_HEADING[3:]}')")
        return 1
    print(f"every production function <= {FUNCTION_LINES_MAX} lines and file <= {FILE_LINES_MAX} "
          f"lines, {len(used)} named exceptions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
