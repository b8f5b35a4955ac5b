/**
 * @file nm_launcher_interface.h
 * @brief NewMadeleine's launcher header over nmad: nmad's launcher (nmad/nm_launcher.h), native. Its calls take a
 *        launcher handle (nm_launcher_init(&l, &argc, &argv)) where NewMadeleine's use a process-wide one; StarPU
 *        includes this header but calls none of them (the MPI shim launches).
 */
#ifndef NM_LAUNCHER_INTERFACE_H
#define NM_LAUNCHER_INTERFACE_H
#include <nm_public.h>
#include <nmad/nm_launcher.h>
#endif
