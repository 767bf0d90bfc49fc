#!/usr/bin/env python3
"""suggest_target.py — what `make <goal>` says when the goal is no target of the Makefile (its .DEFAULT
rule): the nearest of the targets `make help` lists, by difflib, instead of make's bare "No rule to make
target". Reads `make help`'s text (grader/scripts/make_help.awk) on stdin.

    awk -f grader/scripts/make_help.awk Makefile | python3 grader/scripts/suggest_target.py chek
    no target 'chek'; did you mean 'check'? (make help lists every target)
"""
import difflib
import re
import sys


def listed_targets(help_text):
    """The targets of `make help`'s lines "  make <target>  <what it does>" (plain `make` left out)."""
    return re.findall(r"^  make (\S+) ", help_text, re.M)


def message(goal, targets):
    near = difflib.get_close_matches(goal, targets, n=3, cutoff=0.6)
    if not near:
        return f"no target '{goal}', and no file of that name (make help lists every target)"
    quoted = [f"'{t}'" for t in near]
    choice = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f"no target '{goal}'; did you mean {choice}? (make help lists every target)"


if __name__ == "__main__":
    print(message(sys.argv[1], listed_targets(sys.stdin.read())))
