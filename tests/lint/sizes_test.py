#!/usr/bin/env python3
"""Checks tests/lint/sizes.py's scanner on sources made here: a function one line over the limit is
caught and one at the limit is not, lambdas and blocks count towards their function, class and
namespace braces are no functions, literals and comments hide their braces, a long file is caught,
and a named exception excuses exactly what it names (and fails once it is no longer needed)."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sizes  # noqa: E402

failures = []


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: got {got!r}, want {want!r}")


def body(lines):
    return "".join(f"  x += {i};\n" for i in range(lines))


# A function of 70 lines (braces included) passes, 71 does not.
src = ("namespace a {\nint f(int x) {\n" + body(67) + "  return x;\n}\n"
       "int g(int x) {\n" + body(68) + "  return x;\n}\n}  // namespace a\n")
found = {name: length for name, _, length in sizes.functions(src)}
check("f length", found.get("f"), 70)
check("g length", found.get("g"), 71)

# Members in a class body, a constructor with an initialiser list, lambdas inside a body.
src = """struct S : Base {
  S(int a) : a_(a), b_{a} {
    auto l = [] {
      return 1;
    };
  }
  int get() const noexcept { return a_; }
  int a_;
  int b_;
};
"""
found = [(name, length) for name, _, length in sizes.functions(src)]
check("class members", found, [("S", 5), ("get", 1)])

# Braces in strings, characters, raw strings and comments open nothing.
src = 'void h() {\n  const char* s = "{{{";\n  char c = \'{\';\n  // {\n  auto r = R"x({)x";\n}\n'
found = [(name, length) for name, _, length in sizes.functions(src)]
check("literals", found, [("h", 6)])

# Initialisers, enums and namespace-scope lambdas are no functions.
src = "enum class E { a, b };\nconstexpr int k[] = {1, 2};\ninline auto t = [] { return 1; };\n"
check("no functions", sizes.functions(src), [])

# The whole check over a small tree: a breach, an exception that excuses it, a stale exception.
with tempfile.TemporaryDirectory() as root:
    os.makedirs(os.path.join(root, "domain"))
    os.makedirs(os.path.join(root, "docs"))
    with open(os.path.join(root, "domain", "long.cpp"), "w") as f:
        f.write("int g(int x) {\n" + body(80) + "  return x;\n}\n" + "\n" * 600)
    arch = os.path.join(root, "docs", "ARCHITECTURE.md")

    def run(exceptions):
        with open(arch, "w") as f:
            f.write("# A\n\n## Size limits and their exceptions\n\n" + exceptions + "\n## Next\n")
        return subprocess.run([sys.executable, os.path.join(HERE, "sizes.py"), root],
                              capture_output=True, text=True)

    r = run("")
    check("breaches fail", r.returncode, 1)
    check("function named", "function g: 83 lines" in r.stdout, True)
    check("file named", "domain/long.cpp: 683 lines (> 600)" in r.stdout, True)
    r = run("- `domain/long.cpp`: a table\n- `domain/long.cpp` `g`: a table\n")
    check("exceptions excuse", (r.returncode, r.stdout.count("FAIL")), (0, 0))
    r = run("- `domain/long.cpp`: a table\n- `domain/long.cpp` `g`: a table\n"
            "- `domain/long.cpp` `f`: gone\n")
    check("stale exception fails", (r.returncode, "f as an exception" in r.stdout), (1, True))

for failure in failures:
    print("FAIL:", failure)
print(f"sizes_test: {'FAILED' if failures else 'passed'} ({len(failures)} failures)")
sys.exit(1 if failures else 0)
