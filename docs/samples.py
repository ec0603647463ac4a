"""The sample output in the docs, made by the commands themselves.

Every ```console block in a docs page (and the README) that starts with `$ zombiesim` is a
sample: its first lines (up to the first without a trailing backslash) are the command,
the rest is what the command prints, standard output and standard error together, at
200 columns. A block may hold several commands (each line starting `$ `), and `echo $?`
prints the exit code of the one before. A line `...` makes the sample an excerpt: only
the lines shown are compared and rewritten, each matched to the printed line about the
same thing (the text before its first two spaces).

This script runs each command and writes what it printed back into the page; `--check`
only compares, and lists each sample that no longer matches (exit 1).
`tests/test_doc_samples.py` runs the check, so a sample that drifts from the code fails
`make test`.

Commands run in a scratch folder beside which `traces/` and `examples/` of the checkout
are linked, so they read the shipped samples (`traces/samples/...`) and write nothing into
the checkout. What no two runs print alike is left out of the comparison: wall-clock
times (`wall 344 ms`, `(measured phase 192 ms)`, `in 1.2 s`) and the version.

    python docs/samples.py            # rewrite every sample from the current build
    python docs/samples.py --check    # compare only
    python docs/samples.py --only cli.md:166 --check
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
COLUMNS = "200"
#: What is linked into the scratch folder the commands run in.
LINKED = ("traces", "examples")

SAMPLE = re.compile(r"```console\n(\$ zombiesim .*?)```", re.S)
#: Figures that differ from run to run: (pattern, what stands for them when comparing).
VOLATILE = [
    (re.compile(r"\bwall [\d.,]+ (?:ns|µs|ms|s)\b"), "wall <time>"),
    (re.compile(r"measured phase [\d.,]+ (?:ns|µs|ms|s)\b"), "measured phase <time>"),
    (re.compile(r"\bin [\d.,]+ (?:ms|s)\b"), "in <time>"),
    (re.compile(r"\bzombiesim \d+\.\d+\.\d+\S*"), "zombiesim <version>"),
]


@dataclass
class Step:
    command: str  # as shown, with its backslash continuations
    output: str  # as shown; a line `  ...` stands for any lines (an excerpt)

    def argv(self) -> list[str]:
        return shlex.split(self.command.replace("\\\n", " "))

    @property
    def excerpt(self) -> bool:
        return any(line.strip() == "..." for line in self.output.splitlines())


@dataclass
class Sample:
    page: Path
    line: int  # of the opening fence
    start: int  # offsets of the block's body in the page's text
    end: int
    steps: list[Step]

    @property
    def name(self) -> str:
        return f"{self.page.name}:{self.line}"

    def text(self) -> str:
        return "".join(f"$ {s.command}\n{s.output}" for s in self.steps)


def _steps(body: str) -> list[Step]:
    """A block's commands (`$ ` lines and their continuations) and what follows each."""
    steps: list[Step] = []
    lines = body.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        n = i + 1
        while lines[n - 1].rstrip("\n").endswith("\\"):
            n += 1
        command = "".join(lines[i:n])[2:].rstrip("\n")
        j = n
        while j < len(lines) and not lines[j].startswith("$ "):
            j += 1
        steps.append(Step(command, "".join(lines[n:j])))
        i = j
    return steps


def samples(pages: list[Path] = PAGES) -> Iterator[Sample]:
    for page in pages:
        text = page.read_text()
        for m in SAMPLE.finditer(text):
            line = text[: m.start()].count("\n") + 1
            yield Sample(page, line, m.start(1), m.end(1), _steps(m.group(1)))


def run(step: Step, scratch: Path, last_code: int) -> tuple[str, int]:
    """What the step's command prints now (stdout and stderr, as a terminal shows them
    when both go to one pipe), and its exit code. `echo $?` prints the previous code."""
    argv = step.argv()
    if argv == ["echo", "$?"]:
        return f"{last_code}\n", 0
    if argv[0] != "zombiesim":
        raise ValueError(f"a sample runs zombiesim or `echo $?`, not {argv[0]}")
    env = {**os.environ, "COLUMNS": COLUMNS, "ZOMBIESIM_TRACE_CACHE": "off"}
    env.pop("FORCE_COLOR", None)
    proc = subprocess.run(
        [sys.executable, "-m", "zombiesim", *argv[1:]],
        cwd=scratch,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=900,
    )
    text = "\n".join(line.rstrip() for line in proc.stdout.splitlines()) + "\n"
    return text, proc.returncode


def _label(line: str) -> str:
    """What a summary line is about: the text before its first run of two spaces, or its
    first word."""
    stripped = line.strip()
    head = re.split(r"\s{2,}", stripped, maxsplit=1)[0]
    return head if head != stripped else stripped.split(" ", 1)[0]


def excerpt(shown: str, printed: str) -> str:
    """`printed` cut to the lines `shown` shows: each shown line replaced by the next
    printed line about the same thing (`_label`), `...` kept where it stands. A shown line
    whose label is no longer printed stays as it is (and so no longer matches)."""
    out, lines, at = [], printed.splitlines(), 0
    for line in shown.splitlines():
        if line.strip() == "...":
            out.append(line)
            continue
        for k in range(at, len(lines)):
            if _label(lines[k]) == _label(line):
                out.append(lines[k])
                at = k + 1
                break
        else:
            out.append(line + "  <no longer printed>")
    return "\n".join(out) + "\n"


def regenerate(sample: Sample, scratch: Path) -> list[Step]:
    """The sample's steps with what their commands print now (excerpts stay excerpts)."""
    steps, code = [], 0
    for step in sample.steps:
        printed, code = run(step, scratch, code)
        steps.append(Step(step.command, excerpt(step.output, printed) if step.excerpt else printed))
    return steps


def normalized(text: str) -> str:
    for pattern, stand_in in VOLATILE:
        text = pattern.sub(stand_in, text)
    return "\n".join(line.rstrip() for line in text.splitlines())


def scratch_folder(base: Path) -> Path:
    for name in LINKED:
        (base / name).symlink_to(ROOT / name)
    return base


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 on drift")
    parser.add_argument("--only", metavar="PAGE:LINE", action="append", help="these samples")
    args = parser.parse_args(argv)
    chosen = [s for s in samples() if not args.only or s.name in args.only]
    drifted: dict[tuple[Path, int], list[Step]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        scratch = scratch_folder(Path(tmp))
        for s in chosen:
            steps = regenerate(s, scratch)
            same = normalized(Sample(s.page, s.line, 0, 0, steps).text()) == normalized(s.text())
            if not same:
                drifted[(s.page, s.start)] = steps
            print(f"{'same   ' if same else 'drifted'} {s.name}", flush=True)
    if args.check:
        if drifted:
            print(f"{len(drifted)} samples no longer match: run python docs/samples.py")
        return 1 if drifted else 0
    for page in {p for p, _ in drifted}:
        text = page.read_text()
        for s in sorted((s for s in chosen if s.page == page), key=lambda s: -s.start):
            steps = drifted.get((page, s.start))
            if steps is not None:
                text = text[: s.start] + Sample(page, 0, 0, 0, steps).text() + text[s.end :]
        tmp_page = page.with_suffix(".md.tmp")
        tmp_page.write_text(text)
        os.replace(tmp_page, page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
