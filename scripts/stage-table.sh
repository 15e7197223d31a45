#!/usr/bin/env bash
# The stage list, written out from its one source: the `stage NAME
# "description"` declarations of scripts/test.sh and scripts/stages/*.sh
# (read through `bash scripts/test.sh --list`).
#
#   bash scripts/stage-table.sh           rewrite the copies
#   bash scripts/stage-table.sh --check   fail when a copy differs (the `doc` stage)
#
# The copies: the list in scripts/test.sh's header (between its
# "(stage list begin)" and "(stage list end)" lines) and a markdown table
# between <!-- stages begin --> and <!-- stages end --> in README.md and
# docs/*.md, wherever those markers are. The check also runs every
# documented stage name: each `bash scripts/test.sh NAME...` in README.md,
# docs/, fuzz/ and scripts/ must name declared stages.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=write
case "${1:-}" in
    --check) mode=check ;;
    "") ;;
    *)
        echo "usage: bash scripts/stage-table.sh [--check]" >&2
        exit 2
        ;;
esac

list="$(bash scripts/test.sh --list)"
[ -n "$list" ] || { echo "stage-table: bash scripts/test.sh --list printed nothing" >&2; exit 1; }

STAGE_LIST="$list" MODE="$mode" python3 - <<'PY'
import glob, os, re, sys

stages = []
for line in os.environ["STAGE_LIST"].splitlines():
    name, _, description = line.partition(" ")
    stages.append((name, description.strip()))
names = {name for name, _ in stages}
check = os.environ["MODE"] == "check"
problems = []


def replace_block(path, begin, end, body):
    text = open(path).read()
    lines = text.split("\n")
    try:
        first = next(i for i, l in enumerate(lines) if l.strip() == begin)
        last = next(i for i, l in enumerate(lines) if l.strip() == end and i > first)
    except StopIteration:
        return False
    new = "\n".join(lines[: first + 1] + body + lines[last:])
    if new != text:
        if check:
            problems.append(f"{path}: the stage list differs from the declarations "
                            "(run bash scripts/stage-table.sh)")
        else:
            open(path, "w").write(new)
            print(f"stage-table: wrote {path}")
    return True


width = max(len(n) for n, _ in stages) + 2
header = [f"#   {n.ljust(width)}{d}".rstrip() for n, d in stages]
if not replace_block("scripts/test.sh", "# (stage list begin)", "# (stage list end)", header):
    problems.append("scripts/test.sh: no (stage list begin)/(stage list end) lines in the header")

table = ["", "| stage | what it checks |", "|---|---|"]
table += ["| `%s` | %s |" % (n, d.replace("|", "\\|")) for n, d in stages]
table += [""]
docs = ["README.md"] + sorted(glob.glob("docs/*.md"))
for path in docs:
    if os.path.exists(path):
        replace_block(path, "<!-- stages begin -->", "<!-- stages end -->", table)

# Every documented `bash scripts/test.sh NAME...` names real stages.
command = re.compile(r"bash scripts/test\.sh((?: [a-z][a-z0-9-]*)+)")
sources = docs + glob.glob("docs/**/*.md", recursive=True) + glob.glob("fuzz/*.md") \
    + glob.glob("fuzz/*.toml") + glob.glob("scripts/**/*.sh", recursive=True) + [".ci/run"]
for path in sorted(set(sources)):
    if not os.path.exists(path):
        continue
    for number, line in enumerate(open(path), 1):
        for match in command.finditer(line):
            for word in match.group(1).split():
                if word not in names:
                    problems.append(f"{path}:{number}: `bash scripts/test.sh {match.group(1).strip()}`: "
                                    f"no stage {word!r} (bash scripts/test.sh --list)")

for p in problems:
    print(p, file=sys.stderr)
if problems:
    sys.exit(1)
if check:
    print(f"stage-table: {len(stages)} stages; test.sh's header and the stage tables agree; "
          "every documented stage name is a stage")
PY
