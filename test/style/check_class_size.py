#!/usr/bin/env python3
"""No class in src/ holds more than 20 fields: a class that does is doing
the work of several (the controller once held 40). Counts the data members
declared directly in each `class` body (not in its nested types; `struct`s
are plain data such as options and messages, and are not counted) and fails
naming every class over the limit. `--self-test` plants an oversized class
and shows it is caught while a nested struct's fields are not charged to
its owner."""
import re
import sys

import style_check
from check_function_length import blank, matching_brace

LIMIT = 20
CLASS = re.compile(r"\bclass\s+(\w+)[^;{()]*\{")


def top_level_statements(body):
    """The body's statements at its own depth; nested blocks are skipped."""
    statements, current, depth = [], [], 0
    for char in body:
        if char == "{":
            depth += 1
            current.append(" {} ")
        elif char == "}":
            depth -= 1
        elif depth == 0:
            if char == ";":
                statements.append("".join(current))
                current = []
            else:
                current.append(char)
    return statements


def without_templates(statement):
    previous = None
    while previous != statement:
        previous = statement
        statement = re.sub(r"<[^<>]*>", "", statement)
    return statement


def count_fields(body):
    fields = 0
    for statement in top_level_statements(body):
        statement = re.sub(r"^\s*(public|private|protected)\s*:", " ", statement.strip())
        statement = re.sub(r"\b(public|private|protected)\s*:", " ", statement).strip()
        if not statement or "{}" in statement and "=" not in statement.split("{}")[0]:
            continue  # a nested type or a function with its body
        if re.match(r"(using|friend|typedef|static|enum|template|class|struct)\b", statement):
            continue
        plain = without_templates(statement)
        if "(" in plain.split("=")[0] or "operator" in plain:
            continue  # a function
        fields += plain.split("=")[0].count(",") + 1
    return fields


def check(src_root):
    problems = []
    for rel, text in style_check.sources(src_root):
        code = blank(text)
        for match in CLASS.finditer(code):
            open_brace = match.end() - 1
            fields = count_fields(code[open_brace + 1 : matching_brace(code, open_brace)])
            if fields > LIMIT:
                problems.append(f"{rel}: class {match.group(1)} has {fields} fields "
                                f"(at most {LIMIT}: split it by responsibility)")
    return problems


def self_test():
    many = "".join(f"  int field{i}_ = 0;\n" for i in range(LIMIT + 1))
    nested = "".join(f"    int inner{i} = 0;\n" for i in range(LIMIT + 1))
    planted = {
        "big.h": "class Big {\n public:\n  void f();\n" + many + "};\n",
        "ok.h": ("class Fine {\n public:\n  Fine(int a, int b);\n  std::function<void(int)> hook_;\n"
                 "  Timer a_, b_, c_;\n  struct Inner {\n" + nested + "  };\n  Inner inner_;\n"
                 "  int g() const { return 1; }\n};\n"),
    }
    problems = style_check.check_planted(planted, check)
    body = blank(planted["ok.h"])
    counted = count_fields(body[body.index("{") + 1 : matching_brace(body, body.index("{"))])
    if len(problems) != 1 or f"class Big has {LIMIT + 1} fields" not in problems[0]:
        print("self-test: expected only class Big over the limit, got:", *problems, sep="\n  ")
        return 1
    if counted != 5:
        print(f"self-test: class Fine should count 5 fields, counted {counted}")
        return 1
    print("self-test: the oversized class caught, a nested struct's fields not charged")
    return 0


if __name__ == "__main__":
    sys.exit(style_check.run(sys.argv, check, self_test,
                             lambda count: f"{count} class(es) too large",
                             f"class size: no class in src/ has more than {LIMIT} fields"))
