# SPDX-License-Identifier: BSD-3-Clause
# Shell functions for the benchmarks that measure a netlab lab's network map
# and run with it attached; sourced, not run.
#   wsp_lab_probe ROOT LAB MPI MAP   wsp-probe at its defaults on every host of
#                                    LAB under MPI, writing MAP; prints the
#                                    job's wall time
#   wsp_netmap_args MPI MAP          sets the array netmap_args: the
#                                    `netlab run` arguments that give every
#                                    rank WSP_NETMAP=MAP (and WSP_LOG, when
#                                    set) under MPI

wsp_lab_probe() {
  local root=$1 lab=$2 mpi=$3 map=$4 start
  start=$(date +%s.%N)
  # MPICH 4.0.2 + UCX tcp can hang in MPI_Finalize after the work is done
  # (docs/netlab.md): netlab ends such a job 60 s after the "finished" line.
  "$root/scripts/netlab" run --name "$lab" --mpi "$mpi" --ppn 1 --time-limit 900 \
    --done-line "# wsp-probe: finished" --done-grace 60 -- \
    "$root/build/$mpi/tools/wsp-probe" --out "$map" </dev/null || [ $? = 124 ]
  echo "the probe job took $(python3 -c "import time; print(f'{time.time() - $start:.1f}')") s of wall time (mpirun included)"
}

wsp_netmap_args() {
  if [ "$1" = openmpi ]; then netmap_args=(--mpi-arg=-x --mpi-arg="WSP_NETMAP=$2")
  else netmap_args=(--mpi-arg=-genv --mpi-arg=WSP_NETMAP --mpi-arg="$2"); fi
  # WSP_LOG, when set, reaches the ranks too (WSP_LOG=debug shows, say,
  # whether attaching a refreshed map kept the trees).
  if [ -n "${WSP_LOG:-}" ]; then
    if [ "$1" = openmpi ]; then netmap_args+=(--mpi-arg=-x --mpi-arg="WSP_LOG=$WSP_LOG")
    else netmap_args+=(--mpi-arg=-genv --mpi-arg=WSP_LOG --mpi-arg="$WSP_LOG"); fi
  fi
}
