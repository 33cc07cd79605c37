# SPDX-License-Identifier: BSD-3-Clause
# Shell functions for the benchmarks that run jobs on netlab with settings;
# sourced, not run.
#   wsp_setting_args MPI [NAME VALUE ...]
#       sets the array setting_args: the `netlab run` arguments that give
#       every rank of a job under MPI (openmpi or mpich) these settings. A
#       NAME starting with WSP_ is an environment variable of wirespeed's;
#       other names are Open MPI MCA parameters, or MPICH (and UCX)
#       environment variables.

wsp_setting_args() {
  local m=$1
  shift
  setting_args=()
  while [ $# -ge 2 ]; do
    if [[ $1 == WSP_* && $m = openmpi ]]; then
      setting_args+=(--mpi-arg=-x --mpi-arg="$1=$2")
    elif [ "$m" = openmpi ]; then
      setting_args+=(--mpi-arg=--mca --mpi-arg="$1" --mpi-arg="$2")
    else
      setting_args+=(--mpi-arg=-genv --mpi-arg="$1" --mpi-arg="$2")
    fi
    shift 2
  done
}

#   wsp_tunings MPI WHAT
#       prints the hand tunings of bench/tunings for MPI whose FOR names any
#       of WHAT (a comma list: collectives, sites, p2p, shuffle), one per
#       line as "LABEL: NAME VALUE ...", the form the scripts' WSP_*_TUNED
#       overrides take.
#   wsp_tuning MPI LABEL
#       prints the settings (NAME VALUE ...) of the tuning LABEL of MPI in
#       bench/tunings; fails, naming it, when there is none.
#   wsp_tuning_best MPI COLL@SHAPE
#       prints the one tuning marked best for COLL on netlab SHAPE (4x1, 8x1)
#       in the same form, or nothing.
wsp_tunings() {
  awk -v mpi="$1" -v what="$2" '
    /^[[:space:]]*(#|$)/ { next }
    $1 == mpi {
      n = split($3, f, ","); m = split(what, w, ","); hit = 0
      for (i = 1; i <= n; i++) for (j = 1; j <= m; j++) if (f[i] == w[j]) hit = 1
      if (!hit) next
      line = $2 ":"; for (i = 5; i <= NF; i++) line = line " " $i
      print line
    }' "$(dirname "${BASH_SOURCE[0]}")/tunings"
}

wsp_tuning_best() {
  awk -v mpi="$1" -v want="$2" '
    /^[[:space:]]*(#|$)/ { next }
    $1 == mpi {
      n = split($4, b, ","); hit = 0
      for (i = 1; i <= n; i++) if (b[i] == want) hit = 1
      if (!hit) next
      line = $2 ":"; for (i = 5; i <= NF; i++) line = line " " $i
      print line; exit
    }' "$(dirname "${BASH_SOURCE[0]}")/tunings"
}

wsp_tuning() {
  local line
  line=$(awk -v mpi="$1" -v label="$2" '
    /^[[:space:]]*(#|$)/ { next }
    $1 == mpi && $2 == label {
      line = ""; for (i = 5; i <= NF; i++) line = line (i > 5 ? " " : "") $i
      print line; found = 1; exit
    }
    END { exit !found }' "$(dirname "${BASH_SOURCE[0]}")/tunings") || {
    echo "bench/tunings has no tuning '$2' for $1" >&2; return 1; }
  printf '%s\n' "$line"
}
