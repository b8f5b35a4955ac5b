/**
 * @file nm_core_interface.h (NewMadeleine compatibility)
 * @brief NewMadeleine's core header as StarPU includes it: nmad's public core interface (nmad/nm_core.h: sessions,
 *        progress, waits, the core lock) and the common names of nm_public.h (NM_TAG_MAX...). Native.
 *        (nmad's internal nmad/core/nm_core_interface.h is another file, never installed.)
 */
#ifndef NM_NEWMAD_CORE_INTERFACE_H
#define NM_NEWMAD_CORE_INTERFACE_H
#include <nm_public.h>
#include <nmad/nm_core.h>
#endif
