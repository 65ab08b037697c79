"""Runs the commands of one section of a Markdown page, as a reader would.

    run-doc-commands.py PAGE.md "SECTION" --build=BUILD [--no-warnings]

Every fenced block under the heading SECTION (up to the next heading of the
same or a higher level) runs in order, in one fresh folder: ```sh blocks with
bash -e -o pipefail, ```python blocks with this interpreter; blocks in other
languages are text. The folder holds `build`, a link to BUILD, so that
`build/bin/remat` is the built tool, and BUILD/bin leads PATH, so that `remat`
is too. A block that exits non-zero fails the check, and so, with
--no-warnings, does any line of its output that reads `warning` (remat's,
ort-run's and Python's warnings all do). Prints each block's command lines
and output; exits 1 with `PAGE:LINE: ...` on the first failure.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

RUNNERS = {"sh": ["bash", "-e", "-o", "pipefail"], "python": [sys.executable]}


def section_blocks(path, title):
    """The (line number, language, text) of each fenced block of SECTION."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    level = None
    blocks = []
    fence = None
    for number, line in enumerate(lines, 1):
        if fence is not None:
            if line.startswith("```"):
                if level is not None:
                    blocks.append((fence[0], fence[1], "\n".join(fence[2]) + "\n"))
                fence = None
            else:
                fence[2].append(line)
            continue
        if line.startswith("```"):
            fence = (number, line[3:].strip(), [])
            continue
        heading = re.match(r"(#+) (.*)$", line)
        if heading:
            depth, text = len(heading.group(1)), heading.group(2).strip()
            if level is not None and depth <= level:
                break
            if text == title:
                level = depth
    if level is None:
        sys.exit(f"{path}: error: no section '{title}'")
    return blocks


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("page")
    parser.add_argument("section")
    parser.add_argument("--build", required=True)
    parser.add_argument("--no-warnings", action="store_true")
    args = parser.parse_args()
    blocks = [b for b in section_blocks(args.page, args.section) if b[1] in RUNNERS]
    if not blocks:
        sys.exit(f"{args.page}: error: section '{args.section}' has no sh or python block")
    build = os.path.abspath(args.build)
    env = dict(os.environ, PATH=os.path.join(build, "bin") + os.pathsep + os.environ["PATH"])
    with tempfile.TemporaryDirectory() as work:
        os.symlink(build, os.path.join(work, "build"))
        for number, language, text in blocks:
            print(f"== {args.page}:{number} ({language})\n{text}", flush=True)
            run = subprocess.run(RUNNERS[language] + ["-"], input=text, cwd=work, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            print(run.stdout, flush=True)
            if run.returncode != 0:
                sys.exit(f"{args.page}:{number}: error: the {language} block exited {run.returncode}")
            warned = [l for l in run.stdout.split("\n") if re.search(r"warning", l, re.I)]
            if args.no_warnings and warned:
                sys.exit(f"{args.page}:{number}: error: the {language} block warned: {warned[0]}")
    print(f"{len(blocks)} blocks of '{args.section}' ran")


if __name__ == "__main__":
    main()
