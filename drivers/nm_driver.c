/* Driver selection by NMAD_DRIVER word. */
#include "nm_driver.h"
#include <string.h>

const struct nm_drv_ops_s *nm_driver_lookup(const char *word)
{
  if (strcmp(word, "self") == 0)
    return &nm_drv_self_ops;
  if (strcmp(word, "sm") == 0)
    return &nm_drv_sm_ops;
  if (strcmp(word, "ntcp") == 0)
    return &nm_drv_tcp_ops;
  return &nm_drv_ofi_ops; /* the ofi driver checks the word against its provider table */
}
