#!/usr/bin/env python3
"""Every actor typed: counts the dynamically typed CAF handles and behaviours in production code
(every layer folder: not tests/, bench/) and fails above 0. Counted, in the source with comments
and literals blanked (tests/lint/sizes.py's scanner):

  caf::actor            an untyped actor handle (not caf::actor_system, caf::actor_cast, ...)
  caf::behavior         an untyped behaviour (a typed one is XActor::behavior_type)
  caf::event_based_actor, caf::stateful_actor<State>
                        an untyped actor's self (the typed ones are XActor::pointer,
                        XActor::stateful_pointer<State>, caf::stateful_actor<State, XActor::base>)
  caf::message, caf::make_message
                        a dynamically typed message, as sent to an actor found by name

Glue that must stay untyped is an exception named, with its reason, in docs/ARCHITECTURE.md's
section "Untyped actor glue and its exceptions" as a list item "- `path` `pattern`: reason"; it
excuses every match of that pattern in that file, and an exception that matches nothing fails, so
the list stays true.

Usage: untyped_actors.py ROOT   check the tree, print every match, exit 1 on any not excused
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sizes  # noqa: E402  (blank_comments_and_literals, the layer folders)

PATTERNS = {
    "caf::actor": re.compile(r"\bcaf::actor\b"),
    "caf::behavior": re.compile(r"\bcaf::behavior\b"),
    "caf::event_based_actor": re.compile(r"\bcaf::event_based_actor\b"),
    # One template argument: the untyped stateful actor (the typed one names its base second).
    "caf::stateful_actor": re.compile(r"\bcaf::stateful_actor\s*<\s*[\w:]+\s*>"),
    "caf::message": re.compile(r"\bcaf::message\b"),
    "caf::make_message": re.compile(r"\bcaf::make_message\b"),
}
EXCEPTIONS_HEADING = "## Untyped actor glue and its exceptions"


def matches(text):
    """[(line, pattern name)] of every untyped use in `text`, comments and literals left out."""
    blanked = sizes.blank_comments_and_literals(text)
    found = []
    for name, pattern in PATTERNS.items():
        for m in pattern.finditer(blanked):
            found.append((blanked.count("\n", 0, m.start()) + 1, name))
    return sorted(found)


def read_exceptions(root):
    """{(path, pattern name): reason} from docs/ARCHITECTURE.md."""
    with open(os.path.join(root, "docs", "ARCHITECTURE.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.find(EXCEPTIONS_HEADING)
    if start < 0:
        return {}
    section = text[start + len(EXCEPTIONS_HEADING):]
    end = section.find("\n## ")
    section = section if end < 0 else section[:end]
    return {(m.group(1), m.group(2)): m.group(3)
            for m in re.finditer(r"^- `([^`]+)` `([^`]+)`: (.+)$", section, re.M)}


def check(root):
    """(breaches, untyped uses excused by a named exception)."""
    exceptions = read_exceptions(root)
    used = set()
    breaches = []
    excused = 0
    for rel, full in sizes.sources(root):
        with open(full, encoding="utf-8") as f:
            text = f.read()
        for line, name in matches(text):
            if (rel, name) in exceptions:
                used.add((rel, name))
                excused += 1
            else:
                breaches.append(f"{rel}:{line}: untyped {name}")
    for rel, name in sorted(set(exceptions) - used):
        breaches.append(f"docs/ARCHITECTURE.md names {rel} `{name}` as untyped glue, but it has "
                        "none: remove it from the list")
    return breaches, excused


def main():
    breaches, excused = check(sys.argv[1])
    for breach in breaches:
        print("FAIL:", breach)
    if breaches:
        print(f"{len(breaches)} untyped actor handles, behaviours or messages in production code "
              "(declare the actor's interface in actors/messages.hpp; glue that must stay is named "
              f"in docs/ARCHITECTURE.md '{EXCEPTIONS_HEADING[3:]}')")
        return 1
    print(f"0 untyped actor handles, behaviours or messages in production code ({excused} in "
          "named glue)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
