#!/usr/bin/env python3
"""One way to fail (issue 54): production code reports a failure through domain::Result, never
through a sentinel status or a string out-parameter.

  one_way_to_fail.py ROOT       counts, in every production C++ file (tests/, bench/, fuzz/ and
                                build trees left out), the two forms this gate forbids, and fails
                                on any:
    - a "no answer" status sentinel: `status == 0`, `status != 0`, `Response{0, ...}` (an
      exchange that brought no answer is net::HttpClient's Result failure);
    - a string out-parameter for a reason: `std::string* why` / `error` / `err` / `reason` in a
      parameter list (the reason is the Result's detail).
  one_way_to_fail.py --self-test  checks the scanner against cases it must and must not report.
"""
import pathlib
import re
import sys

PRODUCTION_SKIP = {"tests", "bench", "fuzz", ".git", "node_modules"}
SENTINEL = re.compile(r"\bstatus\s*[!=]=\s*0\b|\bResponse\s*\{\s*0\s*,")
OUT_PARAM = re.compile(
    r"(?:^|[(,])\s*std::string\s*\*\s*(?:why|error|err|reason|message)\s*(?:[,)]|=\s*nullptr)",
    re.M)


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def findings(text: str):
    """(line, kind, source line) of each forbidden form in one file's text."""
    out = []
    lines = text.split("\n")
    for number, line in enumerate(strip_comments(text).split("\n"), start=1):
        if SENTINEL.search(line):
            out.append((number, "status sentinel", lines[number - 1].strip()))
        if OUT_PARAM.search(line):
            out.append((number, "string out-parameter", lines[number - 1].strip()))
    return out


def production_files(root: pathlib.Path):
    for path in sorted(root.rglob("*")):
        parts = path.relative_to(root).parts
        if path.suffix not in (".cpp", ".hpp") or not path.is_file():
            continue
        if parts[0] in PRODUCTION_SKIP or parts[0].startswith("build"):
            continue
        yield path


def self_test() -> int:
    must = [
        "if (response.status == 0) {",
        "return Response{0, {}, {}, \"x\"};",
        "bool parse(std::string_view text, std::string* why);",
        "std::optional<Url> parse_url(std::string_view text,\n    std::string *error) {",
        "void f(std::string* reason = nullptr);",
        "                                   std::string* error);",
    ]
    must_not = [
        "if (response.status == 200) {",
        "const std::string* why = codec::json_string(doc, \"failure_reason\", 64);",
        "// a comment: if (status == 0) with std::string* why",
        "Result<Url> parse_url(std::string_view text);",
        "int statuses = 0;",
        "std::string* out",
        "  std::string* error = find(name);",
    ]
    failed = 0
    for case in must:
        joined = case.replace("\n", " ")
        if not findings(joined):
            print(f"FAIL: not reported: {case!r}")
            failed += 1
    for case in must_not:
        if findings(case):
            print(f"FAIL: reported: {case!r}")
            failed += 1
    print(f"{len(must) + len(must_not) - failed} of {len(must) + len(must_not)} scanner cases hold")
    return 1 if failed else 0


def main() -> int:
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(sys.argv[1])
    total = 0
    files = 0
    for path in production_files(root):
        files += 1
        for number, kind, line in findings(path.read_text(encoding="utf-8", errors="replace")):
            print(f"{path.relative_to(root)}:{number}: {kind}: {line}")
            total += 1
    if total:
        print(f"FAIL: {total} way(s) to fail beside domain::Result in {files} production files")
        return 1
    print(f"0 status sentinels and 0 string out-parameters in {files} production files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
