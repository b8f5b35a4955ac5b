/* libfabric loaded on demand by the ofi driver (nm_ofi_lib.h). */
#include "drivers/ofi/nm_ofi_lib.h"
#include <nmad/nm_errno.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* The soname of the libfabric ABI the headers describe (FI_MAJOR_VERSION 1). */
#define NM_OFI_LIB_SONAME "libfabric.so.1"

/* dlsym() into a function pointer of any type: through a void * copy, as POSIX allows. */
static int nm_ofi_lib_sym(void *handle, const char *name, void *fn_out, size_t fn_size)
{
  void *p = dlsym(handle, name);
  if (!p) {
    fprintf(stderr, "nmad: ofi: %s has no %s (%s)\n", NM_OFI_LIB_SONAME, name, dlerror());
    return -NM_ENOTSUP;
  }
  memcpy(fn_out, &p, fn_size);
  return NM_ESUCCESS;
}

int nm_ofi_lib_open(struct nm_ofi_lib_s *lib)
{
  memset(lib, 0, sizeof(*lib));
  void *h = dlopen(NM_OFI_LIB_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!h) {
    fprintf(stderr, "nmad: ofi: cannot load %s (%s): the libfabric drivers need it (Debian: apt-get install "
                    "libfabric1)\n", NM_OFI_LIB_SONAME, dlerror());
    return -NM_ENOTSUP;
  }
  int err = nm_ofi_lib_sym(h, "fi_getinfo", &lib->getinfo, sizeof(lib->getinfo));
  if (!err)
    err = nm_ofi_lib_sym(h, "fi_freeinfo", &lib->freeinfo, sizeof(lib->freeinfo));
  if (!err)
    err = nm_ofi_lib_sym(h, "fi_dupinfo", &lib->dupinfo, sizeof(lib->dupinfo));
  if (!err)
    err = nm_ofi_lib_sym(h, "fi_fabric", &lib->fabric, sizeof(lib->fabric));
  if (!err)
    err = nm_ofi_lib_sym(h, "fi_strerror", &lib->strerror, sizeof(lib->strerror));
  if (err) {
    dlclose(h);
    memset(lib, 0, sizeof(*lib));
    return err;
  }
  lib->handle = h;
  return NM_ESUCCESS;
}

void nm_ofi_lib_close(struct nm_ofi_lib_s *lib)
{
  if (lib->handle)
    dlclose(lib->handle);
  memset(lib, 0, sizeof(*lib));
}
