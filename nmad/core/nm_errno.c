/* Error code texts. */
#include <nmad/nm_errno.h>

static const char *const nm_err_text[NM_ERR_MAX] = {
  [NM_ESUCCESS] = "success",
  [NM_EUNKNOWN] = "unknown error",
  [NM_EINVAL] = "invalid argument",
  [NM_ENOMEM] = "out of memory",
  [NM_EAGAIN] = "not complete yet",
  [NM_ETIMEDOUT] = "deadline passed",
  [NM_ETRUNCATED] = "message truncated: receive buffer too small",
  [NM_ECANCELED] = "request cancelled",
  [NM_ECLOSED] = "peer gone (process died or gate closed)",
  [NM_EPROTO] = "malformed packet from the network (protocol error)",
  [NM_ENOTSUP] = "not supported",
  [NM_EBUSY] = "resource busy",
  [NM_ENOTFOUND] = "not found",
  [NM_EDRIVER] = "network driver error",
  [NM_EALREADY] = "already done",
};

const char *nm_strerror(int err)
{
  if (err < 0)
    err = -err;
  if (err >= NM_ERR_MAX || !nm_err_text[err])
    return "invalid error code";
  return nm_err_text[err];
}
