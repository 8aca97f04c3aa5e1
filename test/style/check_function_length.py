#!/usr/bin/env python3
"""No function in src/ has a body over 100 lines: a long function hides its
steps; named helpers show them. Fails naming every function (file:line, name,
body length) over the limit; a lambda counts toward the function it is in.
`--self-test` plants a long function and short ones in a scratch tree and
shows only the long one is caught.

The scan is pragmatic, not a C++ parser: with comments, strings, character
literals and preprocessor lines blanked out, it matches braces, and a brace
opened at namespace or class scope after a parameter list opens a function
body. The body's length is the count of lines between its braces."""
import re
import sys

import style_check

LIMIT = 100

IDENT = re.compile(r"[A-Za-z_]\w*")
NAMESPACE = re.compile(r"^(inline\s+)?namespace\b|^extern\s*\"\s*\"\s*$")
CLASS = re.compile(r"^(typedef\s+)?(class|struct|union|enum)\b")
ACCESS = re.compile(r"\b(public|protected|private)\s*:(?!:)")
TRAILING_RETURN = re.compile(r"->.*$")
QUALIFIERS = re.compile(r"(\s*\b(const|volatile|noexcept|override|final|mutable|try)\b(\s*\(\))?"
                        r"|\s*&&?)*\s*$")
RAW_STRING = re.compile(r'(?:u8|[uUL])?R"([^()\\\s]{0,16})\(')


def blank(text):
    """The text with comments, string and character literals and preprocessor
    lines turned to spaces (strings keep their quotes), newlines kept, so
    braces inside them are not counted and line numbers still hold."""
    out = list(text)
    i, n = 0, len(text)

    def wipe(start, end, keep_quotes=False):
        for k in range(start, end):
            if out[k] != "\n" and not (keep_quotes and k in (start, end - 1)):
                out[k] = " "

    at_line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            at_line_start = True
            i += 1
            continue
        if c in " \t":
            i += 1
            continue
        if at_line_start and c == "#":
            end = i
            while end < n and (text[end] != "\n" or text[end - 1] == "\\"):
                end += 1
            wipe(i, end)
            i = end
            continue
        at_line_start = False
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            wipe(i, end)
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            wipe(i, end)
            i = end
        elif (raw := RAW_STRING.match(text, i)) and (i == 0 or not text[i - 1].isalnum()):
            close = ")" + raw.group(1) + '"'
            end = text.find(close, raw.end())
            end = n if end < 0 else end + len(close)
            wipe(i, end)
            i = end
        elif c == '"' or (c == "'" and not digit_separator(text, i)):
            end = i + 1
            while end < n and text[end] != c and text[end] != "\n":
                end += 2 if text[end] == "\\" else 1
            end = min(end + 1, n)
            wipe(i, end, keep_quotes=True)
            i = end
        else:
            i += 1
    return "".join(out)


def digit_separator(text, i):
    """Whether the quote at i separates digits, as in 1'000'000."""
    start = i
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_'"):
        start -= 1
    return start < i and text[start].isdigit()


def matching_brace(code, open_at):
    """Index of the '}' closing the '{' at open_at (len(code) if none)."""
    depth = 0
    for k in range(open_at, len(code)):
        if code[k] == "{":
            depth += 1
        elif code[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(code)


def top_level(header):
    """The header with everything inside (), [], <> of templates and {} cut
    out, so '=', ':' and ')' seen in it are at the declaration's own level."""
    out, depth = [], 0
    for c in header:
        if c in "([{":
            if depth == 0:
                out.append(c)
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                out.append(c)
        elif depth == 0:
            out.append(c)
    return "".join(out)


def strip_template_prefix(header):
    """The header without leading `template <...>` clauses and [[attributes]]."""
    while True:
        header = header.lstrip()
        if header.startswith("[["):
            end = header.find("]]")
            header = header[end + 2:] if end >= 0 else ""
            continue
        match = re.match(r"template\s*<", header)
        if not match:
            return header
        depth, k = 0, match.end() - 1
        while k < len(header):
            depth += {"<": 1, ">": -1}.get(header[k], 0)
            k += 1
            if depth == 0:
                break
        header = header[k:]


def in_constructor_initializers(header):
    """Whether the header has reached a constructor's `) : member(...)` list,
    where `name{...}` initialises a member rather than opening the body."""
    flat = top_level(header).replace("::", "  ")
    close = flat.find(")")
    return close >= 0 and ":" in flat[close:]


def classify(header):
    """'namespace', 'class', 'function' (with its name) or 'other' for the
    declaration text before a '{' opened at namespace or class scope."""
    header = ACCESS.sub(" ", strip_template_prefix(" ".join(header.split())))
    header = header.strip()
    if NAMESPACE.match(header):
        return "namespace", None
    flat = top_level(header)
    flat_ops = re.sub(r"\boperator\s*(\(\s*\)|[^\s(]+)", "operator", flat)
    if CLASS.match(header) and "(" not in flat:
        return "class", None
    if "=" in flat_ops:
        # `auto name = [...](...) {`: a lambda held in a variable is a function.
        before, _, after = flat_ops.partition("=")
        if after.lstrip().startswith("["):
            names = IDENT.findall(before)
            return "function", names[-1] if names else "lambda"
        return "other", None
    if "(" not in flat:
        return "class" if CLASS.match(header) else "other", None
    # A parameter list (or a constructor's initialisers) ends a function's
    # header, but for qualifiers and a trailing return type; a member such as
    # `std::function<void()> done_{...}` ends in its name.
    if not QUALIFIERS.sub("", TRAILING_RETURN.sub("", flat_ops)).endswith((")", "}")):
        return "other", None
    return "function", function_name(header)


def function_name(header):
    operator = re.search(r"((?:[\w~]+\s*::\s*)*operator\s*(?:\(\s*\)|[^\s(]+))\s*\(", header)
    if operator:
        # `operator bool` keeps its space; `Type::operator ()` does not.
        return re.sub(r"\s+(?!\w)|(?<!\w)\s+", "", " ".join(operator.group(1).split()))
    depth = 0
    for k, c in enumerate(header):
        if c in "<[":
            depth += 1
        elif c in ">]":
            depth -= 1
        elif c == "(" and depth == 0:
            name = re.search(r"((?:[\w~]+(?:<[^()]*>)?\s*::\s*)*~?\w+)\s*$", header[:k])
            return re.sub(r"\s+", "", name.group(1)) if name else "?"
    return "?"


def functions(text):
    """(line, name, body_lines) of every function body in the text."""
    code = blank(text)
    found = []  # [line, name, line of '{', line of '}']
    header_start, i, n = 0, 0, len(code)
    line_of = lambda index: code.count("\n", 0, index) + 1  # noqa: E731
    while i < n:
        c = code[i]
        if c in ";}":
            # A statement or a scope ends; the next declaration starts after it.
            header_start = i + 1
        elif c == "{":
            header = code[header_start:i]
            inner = header.count("(") > header.count(")")
            member_init = in_constructor_initializers(header) and re.search(
                r"[\w>]\s*$", header)
            if inner or member_init:
                i = matching_brace(code, i) + 1
                continue
            kind, name = classify(header)
            if kind in ("namespace", "class"):
                header_start = i + 1
                i += 1
                continue
            close = matching_brace(code, i)
            if kind == "function" and name == "catch" and found:
                # A function-try-block's handler: part of the function before it.
                found[-1][3] = line_of(close)
            elif kind == "function":
                start = line_of(header_start + len(header) - len(header.lstrip()))
                found.append([start, name, line_of(i), line_of(close)])
            i = close + 1
            header_start = i
            continue
        i += 1
    return [(line, name, max(0, close - opened - 1)) for line, name, opened, close in found]


def check(src_root, limit=LIMIT):
    problems = []
    for rel, text in style_check.sources(src_root):
        for line, function, length in functions(text):
            if length > limit:
                problems.append(f"{rel}:{line}: {function} is {length} lines long")
    return problems


def self_test():
    lines = lambda count: "".join(f"  total += {k};\n" for k in range(count))  # noqa: E731
    planted = {
        # One over the limit, with braces in a string, a comment and a lambda
        # that must neither end it early nor hide its length.
        "a/long.cc": ("namespace grove {\nint too_long(int total) {\n"
                      '  const char* text = "}}}";  // }\n'
                      "  auto f = [&] { return '}'; };\n" + lines(LIMIT - 2)
                      + "  return total;\n}\n}  // namespace grove\n"),
        # Exactly at the limit, members inline in a class, a constructor with
        # brace-initialised members and a table: none is caught.
        "b/short.h": ("namespace grove {\nclass Short {\n public:\n"
                      "  Short(int a) : a_{a}, b_(a) {}\n"
                      "  int at_limit(int total) {\n" + lines(LIMIT) + "  }\n"
                      " private:\n  int a_;\n  int b_;\n};\n"
                      "const int kTable[] = {\n" + "  1,\n" * (LIMIT + 5) + "};\n"
                      "}  // namespace grove\n"),
    }
    problems = style_check.check_planted(planted, check)
    expected = [f"a/long.cc:2: too_long is {LIMIT + 1} lines long"]
    if problems != expected:
        print(f"self-test: reported {problems}, expected {expected}")
        return 1
    print("self-test: the long function was caught, the short ones passed")
    return 0


if __name__ == "__main__":
    sys.exit(style_check.run(sys.argv, check, self_test,
                             lambda count: f"{count} function(s) over {LIMIT} lines",
                             f"function_length: no function in src/ is over {LIMIT} lines"))
