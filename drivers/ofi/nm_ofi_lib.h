/**
 * @file nm_ofi_lib.h
 * @brief libfabric loaded when an ofi driver opens, not when libnmad loads.
 *
 * Debian's libfabric links the psm provider's libinfinipath, whose constructor sleeps about 0.2 s (some 700
 * nanosleeps of 125 us) in every process that loads it, whether or not it ever opens a fabric. A job that runs
 * over sm, the simulator or ntcp needs none of libfabric, so libnmad does not link it: the ofi driver dlopen()s
 * libfabric.so.1 at its open and takes the few functions that are not inline wrappers around a fid's ops.
 * doc/architecture.md, "libfabric on demand"; doc/performance.md, "Start-up without libfabric".
 */
#ifndef NM_OFI_LIB_H
#define NM_OFI_LIB_H

#include <rdma/fabric.h>
#include <stdint.h>

/** libfabric's exported functions that the ofi driver calls (every other fi_* call is an inline wrapper). One per
 *  driver instance (DESIGN.md rule 1: no global state); the dynamic loader counts the references. */
struct nm_ofi_lib_s {
  void *handle; /**< dlopen() handle of libfabric.so.1; NULL before nm_ofi_lib_open() and after a failure */
  int (*getinfo)(uint32_t version, const char *node, const char *service, uint64_t flags,
                 const struct fi_info *hints, struct fi_info **info);
  void (*freeinfo)(struct fi_info *info);
  struct fi_info *(*dupinfo)(const struct fi_info *info);
  int (*fabric)(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
  const char *(*strerror)(int errnum);
};

/**
 * Load libfabric.so.1 (RTLD_NODELETE: it stays mapped once loaded, since providers may keep state past the last
 * close) and resolve the functions of @p lib.
 * @param lib  zeroed or closed; filled on success.
 * @return NM_ESUCCESS; -NM_ENOTSUP if libfabric.so.1 or one of its functions cannot be found (the reason is
 *         printed on stderr, with the package to install). Not thread-safe for one @p lib; any number of
 *         instances may be opened from different threads (dlopen() is).
 */
int nm_ofi_lib_open(struct nm_ofi_lib_s *lib);

/** Drop @p lib's reference (the library itself stays mapped, see nm_ofi_lib_open()); @p lib may be unopened. */
void nm_ofi_lib_close(struct nm_ofi_lib_s *lib);

#endif
