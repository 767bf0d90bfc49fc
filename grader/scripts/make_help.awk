# make_help.awk — `make help`: what the Makefile's own ## comments say, grouped by who uses it.
#
# The Makefile is the one source; three kinds of comment line feed this list:
#   ##@ <group>                  a heading: the targets below it, up to the next ##@, are <group>'s.
#                                A group can be named again further down; groups print in the order
#                                they are first named, each target once, in the Makefile's order.
#   <target>: <prereqs>  ## <what it does>
#                                a target that `make help` lists ("(instructors) " and "(TAs) " are
#                                left out: the heading says it)
#   ## <NAME>=<value> <what it does>
#                                a variable (on a line of its own, above where it is set); "(instructors) "
#                                marks one only the instructors' targets read
# The default goal, `all`, is listed as plain `make`. In a handout (-v handout=1: no reference sources,
# the Makefile says) the instructors' group and variables are left out: their commands need the
# instructor repository.
#
# Run: awk [-v handout=1] -f grader/scripts/make_help.awk Makefile
BEGIN { group = "Other"; staff = "Instructors & TAs" }

function add_group(g) {
    if (!(g in rows)) { order[++groups] = g; rows[g] = "" }
}

/^##@ / {
    group = substr($0, 5)
    add_group(group)
    next
}

/^## [A-Z][A-Z0-9_]*=/ {
    line = substr($0, 4)
    split_at = index(line, " ")
    name = split_at ? substr(line, 1, split_at - 1) : line
    text = split_at ? substr(line, split_at + 1) : ""
    sub(/^ +/, "", text)
    if (sub(/^\(instructors\) /, "", text) && handout) next
    vars[++nvars] = sprintf("  %-30s %s", name, text)
    next
}

/^[a-zA-Z0-9_-]+:([^=]|$).*## / {
    target = substr($0, 1, index($0, ":") - 1)
    text = substr($0, index($0, "## ") + 3)
    sub(/^\((instructors|TAs)\) /, "", text)
    if (handout && group == staff) next
    add_group(group)
    rows[group] = rows[group] sprintf("  make %-22s %s\n", target == "all" ? "" : target, text)
}

END {
    print "GEMM Lab: make <target> [VARIABLE=value ...]"
    for (i = 1; i <= groups; i++) {
        if (rows[order[i]] == "") continue
        printf "\n%s:\n%s", order[i], rows[order[i]]
    }
    if (nvars) {
        print "\nVariables (e.g. make check STAGE=tiled/16 PREC=float):"
        for (i = 1; i <= nvars; i++) print vars[i]
    }
}
