#!/usr/bin/env python3
"""Checks tests/lint/untyped_actors.py on sources made here: an injected untyped handle, behaviour,
self pointer or dynamically typed message is caught; the typed forms and the other caf::actor_*
names are not; comments and literals hide a match; a named exception excuses exactly its file and
pattern, and fails once it matches nothing."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import untyped_actors  # noqa: E402

failures = []


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: got {got!r}, want {want!r}")


# Each untyped form, one per line.
src = """caf::actor a;
caf::behavior f(caf::event_based_actor* self);
caf::behavior g(caf::stateful_actor<State>* self);
void h(caf::message m) { auto n = caf::make_message(1); }
"""
check("untyped forms", untyped_actors.matches(src),
      [(1, "caf::actor"), (2, "caf::behavior"), (2, "caf::event_based_actor"),
       (3, "caf::behavior"), (3, "caf::stateful_actor"), (4, "caf::make_message"),
       (4, "caf::message")])

# The typed forms and the other names beginning with caf::actor are no untyped handles.
src = """RouterActor r;
RouterActor::behavior_type f(RouterActor::stateful_pointer<S> self);
using Self = caf::stateful_actor<State, RouterActor::base>;
caf::actor_system& s(caf::actor_system_config& c, caf::actor_addr a, caf::strong_actor_ptr p);
auto t = caf::actor_cast<caf::strong_actor_ptr>(r);
caf::typed_actor<caf::reacts_to<int>> u;
caf::message_id id;
"""
check("typed forms", untyped_actors.matches(src), [])

# Comments and literals hide a match.
src = '// caf::actor in a comment\nconst char* s = "caf::behavior";\n/* caf::actor */\n'
check("comments and literals", untyped_actors.matches(src), [])

# The whole check over a small tree: an injected handle fails, an exception excuses exactly its
# file and pattern, a stale exception fails.
with tempfile.TemporaryDirectory() as root:
    os.makedirs(os.path.join(root, "actors"))
    os.makedirs(os.path.join(root, "docs"))
    os.makedirs(os.path.join(root, "tests"))
    with open(os.path.join(root, "actors", "glue.cpp"), "w") as f:
        f.write("// Glue.\ncaf::actor spawn_glue();\nGlueActor typed();\n")
    with open(os.path.join(root, "actors", "clean.cpp"), "w") as f:
        f.write("// Typed.\nRouterActor::behavior_type f(RouterActor::pointer self);\n")
    with open(os.path.join(root, "tests", "helper.cpp"), "w") as f:
        f.write("caf::behavior idle(caf::event_based_actor* self);\n")
    arch = os.path.join(root, "docs", "ARCHITECTURE.md")

    def run(exceptions):
        with open(arch, "w") as f:
            f.write("# A\n\n## Untyped actor glue and its exceptions\n\n" + exceptions +
                    "\n## Next\n")
        return subprocess.run([sys.executable, os.path.join(HERE, "untyped_actors.py"), root],
                              capture_output=True, text=True)

    r = run("")
    check("an injected handle fails", r.returncode, 1)
    check("it is named", "actors/glue.cpp:2: untyped caf::actor" in r.stdout, True)
    check("tests are not production", "helper.cpp" in r.stdout, False)
    check("one breach", r.stdout.count("FAIL"), 1)
    r = run("- `actors/glue.cpp` `caf::actor`: spawn glue\n")
    check("exception excuses", (r.returncode, r.stdout.count("FAIL")), (0, 0))
    r = run("- `actors/glue.cpp` `caf::behavior`: another pattern\n")
    check("exception is per pattern", r.returncode, 1)
    r = run("- `actors/glue.cpp` `caf::actor`: spawn glue\n"
            "- `actors/clean.cpp` `caf::actor`: gone\n")
    check("stale exception fails", (r.returncode, "clean.cpp `caf::actor`" in r.stdout), (1, True))

for failure in failures:
    print("FAIL:", failure)
print(f"untyped_actors_test: {'FAILED' if failures else 'passed'} ({len(failures)} failures)")
sys.exit(1 if failures else 0)
