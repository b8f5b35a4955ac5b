/**
 * @file nmad_run.c
 * @brief `nmad-run`: start N processes of one program on this host, serve their bootstrap collectives and
 *        report failures (documented in doc/nmad-run.md).
 *
 * Each child gets one end of a socketpair as NMAD_RUN_FD (frames of nmad_run_proto.h), NMAD_RUN_RANK,
 * NMAD_RUN_SIZE, the job key and the job's name (NMAD_RUN_JOB: what a killed rank left in /dev/shm under that
 * name is removed when the job ends, nm_ofi_region.h). One poll() loop serves everything: the children's frames (read incrementally, so a slow or
 * broken child never blocks the others), signals (through a self-pipe: SIGCHLD, and the signals forwarded to
 * the children), and three deadlines (--timeout, the grace period after a failure, SIGKILL after SIGTERM).
 * A rank that aborts (ABORT frame: MPI_Abort, nm_launcher_abort) ends the job at once: every rank gets SIGTERM,
 * then SIGKILL ABORT_KILL_DELAY_MS later, with no grace period, and the job exits with the rank's code.
 * This is a program, not the library: the self-pipe write end is the one static variable, as a signal
 * handler cannot reach anything else. All other state lives in struct run_s in main().
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2, strsignal */
#endif
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "nmad_run_bind.h"
#include "nmad_run_proto.h"
#include "drivers/ofi/nm_ofi_region.h"

#include <nmad/nm_errno.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXIT_USAGE 2      /**< bad command line or environment */
#define EXIT_NOTFOUND 127 /**< program not found or not executable */
#define EXIT_TIMEOUT 124  /**< --timeout expired (as timeout(1)) */
#define KILL_DELAY_MS 2000 /**< from SIGTERM to SIGKILL when nmad-run terminates the ranks itself */
/** From SIGTERM to SIGKILL after an abort: short, as users expect the job gone within a second, but long
 *  enough for a rank's SIGTERM handler to flush its output. */
#define ABORT_KILL_DELAY_MS 300
#define DEFAULT_GRACE_S 10.0

/** Write end of the self-pipe, for the signal handler only. */
static volatile sig_atomic_t sig_pipe_wr = -1;

static const int forwarded_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
#define N_FORWARDED (sizeof(forwarded_signals) / sizeof(forwarded_signals[0]))

struct xvar_s {
  char *name;
  char *value; /**< NULL: forward the current value (if set) */
};

struct rank_s {
  pid_t pid;
  int fd;          /**< our end of the socketpair, -1 once closed */
  int alive;       /**< not reaped yet */
  int spoke;       /**< sent at least one frame: it uses the bootstrap, so it must send FINI */
  int fini;        /**< sent FINI */
  int contributed; /**< contributed to the pending collective */
  struct nmad_run_rx_s rx;
};

struct coll_s {
  int active;
  uint32_t type;
  uint64_t len; /**< per-rank contribution, bytes */
  int count;
  uint8_t *buf; /**< n * len bytes */
};

struct run_s {
  int n;
  char **prog_argv;
  struct xvar_s *xvars;
  int nxvars;
  double timeout_s; /**< 0: none */
  double grace_s;
  enum nmad_run_bind_e bind;
  cpu_set_t *cpus; /**< --bind-to: CPU set of each rank (NULL without binding) */
  struct rlimit orig_nofile;
  pid_t self;
  int sig_rd;
  char job_key[NMAD_RUN_KEY_CHARS]; /**< given to every rank as NMAD_RUN_KEY (doc/reliability.md) */
  char job_name[NMAD_RUN_JOB_CHARS]; /**< given to every rank as NMAD_RUN_JOB (nmad_run_proto.h) */

  struct rank_s *ranks;
  int nalive;
  struct coll_s coll;
  int gone_rank; /**< first rank that died or finalized (collectives can no longer complete), or -1 */

  int64_t timeout_at; /**< ms on CLOCK_MONOTONIC, or -1 */
  int64_t grace_at;
  int64_t kill_at;
  int grace_used; /**< the grace period was started (only once) */
  int timed_out;
  int term_signals; /**< terminating signals received from outside */

  int abort_rank; /**< first rank that asked to abort the job, or -1 */
  int32_t abort_code; /**< its exit code (the job exits with it modulo 256) */
  int failed_before_abort; /**< a rank had already failed: the abort is a consequence, that failure decides */

  int first_signal; /**< signal that killed the first rank killed by a signal, or 0 */
  int max_status;
  int unfinalized; /**< some rank exited 0 without FINI */
};

static uint64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int64_t now_ms(void) { return (int64_t)(now_ns() / 1000000); }

static void on_signal(int sig)
{
  int saved = errno;
  unsigned char c = (unsigned char)sig;
  if (sig_pipe_wr >= 0)
    (void)!write(sig_pipe_wr, &c, 1);
  errno = saved;
}

static void usage(FILE *out)
{
  fprintf(out,
          "Usage: nmad-run -n N [-x VAR=VAL]... [-x VAR]... [--timeout S] [--grace S] [--bind-to P] prog [args...]\n"
          "Start N processes of prog on this host, connected to nmad-run for the nmad bootstrap.\n"
          "  -n N, -np N     number of processes (1..%d)\n"
          "  -x VAR=VAL      set VAR in every process; -x VAR forwards the current value of VAR\n"
          "  --timeout S     kill every process after S seconds and exit with %d (env NMAD_RUN_TIMEOUT;\n"
          "                  0 = no timeout, the default)\n"
          "  --grace S       after a process fails, wait S seconds for the others before terminating them\n"
          "                  (env NMAD_RUN_GRACE, default %g)\n"
          "  --bind-to P     none (default) or core: rank r runs on core r mod (number of cores)\n"
          "                  (env NMAD_RUN_BIND)\n"
          "  -h, --help      this help\n"
          "Exit status: C mod 256 if a process called abort with code C (MPI_Abort, nm_launcher_abort: every\n"
          "process is then terminated at once, as with Open MPI's mpirun) and none had failed before; else\n"
          "128+sig if a process was killed by signal sig (the first one), else the largest exit status (at least\n"
          "1 if a process exited without finalizing); %d on timeout; %d on a bad command line; %d if prog\n"
          "cannot be executed.\n"
          "See doc/nmad-run.md.\n",
          NMAD_RUN_MAX_RANKS, EXIT_TIMEOUT, DEFAULT_GRACE_S, EXIT_TIMEOUT, EXIT_USAGE, EXIT_NOTFOUND);
}

/* Seconds: a finite decimal number >= 0. */
static int parse_seconds(const char *s, double *out)
{
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno != 0 || end == s || *end != '\0' || !isfinite(v) || v < 0 || v > 1e8)
    return -1;
  *out = v;
  return 0;
}

static int parse_env_seconds(const char *var, double *out)
{
  const char *s = getenv(var);
  if (s == NULL || *s == '\0')
    return 0;
  if (parse_seconds(s, out)) {
    fprintf(stderr, "nmad-run: bad value '%s' for %s: expected a number of seconds >= 0\n", s, var);
    return -1;
  }
  return 0;
}

static int valid_var_name(const char *s, size_t len)
{
  if (len == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
    return 0;
  for (size_t i = 1; i < len; i++)
    if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
      return 0;
  return 1;
}

static int add_xvar(struct run_s *run, const char *arg)
{
  const char *eq = strchr(arg, '=');
  size_t nlen = eq ? (size_t)(eq - arg) : strlen(arg);
  if (!valid_var_name(arg, nlen)) {
    fprintf(stderr, "nmad-run: -x %s: not a valid variable name (expected VAR=VALUE or VAR)\n", arg);
    return -1;
  }
  static const char *const reserved[] = { "NMAD_RUN_FD", "NMAD_RUN_RANK", "NMAD_RUN_SIZE", NMAD_RUN_KEY_ENV,
                                          NMAD_RUN_JOB_ENV };
  for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
    if (strlen(reserved[i]) == nlen && strncmp(arg, reserved[i], nlen) == 0) {
      fprintf(stderr, "nmad-run: -x %s: %s is set by nmad-run itself\n", arg, reserved[i]);
      return -1;
    }
  struct xvar_s *x = realloc(run->xvars, sizeof(*x) * (size_t)(run->nxvars + 1));
  if (x == NULL)
    return -1;
  run->xvars = x;
  x[run->nxvars].name = strndup(arg, nlen);
  x[run->nxvars].value = eq ? strdup(eq + 1) : NULL;
  if (x[run->nxvars].name == NULL || (eq && x[run->nxvars].value == NULL))
    return -1;
  if (!eq && getenv(x[run->nxvars].name) == NULL)
    fprintf(stderr, "nmad-run: warning: -x %s: %s is not set here, so nothing is forwarded\n", arg,
            x[run->nxvars].name);
  run->nxvars++;
  return 0;
}

/* Option value: "--opt V" or "--opt=V". Returns NULL (and prints) when missing. */
static const char *opt_value(int argc, char **argv, int *i, const char *opt)
{
  size_t olen = strlen(opt);
  if (argv[*i][olen] == '=')
    return argv[*i] + olen + 1;
  if (*i + 1 >= argc) {
    fprintf(stderr, "nmad-run: option %s needs a value\n", opt);
    return NULL;
  }
  return argv[++*i];
}

static int is_opt(const char *arg, const char *opt)
{
  size_t olen = strlen(opt);
  return strncmp(arg, opt, olen) == 0 && (arg[olen] == '\0' || arg[olen] == '=');
}

/* @return 0 to run, 1 for -h (exit 0), -1 on error (exit EXIT_USAGE). */
static int parse_args(struct run_s *run, int argc, char **argv)
{
  run->grace_s = DEFAULT_GRACE_S;
  if (parse_env_seconds("NMAD_RUN_TIMEOUT", &run->timeout_s) || parse_env_seconds("NMAD_RUN_GRACE", &run->grace_s))
    return -1;
  const char *bind = getenv("NMAD_RUN_BIND");
  if (bind && *bind && nmad_run_bind_parse(bind, &run->bind)) {
    fprintf(stderr, "nmad-run: NMAD_RUN_BIND=%s: expected none or core\n", bind);
    return -1;
  }
  int i;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i], *v;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 1;
    } else if (strcmp(a, "--") == 0) {
      i++;
      break;
    } else if (is_opt(a, "-n") || is_opt(a, "-np") || is_opt(a, "--np")) {
      const char *opt = is_opt(a, "-n") ? "-n" : is_opt(a, "-np") ? "-np" : "--np";
      if ((v = opt_value(argc, argv, &i, opt)) == NULL)
        return -1;
      char *end;
      errno = 0;
      long n = strtol(v, &end, 10);
      if (errno || end == v || *end != '\0' || n < 1 || n > NMAD_RUN_MAX_RANKS) {
        fprintf(stderr, "nmad-run: %s %s: expected a number of processes in [1, %d]\n", opt, v,
                NMAD_RUN_MAX_RANKS);
        return -1;
      }
      run->n = (int)n;
    } else if (is_opt(a, "-x")) {
      if ((v = opt_value(argc, argv, &i, "-x")) == NULL || add_xvar(run, v))
        return -1;
    } else if (is_opt(a, "--timeout") || is_opt(a, "--grace")) {
      const char *opt = is_opt(a, "--timeout") ? "--timeout" : "--grace";
      if ((v = opt_value(argc, argv, &i, opt)) == NULL)
        return -1;
      if (parse_seconds(v, opt[2] == 't' ? &run->timeout_s : &run->grace_s)) {
        fprintf(stderr, "nmad-run: %s %s: expected a number of seconds >= 0\n", opt, v);
        return -1;
      }
    } else if (is_opt(a, "--bind-to")) {
      if ((v = opt_value(argc, argv, &i, "--bind-to")) == NULL)
        return -1;
      if (nmad_run_bind_parse(v, &run->bind)) {
        fprintf(stderr, "nmad-run: --bind-to %s: expected none or core\n", v);
        return -1;
      }
    } else if (a[0] == '-' && a[1] != '\0') {
      fprintf(stderr, "nmad-run: unknown option '%s' (try nmad-run -h)\n", a);
      return -1;
    } else {
      break;
    }
  }
  if (i >= argc) {
    fprintf(stderr, "nmad-run: no program given (try nmad-run -h)\n");
    return -1;
  }
  if (run->n == 0) {
    fprintf(stderr, "nmad-run: the number of processes is required: nmad-run -n N prog\n");
    return -1;
  }
  run->prog_argv = argv + i;
  return 0;
}

/* Is @p prog executable, either as a path or through PATH (as execvp will look it up)? */
static int find_program(const char *prog)
{
  struct stat st;
  if (strchr(prog, '/'))
    return access(prog, X_OK) == 0 && stat(prog, &st) == 0 && S_ISREG(st.st_mode) ? 0 : -1;
  const char *path = getenv("PATH");
  if (path == NULL)
    path = "/usr/local/bin:/usr/bin:/bin";
  size_t plen = strlen(prog);
  while (*path) {
    const char *colon = strchr(path, ':');
    size_t dlen = colon ? (size_t)(colon - path) : strlen(path);
    char buf[PATH_MAX];
    if (dlen + plen + 2 <= sizeof(buf)) {
      if (dlen == 0)
        snprintf(buf, sizeof(buf), "./%s", prog);
      else
        snprintf(buf, sizeof(buf), "%.*s/%s", (int)dlen, path, prog);
      if (access(buf, X_OK) == 0 && stat(buf, &st) == 0 && S_ISREG(st.st_mode))
        return 0;
    }
    if (!colon)
      break;
    path = colon + 1;
  }
  return -1;
}

/* Every rank needs one descriptor here (and one transiently while forking). */
static int raise_fd_limit(struct run_s *run)
{
  getrlimit(RLIMIT_NOFILE, &run->orig_nofile);
  rlim_t need = (rlim_t)run->n + 32;
  if (run->orig_nofile.rlim_cur != RLIM_INFINITY && run->orig_nofile.rlim_cur < need) {
    struct rlimit rl = run->orig_nofile;
    rl.rlim_cur = (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need) ? need : rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < need) {
      fprintf(stderr, "nmad-run: -n %d needs %lu file descriptors, the hard limit is %lu (ulimit -Hn)\n", run->n,
              (unsigned long)need, (unsigned long)rl.rlim_max);
      return -1;
    }
  }
  return 0;
}

/* Descriptors 0-2 must exist, or a socketpair could land on them and be mistaken for stdio in a child. */
static void ensure_stdio(void)
{
  for (int fd = 0; fd < 3; fd++)
    if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      int n = open("/dev/null", O_RDWR);
      if (n >= 0 && n != fd) {
        dup2(n, fd);
        close(n);
      }
    }
}

static int setup_signals(struct run_s *run)
{
  int p[2];
  if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
    perror("nmad-run: pipe");
    return -1;
  }
  run->sig_rd = p[0];
  sig_pipe_wr = p[1];
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (size_t i = 0; i < N_FORWARDED; i++)
    sigaction(forwarded_signals[i], &sa, NULL);
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigaction(SIGCHLD, &sa, NULL);
  return 0;
}

/* In the child between fork and exec: only async-signal-safe work, plus setenv (nmad-run is single-threaded). */
static void exec_child(struct run_s *run, int rank, int fd, const sigset_t *orig_mask)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = SIG_DFL;
  for (size_t i = 0; i < N_FORWARDED; i++)
    sigaction(forwarded_signals[i], &sa, NULL);
  sigaction(SIGCHLD, &sa, NULL);
  sigprocmask(SIG_SETMASK, orig_mask, NULL);
  /* No rank may outlive nmad-run; if nmad-run died before prctl, getppid() has already changed. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != run->self)
    _exit(EXIT_NOTFOUND);
  int fl = fcntl(fd, F_GETFD);
  if (fl < 0 || fcntl(fd, F_SETFD, fl & ~FD_CLOEXEC) != 0)
    _exit(EXIT_NOTFOUND);
  setrlimit(RLIMIT_NOFILE, &run->orig_nofile);
  if (run->cpus && sched_setaffinity(0, sizeof(run->cpus[rank]), &run->cpus[rank]) != 0) {
    fprintf(stderr, "nmad-run: rank %d: cannot bind to its core: %s\n", rank, strerror(errno));
    _exit(1);
  }
  char buf[32];
  snprintf(buf, sizeof(buf), "%d", fd);
  setenv("NMAD_RUN_FD", buf, 1);
  snprintf(buf, sizeof(buf), "%d", rank);
  setenv("NMAD_RUN_RANK", buf, 1);
  snprintf(buf, sizeof(buf), "%d", run->n);
  setenv("NMAD_RUN_SIZE", buf, 1);
  setenv(NMAD_RUN_KEY_ENV, run->job_key, 1);
  setenv(NMAD_RUN_JOB_ENV, run->job_name, 1);
  for (int i = 0; i < run->nxvars; i++)
    if (run->xvars[i].value != NULL)
      setenv(run->xvars[i].name, run->xvars[i].value, 1);
  execvp(run->prog_argv[0], run->prog_argv);
  fprintf(stderr, "nmad-run: rank %d: cannot execute %s: %s\n", rank, run->prog_argv[0], strerror(errno));
  _exit(EXIT_NOTFOUND);
}

static void signal_all(struct run_s *run, int sig)
{
  for (int r = 0; r < run->n; r++)
    if (run->ranks[r].alive)
      kill(run->ranks[r].pid, sig);
}

static int spawn_all(struct run_s *run)
{
  sigset_t all, orig;
  sigfillset(&all);
  for (int r = 0; r < run->n; r++) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      fprintf(stderr, "nmad-run: socketpair for rank %d: %s\n", r, strerror(errno));
      return -1;
    }
    /* Block signals across fork so our handler never runs in the child before exec. */
    sigprocmask(SIG_SETMASK, &all, &orig);
    pid_t pid = fork();
    if (pid == 0) {
      close(sv[0]);
      exec_child(run, r, sv[1], &orig);
    }
    int saved = errno;
    close(sv[1]);
    if (pid < 0) {
      sigprocmask(SIG_SETMASK, &orig, NULL);
      close(sv[0]);
      fprintf(stderr, "nmad-run: fork for rank %d: %s\n", r, strerror(saved));
      return -1;
    }
    struct rank_s *rk = &run->ranks[r];
    rk->pid = pid;
    rk->fd = sv[0];
    rk->alive = 1;
    run->nalive++;
    sigprocmask(SIG_SETMASK, &orig, NULL);
    fcntl(rk->fd, F_SETFL, fcntl(rk->fd, F_GETFL) | O_NONBLOCK);
  }
  return 0;
}

static void close_rank_fd(struct rank_s *rk)
{
  if (rk->fd >= 0) {
    close(rk->fd);
    rk->fd = -1;
  }
  nmad_run_rx_reset(&rk->rx);
}

static void coll_reset(struct run_s *run)
{
  free(run->coll.buf);
  memset(&run->coll, 0, sizeof(run->coll));
  for (int r = 0; r < run->n; r++)
    run->ranks[r].contributed = 0;
}

/* Tell one child that rank @p dead will never contribute (fails its pending collective, if any). */
static void send_fault(struct run_s *run, int to, int dead)
{
  struct rank_s *rk = &run->ranks[to];
  if (rk->fd >= 0 && rk->alive && !rk->fini)
    (void)nmad_run_send(rk->fd, NMAD_RUN_MSG_FAULT, (uint32_t)dead, NULL, 0); /* a dead reader is reaped later */
}

/* Rank @p r can no longer contribute (died, finalized, or exited): no collective can complete from now on. */
static void rank_gone(struct run_s *run, int r, int died)
{
  if (run->gone_rank < 0)
    run->gone_rank = r;
  if (died) {
    for (int i = 0; i < run->n; i++)
      if (i != r)
        send_fault(run, i, r);
    coll_reset(run);
  } else if (run->coll.active && !run->ranks[r].contributed) {
    fprintf(stderr, "nmad-run: rank %d finalized while a %s was pending on other ranks: failing it\n", r,
            nmad_run_msg_name(run->coll.type));
    for (int i = 0; i < run->n; i++)
      if (run->ranks[i].contributed)
        send_fault(run, i, r);
    coll_reset(run);
  }
}

static void protocol_error(struct run_s *run, int r, const char *what)
{
  struct rank_s *rk = &run->ranks[r];
  fprintf(stderr, "nmad-run: rank %d (pid %ld): protocol error (%s), killing it\n", r, (long)rk->pid, what);
  if (rk->alive)
    kill(rk->pid, SIGKILL);
  close_rank_fd(rk);
}

static void contribute(struct run_s *run, int r, const struct nmad_run_hdr_s *h, const uint8_t *payload)
{
  struct coll_s *c = &run->coll;
  char msg[160];
  if (run->gone_rank >= 0) {
    send_fault(run, r, run->gone_rank); /* it can never complete: fail it at once */
    return;
  }
  if (c->active && (c->type != h->type || c->len != h->len)) {
    snprintf(msg, sizeof(msg), "%s of %llu bytes while a %s of %llu bytes is pending", nmad_run_msg_name(h->type),
             (unsigned long long)h->len, nmad_run_msg_name(c->type), (unsigned long long)c->len);
    protocol_error(run, r, msg);
    return;
  }
  if (run->ranks[r].contributed) {
    protocol_error(run, r, "second contribution to the same collective");
    return;
  }
  if (!c->active) {
    if (h->len * (uint64_t)run->n > NMAD_RUN_PROTO_MAX_PAYLOAD) {
      protocol_error(run, r, "allgather result would exceed the 64 MiB frame limit");
      return;
    }
    c->buf = h->len ? malloc((size_t)h->len * (size_t)run->n) : NULL;
    if (h->len && c->buf == NULL) {
      protocol_error(run, r, "out of memory for the allgather");
      return;
    }
    c->active = 1;
    c->type = h->type;
    c->len = h->len;
  }
  if (h->len)
    memcpy(c->buf + (size_t)r * (size_t)h->len, payload, (size_t)h->len);
  run->ranks[r].contributed = 1;
  if (++c->count < run->n)
    return;
  for (int i = 0; i < run->n; i++)
    if (run->ranks[i].fd >= 0)
      (void)nmad_run_send(run->ranks[i].fd, c->type, (uint32_t)run->n, c->buf, c->len * (uint64_t)run->n);
  coll_reset(run);
}

static void terminate_all_within(struct run_s *run, int64_t kill_delay_ms);

/* Rank @p r asked to end the job: the first request wins (later ones come from ranks that see its effects). */
static void handle_abort(struct run_s *run, int r, const uint8_t *payload)
{
  if (run->abort_rank >= 0 || run->timed_out)
    return;
  run->abort_rank = r;
  run->abort_code = nmad_run_abort_decode(payload);
  run->failed_before_abort = run->first_signal || run->max_status || run->unfinalized;
  fprintf(stderr, "nmad-run: rank %d called abort with code %ld, terminating %d ranks\n", r,
          (long)run->abort_code, run->nalive);
  run->grace_at = -1; /* the user asked for the end: waiting for the others is pointless */
  terminate_all_within(run, ABORT_KILL_DELAY_MS);
}

static void handle_frame(struct run_s *run, int r, const struct nmad_run_hdr_s *h, const uint8_t *payload)
{
  struct rank_s *rk = &run->ranks[r];
  rk->spoke = 1;
  if (h->type == NMAD_RUN_MSG_FAULT) {
    protocol_error(run, r, "FAULT frame from a child");
    return;
  }
  if (h->arg != (uint32_t)r) {
    protocol_error(run, r, "frame carries another rank");
    return;
  }
  if (rk->fini) {
    protocol_error(run, r, "frame after FINI");
    return;
  }
  if (h->type == NMAD_RUN_MSG_FINI) {
    rk->fini = 1;
    rank_gone(run, r, 0);
    return;
  }
  if (h->type == NMAD_RUN_MSG_ABORT) {
    handle_abort(run, r, payload);
    return;
  }
  contribute(run, r, h, payload);
}

/* Read and handle everything available from rank r without blocking. */
static void handle_input(struct run_s *run, int r)
{
  struct rank_s *rk = &run->ranks[r];
  while (rk->fd >= 0) {
    int rc = nmad_run_rx_progress(rk->fd, &rk->rx);
    if (rc == 0)
      return;
    if (rc == 1) {
      struct nmad_run_hdr_s h = rk->rx.hdr;
      uint8_t *payload = rk->rx.payload;
      rk->rx.payload = NULL;
      nmad_run_rx_reset(&rk->rx);
      handle_frame(run, r, &h, payload);
      free(payload);
      continue;
    }
    if (rc == -NM_ECLOSED) {
      close_rank_fd(rk); /* the exit itself is handled when the process is reaped */
      return;
    }
    /* nm_strerror lives in the library, which nmad-run does not link */
    protocol_error(run, r, rc == -NM_EPROTO ? "malformed frame" : rc == -NM_ENOMEM ? "out of memory" : "read error");
    return;
  }
}

static void start_grace(struct run_s *run)
{
  if (run->grace_used || run->timed_out || run->abort_rank >= 0)
    return;
  run->grace_used = 1;
  run->grace_at = now_ms() + (int64_t)(run->grace_s * 1000.0);
}

/* Every rank is gone: remove the /dev/shm regions of libfabric's shm that killed ranks left under the job's name
 * (drivers/ofi/nm_ofi_region.h; no minimum age, as nothing of the job can be starting). */
static void job_sweep(const struct run_s *run)
{
  char prefix[NMAD_RUN_JOB_CHARS + 8];
  nm_ofi_region_job_prefix(prefix, sizeof(prefix), run->job_name);
  nm_ofi_region_sweep(NM_OFI_REGION_DIR, prefix, now_ns(), 0);
}

static void reap(struct run_s *run)
{
  for (;;) {
    int status;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0)
      return;
    int r;
    for (r = 0; r < run->n; r++)
      if (run->ranks[r].alive && run->ranks[r].pid == pid)
        break;
    if (r == run->n)
      continue;
    struct rank_s *rk = &run->ranks[r];
    handle_input(run, r); /* a FINI may still sit in the socket */
    rk->alive = 0;
    run->nalive--;
    close_rank_fd(rk);
    char why[128] = "";
    if (run->abort_rank >= 0) {
      /* Terminated for the abort: not a failure of its own, whatever its status (a SIGTERM handler, such as
       * the one libinfinipath installs through libfabric, exits with 1). No report, no FAULT frames: every rank
       * is being terminated, and one that handles SIGTERM would only print the consequences of the abort. */
      if (run->gone_rank < 0)
        run->gone_rank = r;
      continue;
    }
    if (WIFSIGNALED(status)) {
      int sig = WTERMSIG(status);
      snprintf(why, sizeof(why), "killed by signal %d (%s)%s", sig, strsignal(sig),
               WCOREDUMP(status) ? " (core dumped)" : "");
      if (run->first_signal == 0)
        run->first_signal = sig;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
      snprintf(why, sizeof(why), "exited with status %d", WEXITSTATUS(status));
      if (WEXITSTATUS(status) > run->max_status)
        run->max_status = WEXITSTATUS(status);
    } else if (rk->spoke && !rk->fini) {
      snprintf(why, sizeof(why), "exited without finalizing");
      run->unfinalized = 1;
    }
    if (why[0]) {
      fprintf(stderr, "nmad-run: rank %d (pid %ld) died: %s\n", r, (long)pid, why);
      rank_gone(run, r, 1);
      start_grace(run);
    } else {
      rank_gone(run, r, 0);
    }
  }
}

/* SIGTERM now, SIGKILL @p kill_delay_ms later (or at the SIGKILL already planned, if sooner). */
static void terminate_all_within(struct run_s *run, int64_t kill_delay_ms)
{
  signal_all(run, SIGTERM);
  int64_t at = now_ms() + kill_delay_ms;
  if (run->kill_at < 0 || at < run->kill_at)
    run->kill_at = at;
}

static void terminate_all(struct run_s *run)
{
  terminate_all_within(run, KILL_DELAY_MS);
}

static void handle_signals(struct run_s *run)
{
  unsigned char sigs[64];
  ssize_t n;
  while ((n = read(run->sig_rd, sigs, sizeof(sigs))) > 0) {
    for (ssize_t i = 0; i < n; i++) {
      int sig = sigs[i];
      if (sig == SIGCHLD) {
        reap(run);
        continue;
      }
      signal_all(run, sig);
      if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT) {
        if (++run->term_signals >= 2) { /* asked twice: do not wait for the ranks any more */
          fprintf(stderr, "nmad-run: %s received again, killing %d ranks\n", strsignal(sig), run->nalive);
          signal_all(run, SIGKILL);
        }
      }
    }
  }
  reap(run); /* SIGCHLD coalesces: reap anyway */
}

static void check_deadlines(struct run_s *run)
{
  int64_t t = now_ms();
  if (run->timeout_at >= 0 && t >= run->timeout_at && !run->timed_out) {
    run->timed_out = 1;
    run->timeout_at = -1;
    fprintf(stderr, "nmad-run: timeout after %g s, killing %d ranks\n", run->timeout_s, run->nalive);
    terminate_all(run);
  }
  if (run->grace_at >= 0 && t >= run->grace_at) {
    run->grace_at = -1;
    if (run->nalive > 0 && !run->timed_out) {
      fprintf(stderr, "nmad-run: grace period of %g s after the failure expired, terminating %d ranks\n",
              run->grace_s, run->nalive);
      terminate_all(run);
    }
  }
  if (run->kill_at >= 0 && t >= run->kill_at) {
    run->kill_at = -1;
    signal_all(run, SIGKILL);
  }
}

static int poll_timeout_ms(const struct run_s *run)
{
  int64_t t = now_ms(), next = -1;
  const int64_t d[3] = { run->timeout_at, run->grace_at, run->kill_at };
  for (int i = 0; i < 3; i++)
    if (d[i] >= 0 && (next < 0 || d[i] < next))
      next = d[i];
  if (next < 0)
    return -1;
  if (next <= t)
    return 0;
  return next - t > INT_MAX ? INT_MAX : (int)(next - t);
}

static void main_loop(struct run_s *run, struct pollfd *pfds, int *pfd_rank)
{
  while (run->nalive > 0) {
    int np = 0;
    pfds[np].fd = run->sig_rd;
    pfds[np].events = POLLIN;
    pfd_rank[np++] = -1;
    for (int r = 0; r < run->n; r++)
      if (run->ranks[r].fd >= 0) {
        pfds[np].fd = run->ranks[r].fd;
        pfds[np].events = POLLIN;
        pfd_rank[np++] = r;
      }
    int rc = poll(pfds, (nfds_t)np, poll_timeout_ms(run));
    if (rc < 0 && errno != EINTR) {
      perror("nmad-run: poll");
      signal_all(run, SIGKILL);
      sleep(1);
      reap(run);
      return;
    }
    if (rc > 0) {
      for (int i = 1; i < np; i++)
        if (pfds[i].revents)
          handle_input(run, pfd_rank[i]);
      if (pfds[0].revents)
        handle_signals(run);
    }
    check_deadlines(run);
  }
}

static int exit_status(const struct run_s *run)
{
  if (run->abort_rank >= 0 && !run->failed_before_abort)
    return (int)((uint32_t)run->abort_code & 0xff); /* as Open MPI's mpirun: MPI_Abort(comm, 300) gives 44 */
  if (run->timed_out)
    return EXIT_TIMEOUT;
  if (run->first_signal)
    return 128 + run->first_signal;
  if (run->max_status)
    return run->max_status;
  return run->unfinalized ? 1 : 0;
}

int main(int argc, char **argv)
{
  struct run_s run;
  memset(&run, 0, sizeof(run));
  run.gone_rank = -1;
  run.abort_rank = -1;
  run.timeout_at = run.grace_at = run.kill_at = -1;
  run.sig_rd = -1;
  int rc = parse_args(&run, argc, argv);
  if (rc)
    return rc > 0 ? 0 : EXIT_USAGE;
  if (find_program(run.prog_argv[0])) {
    fprintf(stderr, "nmad-run: %s: command not found or not executable\n", run.prog_argv[0]);
    return EXIT_NOTFOUND;
  }
  ensure_stdio();
  if (raise_fd_limit(&run))
    return 1;
  run.self = getpid();
  uint64_t key;
  if (nmad_run_key_new(&key)) {
    fprintf(stderr, "nmad-run: no random bytes for the job key: %s\n", strerror(errno));
    return 1;
  }
  nmad_run_key_format(key, run.job_key);
  nmad_run_job_name((long)run.self, run.job_name);
  run.ranks = calloc((size_t)run.n, sizeof(*run.ranks));
  struct pollfd *pfds = calloc((size_t)run.n + 1, sizeof(*pfds));
  int *pfd_rank = calloc((size_t)run.n + 1, sizeof(*pfd_rank));
  if (run.ranks == NULL || pfds == NULL || pfd_rank == NULL) {
    fprintf(stderr, "nmad-run: out of memory\n");
    return 1;
  }
  for (int r = 0; r < run.n; r++) {
    run.ranks[r].fd = -1;
    nmad_run_rx_init(&run.ranks[r].rx);
  }
  if (run.bind != NMAD_RUN_BIND_NONE) {
    run.cpus = calloc((size_t)run.n, sizeof(*run.cpus));
    if (run.cpus == NULL || nmad_run_bind_plan(run.bind, run.n, run.cpus))
      return 1;
  }
  if (setup_signals(&run))
    return 1;
  if (run.timeout_s > 0)
    run.timeout_at = now_ms() + (int64_t)(run.timeout_s * 1000.0);
  if (spawn_all(&run)) {
    signal_all(&run, SIGKILL);
    while (run.nalive > 0 && waitpid(-1, NULL, 0) > 0)
      run.nalive--;
    job_sweep(&run);
    return 1;
  }
  main_loop(&run, pfds, pfd_rank);
  job_sweep(&run); /* every rank is reaped: what is left was a killed rank's */

  rc = exit_status(&run);
  coll_reset(&run);
  for (int r = 0; r < run.n; r++)
    close_rank_fd(&run.ranks[r]);
  for (int i = 0; i < run.nxvars; i++) {
    free(run.xvars[i].name);
    free(run.xvars[i].value);
  }
  free(run.xvars);
  free(run.cpus);
  free(run.ranks);
  free(pfds);
  free(pfd_rank);
  return rc;
}
