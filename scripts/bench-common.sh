# Shared by the bench-*.sh scripts (sourced): reading report fields and
# writing zoo models.

# field NAME FILE: the value of a top-level field of a JSON report.
field() { sed -n "s/^  \"$1\": \\(.*\\),\$/\\1/p" "$2"; }

# zoo_model REMAT WORKDIR SPEC: writes the zoo model SPEC (a model with
# options, e.g. "mlp --layers=100") to WORKDIR and sets `name` (its file
# stem) and `ops` (its op count).
zoo_model() {
  name=$(echo "$3" | tr ' =' '__' | tr -d -- '-')
  # shellcheck disable=SC2086 # the spec is words on purpose
  "$1" zoo $3 -o "$2/$name.remat"
  ops=$("$1" stats "$2/$name.remat" | sed -n 's/^ops *\([0-9]*\).*/\1/p')
}
