#!/bin/sh
# Run a simulator test program under nmad-sim on the tests' flat platform (CM02 model: alpha + m/beta exactly),
# with a wall-clock limit so that a simulation that hangs is stopped (timeout kills it, then SIGKILL 10 s later).
# usage: sim_run.sh N PROGRAM [ARGS...]     PROGRAM: st_sendrecv, st_rpc, st_bcast, st_model
# Extra nmad-sim options in NMAD_SIM_OPTS; another platform file in NMAD_SIM_PLATFORM. Exit status: nmad-sim's (0 when every rank returned 0).
n=$1 prog=$2
shift 2
src=${srcdir:-.}
exec timeout -k 10 ${NMAD_SIM_TIMEOUT:-300} ./nmad-sim -n "$n" --platform "${NMAD_SIM_PLATFORM:-$src/tests/sim/flat-64.xml}" \
  --cfg=network/model:CM02 $NMAD_SIM_OPTS "tests/sim/.libs/$prog.so" "$@"
