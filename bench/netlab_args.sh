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
