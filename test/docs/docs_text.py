"""Reading the docs' Markdown: fenced blocks, the hidden set-up a block may
carry, and the grove commands in a shell line."""
import re
import shlex

LAUNCHERS = ("salloc", "srun", "time", "env", "nice", "sudo", "exec")
SETUP_OPEN = "<!-- docs-test before:"


class Block:
    """A fenced code block: the file line of its first line, its lines, and
    the commands of a `<!-- docs-test before: ... -->` comment right above it
    (hidden from readers: what the example assumes has run, such as the job
    that `grove ps` shows)."""

    def __init__(self, first_line, lines, setup):
        self.first_line = first_line
        self.lines = lines
        self.setup = setup


def setup_above(lines, fence_at):
    """The set-up commands of a comment that ends right above line fence_at."""
    at = fence_at - 1
    while at >= 0 and not lines[at].strip():
        at -= 1
    if at < 0 or not lines[at].rstrip().endswith("-->"):
        return []
    end = at
    while at >= 0 and not lines[at].lstrip().startswith("<!--"):
        at -= 1
    if at < 0 or not lines[at].lstrip().startswith(SETUP_OPEN):
        return []
    body = "\n".join(lines[at:end + 1]).strip()
    body = body[len(SETUP_OPEN):-len("-->")]
    return [command.strip() for command in body.splitlines() if command.strip()]


def fenced_blocks(text):
    """Every fenced code block of a Markdown text, as Blocks."""
    lines = text.splitlines()
    at = 0
    while at < len(lines):
        if lines[at].startswith("```"):
            start = at + 1
            setup = setup_above(lines, at)
            at += 1
            while at < len(lines) and not lines[at].startswith("```"):
                at += 1
            yield Block(start + 1, lines[start:at], setup)
        at += 1


def shell_text(line):
    """A line as a shell gets it: without its `$ ` prompt."""
    line = line.strip()
    return line[2:] if line.startswith("$ ") else line


def words_after_grove(words):
    """The words after `grove` in a split command, or None if it runs none."""
    for at, word in enumerate(words):
        if word == "grove" or word.endswith("/grove"):
            # A command, not prose or a log line that mentions grove.
            before = words[:at]
            if before and before[0] not in LAUNCHERS and not all("=" in w for w in before):
                return None
            rest = []
            for later in words[at + 1:]:
                if later in ("|", "&&", "||", ";", ">", "<", "2>", "&") or later.startswith(">"):
                    break
                rest.append(later)
            return rest
    return None


def split(text):
    try:
        return shlex.split(text, comments=True)
    except ValueError:
        return None


def grove_words(line):
    """The words after `grove` in a shell line, or None if it runs no grove."""
    words = split(shell_text(line))
    return None if words is None else words_after_grove(words)


def grove_commands(line):
    """Every grove command a shell line runs, as lists of words: one, or those
    of a script given to `sh -c` (salloc -N 4 sh -c 'grove start && ...')."""
    words = split(shell_text(line))
    if words is None:
        return []
    for at, word in enumerate(words[:-2]):
        if word in ("sh", "bash") and words[at + 1] == "-c":
            commands = []
            for part in re.split(r"&&|\|\||;", words[at + 2]):
                inner = split(part)
                found = inner and words_after_grove(inner)
                if found is not None and inner:
                    commands.append(found)
            return commands
    found = words_after_grove(words)
    return [] if found is None else [found]


def is_synopsis(line):
    """A usage line ([optional] parts, a|b choices, placeholders), not a
    command. A choice has no spaces around its bar; a shell pipe or `||` has."""
    text = line.split("#")[0].replace("||", " ")
    return bool(re.search(r"\[|\S\|\S|\.\.\.|\bNP\b|\bPROGRAM\b", text))


def in_background(line):
    """A line that leaves its command running: `... &`."""
    return shell_text(line).split("#")[0].rstrip().endswith("&")


def expected_exit(line):
    """The exit status a line's comment announces, `(exit N)`; 0 otherwise."""
    match = re.search(r"#.*\(exits? (\d+)\)", line)
    return int(match.group(1)) if match else 0


def needs_hosts(words, line):
    """Whether a command needs other hosts: a host list or Slurm."""
    for at, word in enumerate(words):
        if word == "--hostfile" or word.startswith("--hostfile="):
            return True
        value = (word.split("=", 1)[1] if word.startswith("--host=") else
                 words[at + 1] if word in ("--host", "-H") and at + 1 < len(words) else None)
        if value is None:
            continue
        # Only this host (localhost[:SLOTS],...) runs here as well.
        names = {item.split("@")[-1].split(":")[0] for item in value.split(",")}
        if not names <= {"localhost", "127.0.0.1"}:
            return True
    return bool(re.search(r"\b(salloc|srun|sbatch)\b", line.split("#")[0]))
