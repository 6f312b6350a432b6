#!/usr/bin/env bash
# Runs ch09_nccl_mpi with one MPI rank per visible GPU (ctest: gpu.ch09_nccl_mpi).
#   run_mpi.sh MPIEXEC PROGRAM [ARGS...]
# Exit 77 (skipped) with a reason when fewer than 2 GPUs are visible.
set -u
mpiexec=$1; program=$2; shift 2
gpus=$("$program" --count-gpus) || { echo "run_mpi.sh: $program --count-gpus failed"; exit 1; }
if [ "${gpus:-0}" -lt 2 ]; then
  echo "skipped: ch09_nccl_mpi needs 2 or more GPUs for one process per GPU (this machine has ${gpus:-0})"
  exit 77
fi
extra=()
# Open MPI refuses to start as root unless told; MPICH has no such option.
if "$mpiexec" --version 2>&1 | grep -qiE "Open MPI|OpenRTE"; then
  [ "$(id -u)" -eq 0 ] && extra+=(--allow-run-as-root)
  extra+=(--oversubscribe)
  # Containers often lack the kernel support for Open MPI's single-copy transport.
  export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
fi
echo "+ $mpiexec -n $gpus ${extra[*]} $program $*"
exec "$mpiexec" -n "$gpus" "${extra[@]}" "$program" "$@"
