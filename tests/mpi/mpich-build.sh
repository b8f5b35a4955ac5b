#!/bin/sh
# The build phase of the MPICH test suite (tests/mpi/mpich-testsuite.sh with MPICH_TESTS_PHASE=build): gets the
# sources, configures them with nmad's mpicc and builds the curated programs. make check starts it first, beside
# the other tests (compiling does not mind the load); mpich-testsuite.sh then runs the programs once the other MPI
# tests are done. Exit status as mpich-testsuite.sh's (0 built, 77 skipped, 99 setup error).
MPICH_TESTS_PHASE=build
export MPICH_TESTS_PHASE
exec "$(dirname "$0")/mpich-testsuite.sh"
