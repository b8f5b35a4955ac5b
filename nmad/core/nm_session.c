/* Sessions: named tag namespaces on a core. Both sides derive the same 32-bit id from the name. */
#include "nm_core_private.h"
#include <stdlib.h>
#include <string.h>

/* FNV-1a: a fixed, well-known hash so that every process maps a name to the same id. */
static uint32_t nm_session_hash(const char *name)
{
  uint32_t h = 2166136261u;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    h = (h ^ *p) * 16777619u;
  return h;
}

/* The id's top bit says how the session orders messages (nm_seq_tag()): every process derives the same id from
 * the name and the flags, also for messages that arrive before the session is open here. */
int nm_session_open_flags(nm_core_t core, const char *name, unsigned flags, nm_session_t *out)
{
  if (!core || !name || !out || !name[0] || strlen(name) >= NM_SESSION_NAME_MAX ||
      (flags & ~NM_SESSION_ORDER_BY_CONTEXT))
    return -NM_EINVAL;
  NM_CORE_LOCKED(core);
  uint32_t id = nm_session_hash(name) & ~NM_SESSION_ID_BY_CONTEXT;
  if (flags & NM_SESSION_ORDER_BY_CONTEXT)
    id |= NM_SESSION_ID_BY_CONTEXT;
  struct nm_session_s *s = nm_core_find_session(core, id);
  if (s)
    return strcmp(s->name, name) == 0 ? -NM_EALREADY : -NM_EINVAL; /* hash collision: pick another name */
  s = calloc(1, sizeof(*s));
  if (!s)
    return -NM_ENOMEM;
  s->core = core;
  s->id = id;
  strcpy(s->name, name);
  if (nm_match_session_open(s)) {
    free(s);
    return -NM_ENOMEM;
  }
  s->next = core->sessions;
  core->sessions = s;
  nm_match_adopt_orphans(s);
  *out = s;
  return NM_ESUCCESS;
}

int nm_session_open(nm_core_t core, const char *name, nm_session_t *out)
{
  return nm_session_open_flags(core, name, 0, out);
}

static int nm_session_has_sends(struct nm_session_s *s)
{
  struct nm_core_s *core = s->core;
  NM_CORE_FOR_GATES(core, g) {
    for (struct nm_req_s *r = g->send_queue.head; r; r = r->next)
      if (r->session == s)
        return 1;
    for (struct nm_req_s *r = g->rdv_sends.head; r; r = r->next)
      if (r->session == s)
        return 1;
  }
  return 0;
}

int nm_session_close(nm_session_t s)
{
  if (!s)
    return -NM_EINVAL;
  struct nm_core_s *core = s->core;
  NM_CORE_LOCKED(core);
  if (nm_session_has_sends(s))
    return -NM_EBUSY;
  if (s->rpc_close) {
    s->rpc_close(s->rpc);
    s->rpc_close = NULL;
    s->rpc = NULL;
  }
  nm_match_session_close(s);
  for (struct nm_session_s **pp = &core->sessions; *pp; pp = &(*pp)->next)
    if (*pp == s) {
      *pp = s->next;
      break;
    }
  free(s);
  return NM_ESUCCESS;
}

nm_core_t nm_session_get_core(nm_session_t s)
{
  return s->core;
}
