#!/bin/sh
# t_p2p with 1, 2, 4, 8 ranks over shm and tcp, then once with MPIX_Dynamic_bcast on the topology-ID tree
# (NMAD_MPI_DBCAST_TREE=topo, two ranks per host in the topology IDs).
"$top_srcdir/tests/mpi/matrix.sh" tests/mpi/t_p2p || exit 1
if NMAD_MPI_DBCAST_TREE=topo NMAD_MCAST_TOPO=2 "$top_srcdir/tests/mpi/run.sh" shm 4 tests/mpi/t_p2p >p2p-topo.$$.log 2>&1; then
  echo "ok   t_p2p shm n=4 NMAD_MPI_DBCAST_TREE=topo"
else
  echo "FAIL t_p2p shm n=4 NMAD_MPI_DBCAST_TREE=topo"; tail -n 20 p2p-topo.$$.log; rm -f p2p-topo.$$.log; exit 1
fi
rm -f p2p-topo.$$.log
