/**
 * @file nmad_sim.cpp
 * @brief `nmad-sim`: run N ranks of an nmad program as SimGrid actors in one process, on a simulated platform,
 *        and print the simulated duration (issue 13; doc/nmad-sim.md).
 *
 *   nmad-sim -n N --platform FILE [--ranks-per-host K] [--fake-payload BYTES] [--poll-cost NS] [--cfg=NAME:VALUE]
 *            PROG [ARGS...]
 *
 * PROG is named as for nmad-run (a path, or a name looked up in PATH); nmad-sim loads the shared-object build of
 * the same source (PROG.so: next to the program in the build tree's .libs/, or in $(pkglibdir)/sim when installed)
 * and calls its main() once per rank, rank r on host r / K of the platform (hosts in natural order of their names).
 * Only the bootstrap ("sim", found through nm_sim_self()) and the driver (drivers/sim) differ from a real run.
 *
 * This is a program, not the library: the job's state lives in main()'s frame and is reached by the actors through
 * their data; nothing is global.
 */
#include "drivers/sim/nm_sim_job.hpp"
#include <simgrid/s4u.hpp>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace sg4 = simgrid::s4u;

#ifndef NM_SIM_PROGDIR
#define NM_SIM_PROGDIR "/usr/local/lib/nmad/sim"
#endif

#define EXIT_USAGE 2
#define EXIT_NOTFOUND 127

/** The calling actor's rank context (looked up by libnmad's "sim" bootstrap and by the driver). */
extern "C" struct nm_sim_rank_s *nm_sim_self(void)
{
  sg4::Actor *a = sg4::Actor::self();
  return a ? a->get_data<nm_sim_rank_s>() : nullptr;
}

namespace {

typedef int (*main_fn)(int, char **);

struct options {
  int n = 0;
  int per_host = 1;
  std::string platform;
  uint64_t fake_above = UINT64_MAX;
  uint64_t poll_cost_ns = 1000;
  uint64_t send_overhead_ns = 0;
  nm_sim_job_s::send_queue_e send_queue = nm_sim_job_s::SEND_QUEUE_NIC;
  std::vector<std::string> cfg; /* --cfg=... passed to SimGrid */
  std::vector<std::string> prog;
};

void usage(FILE *out)
{
  std::fprintf(out,
               "usage: nmad-sim -n N --platform FILE [--ranks-per-host K] [--fake-payload BYTES] [--poll-cost NS]\n"
               "                [--send-overhead NS] [--send-queue nic|peer|none] [--cfg=NAME:VALUE ...] PROG [ARGS...]\n"
               "Runs N ranks of PROG as SimGrid actors on the platform FILE and prints the simulated duration.\n"
               "  --ranks-per-host K   ranks r, r+1, ... share a host, K per host (default 1)\n"
               "  --fake-payload B     large transfers of more than B bytes move only their size (K, M, G suffixes)\n"
               "  --poll-cost NS       simulated cost of an idle poll after 16 in a row (default 1000)\n"
               "  --send-overhead NS   simulated CPU time of each packet sent, LogP's o (default 0)\n"
               "  --send-queue Q       nic: a rank's packets to one peer leave one after the other, and those above\n"
               "                       4 KiB also in turn on its one wire (default); peer: per peer only, peers\n"
               "                       sharing the link (inject is its former name); none: all at once\n"
               "  --cfg=NAME:VALUE     a SimGrid configuration item (e.g. --cfg=network/model:CM02)\n"
               "See doc/nmad-sim.md.\n");
}

bool parse_size(const char *s, uint64_t *out)
{
  char *end;
  errno = 0;
  unsigned long long v = std::strtoull(s, &end, 10);
  if (end == s || errno)
    return false;
  uint64_t mult = 1;
  switch (std::toupper(static_cast<unsigned char>(*end))) {
  case 'K': mult = 1ULL << 10; end++; break;
  case 'M': mult = 1ULL << 20; end++; break;
  case 'G': mult = 1ULL << 30; end++; break;
  default: break;
  }
  if (*end || v > UINT64_MAX / mult)
    return false;
  *out = v * mult;
  return true;
}

/** @return 0 to run, 1 on --help, -1 on a bad command line (message printed). */
int parse(int argc, char **argv, options &o)
{
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    std::string a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
    uint64_t x;
    if (a == "-h" || a == "--help") {
      usage(stdout);
      return 1;
    } else if (a.rfind("--cfg=", 0) == 0) {
      o.cfg.push_back(a);
    } else if (!v) {
      std::fprintf(stderr, "nmad-sim: %s needs a value\n", a.c_str());
      return -1;
    } else if (a == "-n" || a == "-np") {
      if (!parse_size(v, &x) || x < 1 || x > 1000000) {
        std::fprintf(stderr, "nmad-sim: -n wants a rank count in [1, 1000000], not '%s'\n", v);
        return -1;
      }
      o.n = static_cast<int>(x), i++;
    } else if (a == "--platform") {
      o.platform = v, i++;
    } else if (a == "--ranks-per-host") {
      if (!parse_size(v, &x) || x < 1 || x > 1000000) {
        std::fprintf(stderr, "nmad-sim: --ranks-per-host wants a count >= 1, not '%s'\n", v);
        return -1;
      }
      o.per_host = static_cast<int>(x), i++;
    } else if (a == "--fake-payload") {
      if (!parse_size(v, &o.fake_above)) {
        std::fprintf(stderr, "nmad-sim: --fake-payload wants a size in bytes (K, M, G suffixes), not '%s'\n", v);
        return -1;
      }
      i++;
    } else if (a == "--poll-cost") {
      if (!parse_size(v, &o.poll_cost_ns) || o.poll_cost_ns == 0) {
        std::fprintf(stderr, "nmad-sim: --poll-cost wants nanoseconds > 0, not '%s'\n", v);
        return -1;
      }
      i++;
    } else if (a == "--send-overhead") {
      if (!parse_size(v, &o.send_overhead_ns) || o.send_overhead_ns > 1000000000ULL) {
        std::fprintf(stderr, "nmad-sim: --send-overhead wants nanoseconds in [0, 1e9], not '%s'\n", v);
        return -1;
      }
      i++;
    } else if (a == "--send-queue") {
      if (!std::strcmp(v, "nic"))
        o.send_queue = nm_sim_job_s::SEND_QUEUE_NIC;
      else if (!std::strcmp(v, "peer") || !std::strcmp(v, "inject"))
        o.send_queue = nm_sim_job_s::SEND_QUEUE_PEER;
      else if (!std::strcmp(v, "none"))
        o.send_queue = nm_sim_job_s::SEND_QUEUE_NONE;
      else {
        std::fprintf(stderr, "nmad-sim: --send-queue wants nic, peer or none, not '%s'\n", v);
        return -1;
      }
      i++;
    } else {
      std::fprintf(stderr, "nmad-sim: unknown option '%s'\n", a.c_str());
      usage(stderr);
      return -1;
    }
  }
  if (o.n < 1 || o.platform.empty() || i >= argc) {
    std::fprintf(stderr, "nmad-sim: -n N, --platform FILE and PROG are required\n");
    usage(stderr);
    return -1;
  }
  for (; i < argc; i++)
    o.prog.push_back(argv[i]);
  return 0;
}

bool is_file(const std::string &p)
{
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/* PROG as the shell would find it: a path if it has a slash, else the first match in PATH. */
std::string resolve_program(const std::string &prog)
{
  if (prog.find('/') != std::string::npos)
    return prog;
  const char *path = std::getenv("PATH");
  std::string p = path ? path : "";
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    std::string dir = p.substr(start, end == std::string::npos ? std::string::npos : end - start);
    std::string cand = (dir.empty() ? std::string(".") : dir) + "/" + prog;
    if (access(cand.c_str(), X_OK) == 0 && is_file(cand))
      return cand;
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  return prog;
}

/* The shared-object build of PROG (doc/nmad-sim.md "How PROG is loaded"). */
std::string find_shared_object(const std::string &prog, std::vector<std::string> &tried)
{
  if (prog.size() > 3 && prog.compare(prog.size() - 3, 3, ".so") == 0) {
    tried.push_back(prog);
    return is_file(prog) ? prog : "";
  }
  std::string path = resolve_program(prog);
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.rfind("lt-", 0) == 0) /* libtool's real binary in the build tree */
    base = base.substr(3);
  for (const std::string &cand : {dir + "/.libs/" + base + ".so", dir + "/" + base + ".so",
                                   dir + "/../lib/nmad/sim/" + base + ".so",
                                   std::string(NM_SIM_PROGDIR) + "/" + base + ".so"}) {
    tried.push_back(cand);
    if (is_file(cand))
      return cand;
  }
  return "";
}

/* Hosts in natural order of their names (node-2 before node-10). */
bool natural_less(const std::string &a, const std::string &b)
{
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie])))
        ie++;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je])))
        je++;
      unsigned long long x = std::stoull(a.substr(i, ie - i)), y = std::stoull(b.substr(j, je - j));
      if (x != y)
        return x < y;
      i = ie, j = je;
    } else {
      if (a[i] != b[j])
        return a[i] < b[j];
      i++, j++;
    }
  }
  return a.size() - i < b.size() - j;
}

int job_barrier(nm_sim_rank_s *self)
{
  self->job->barrier->wait();
  nm_sim_rank_blocked(self);
  return 0;
}

/** One rank's command line, owned for the whole run (main() may keep pointers into it). */
struct rank_args {
  std::vector<std::string> words;
  std::vector<char *> argv;
};

} // namespace

int main(int argc, char **argv)
{
  options o;
  int rc = parse(argc, argv, o);
  if (rc)
    return rc > 0 ? 0 : EXIT_USAGE;

  std::vector<std::string> tried;
  std::string so = find_shared_object(o.prog[0], tried);
  if (so.empty()) {
    std::fprintf(stderr, "nmad-sim: no shared-object build of '%s' (looked for:", o.prog[0].c_str());
    for (auto &t : tried)
      std::fprintf(stderr, " %s", t.c_str());
    std::fprintf(stderr, "); see doc/nmad-sim.md\n");
    return EXIT_NOTFOUND;
  }
  void *handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  main_fn prog_main = handle ? reinterpret_cast<main_fn>(dlsym(handle, "main")) : nullptr;
  if (!prog_main) {
    std::fprintf(stderr, "nmad-sim: cannot load main() from %s: %s\n", so.c_str(), dlerror());
    return EXIT_NOTFOUND;
  }

  /* SimGrid's own arguments: its log quieter than its default (configuration changes are not news here), and no
   * cross-traffic: SimGrid would add to every flow a reverse flow for TCP's acknowledgements, which InfiniBand or
   * a torus do not have, and which doubles the flows its solver shares links among (at 3,072 ranks, 2.3x the wall
   * time for the same simulated durations). The user's --cfg come after, so they win. */
  std::vector<std::string> sg_words = {argv[0], "--log=xbt_cfg.thres:warning", "--cfg=network/crosstraffic:0"};
  sg_words.insert(sg_words.end(), o.cfg.begin(), o.cfg.end());
  std::vector<char *> sg_argv;
  for (auto &w : sg_words)
    sg_argv.push_back(&w[0]);
  int sg_argc = static_cast<int>(sg_argv.size());
  sg_argv.push_back(nullptr);
  auto wall0 = std::chrono::steady_clock::now();
  sg4::Engine engine(&sg_argc, sg_argv.data());
  try {
    engine.load_platform(o.platform);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "nmad-sim: cannot load platform %s: %s\n", o.platform.c_str(), e.what());
    return EXIT_USAGE;
  }
  std::vector<sg4::Host *> hosts = engine.get_all_hosts();
  /* "<host>.nic<k>" hosts are the second and further NICs of <host> (NMAD_DRIVER=sim+sim): no rank runs there */
  hosts.erase(std::remove_if(hosts.begin(), hosts.end(),
                             [](const sg4::Host *h) { return h->get_name().find(".nic") != std::string::npos; }),
              hosts.end());
  std::sort(hosts.begin(), hosts.end(),
            [](const sg4::Host *a, const sg4::Host *b) { return natural_less(a->get_name(), b->get_name()); });
  size_t needed = (static_cast<size_t>(o.n) + static_cast<size_t>(o.per_host) - 1) / static_cast<size_t>(o.per_host);
  if (needed > hosts.size()) {
    std::fprintf(stderr, "nmad-sim: %d ranks at %d per host need %zu hosts; %s has %zu\n", o.n, o.per_host, needed,
                 o.platform.c_str(), hosts.size());
    return EXIT_USAGE;
  }

  nm_sim_job_s job;
  job.fake_above = o.fake_above;
  job.poll_cost_ns = o.poll_cost_ns;
  job.send_overhead_ns = o.send_overhead_ns;
  job.send_queue = o.send_queue;
  job.barrier = sg4::Barrier::create(static_cast<unsigned>(o.n));
  job.mbox.resize(static_cast<size_t>(o.n));
  job.ranks.resize(static_cast<size_t>(o.n));
  std::vector<rank_args> args(static_cast<size_t>(o.n));
  std::vector<int> status(static_cast<size_t>(o.n), -1);
  std::vector<char> finished(static_cast<size_t>(o.n), 0);
  for (int r = 0; r < o.n; r++) {
    size_t ri = static_cast<size_t>(r);
    job.mbox[ri] = sg4::Mailbox::by_name("nmad-" + std::to_string(r));
    job.ranks[ri] = nm_sim_rank_s{r, o.n, &nm_drv_sim_ops, &job, job_barrier, 0, nullptr};
    args[ri].words = o.prog;
    for (auto &w : args[ri].words)
      args[ri].argv.push_back(&w[0]);
    args[ri].argv.push_back(nullptr);
    sg4::Host *host = hosts[ri / static_cast<size_t>(o.per_host)];
    sg4::ActorPtr actor = sg4::Actor::create("rank-" + std::to_string(r), host, [&, ri]() {
      status[ri] = prog_main(static_cast<int>(args[ri].argv.size() - 1), args[ri].argv.data());
      finished[ri] = 1;
    });
    actor->set_data(&job.ranks[ri]);
  }
  try {
    engine.run();
  } catch (const std::exception &e) {
    std::fprintf(stderr, "nmad-sim: the simulation failed: %s\n", e.what());
  }
  double sim_s = sg4::Engine::get_clock();
  double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  int unfinished = 0, failed = 0, first_bad = -1;
  for (int r = 0; r < o.n; r++) {
    size_t ri = static_cast<size_t>(r);
    if (!finished[ri] || status[ri] != 0) {
      unfinished += !finished[ri];
      failed += finished[ri] && status[ri] != 0;
      if (first_bad < 0)
        first_bad = r;
    }
  }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  std::fflush(stdout);
  std::fprintf(stderr, "nmad-sim: %d ranks on %zu hosts: simulated time %.9f s (wall %.2f s, peak memory %.0f MiB)\n",
               o.n, needed, sim_s, wall_s, static_cast<double>(ru.ru_maxrss) / 1024.0);
  if (unfinished || failed) {
    std::fprintf(stderr, "nmad-sim: %d ranks did not finish (deadlock), %d returned non-zero; first: rank %d\n",
                 unfinished, failed, first_bad);
    return 1;
  }
  return 0;
}
