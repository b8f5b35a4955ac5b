/**
 * @file nm_session_interface.h
 * @brief NewMadeleine's session header over nmad: nm_session_t is nmad's own session (native). NewMadeleine's
 *        nm_session_open(&session, name) takes no core here: nmad's nm_session_open(core, name, &session) is the
 *        call (nmad/nm_core.h); StarPU gets its session from nm_mpi_nmad_dest() and opens none.
 */
#ifndef NM_SESSION_INTERFACE_H
#define NM_SESSION_INTERFACE_H
#include <nm_public.h>
#include <nmad/nm_core.h>
#endif /* NM_SESSION_INTERFACE_H */
