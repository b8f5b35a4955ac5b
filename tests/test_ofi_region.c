/* Unit tests of the libfabric shm region names, their owner's lock and the removal of dead owners' regions
 * (drivers/ofi/nm_ofi_region.c), in a directory of their own instead of /dev/shm. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "drivers/ofi/nm_ofi_region.h"

#define SEC 1000000000ULL

static char dir[64];

static void setup(void)
{
  snprintf(dir, sizeof(dir), "/tmp/nm_ofi_region.XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}

static void touch(const char *name)
{
  char path[256];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  int fd = open(path, O_CREAT | O_WRONLY | O_EXCL, 0600);
  ck_assert_int_ge(fd, 0);
  close(fd);
}

static int exists(const char *name)
{
  char path[256];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  return access(path, F_OK) == 0;
}

START_TEST(test_name)
{
  char name[NM_OFI_REGION_NAME_MAX], want[64];
  unsetenv("NMAD_RUN_JOB");
  nm_ofi_region_name(name);
  snprintf(want, sizeof(want), "nmad-%d-", (int)getpid());
  ck_assert_msg(strncmp(name, want, strlen(want)) == 0, "%s", name);
  ck_assert_str_eq(name + strlen(name) - 2, "-l");
  setenv("NMAD_RUN_JOB", "1a2bx3c4d", 1);
  nm_ofi_region_name(name);
  snprintf(want, sizeof(want), "nmad-j1a2bx3c4d-%d-", (int)getpid());
  ck_assert_msg(strncmp(name, want, strlen(want)) == 0, "%s", name);
  setenv("NMAD_RUN_JOB", "../x", 1); /* not what nmad-run writes: ignored */
  nm_ofi_region_name(name);
  snprintf(want, sizeof(want), "nmad-%d-", (int)getpid());
  ck_assert_msg(strncmp(name, want, strlen(want)) == 0, "%s", name);
  unsetenv("NMAD_RUN_JOB");
  /* the name's own clock makes it young: a sweep right away leaves it, held or not */
  touch(name);
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  ck_assert_int_eq(nm_ofi_region_sweep(dir, NULL, (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec, NM_OFI_REGION_MIN_AGE_NS), 0);
  ck_assert(exists(name));
}
END_TEST

/* Born at 100 s (0x64 s, 0 ns) or at 990 s; swept at 1,000 s with a minimum age of 60 s. */
START_TEST(test_sweep)
{
  const char *dead = "nmad-123-64000000000-l", *held = "nmad-jabcx12-124-64000000000-l",
             *young = "nmad-125-3de000000000-l", *old_format = "nmad-126-64000000000", *other = "nmad-rings",
             *bad_clock = "nmad-127-6400000000g-l";
  touch(dead);
  touch(held);
  /* a job's sweep (nmad-run's: its prefix, no minimum age) takes only that job's unheld regions */
  const char *job_dead = "nmad-jabcx12-128-3e7000000000-l", *other_job = "nmad-jabcx13-129-3e7000000000-l";
  char prefix[64];
  nm_ofi_region_job_prefix(prefix, sizeof(prefix), "abcx12");
  ck_assert_str_eq(prefix, "nmad-jabcx12-");
  touch(job_dead);
  touch(other_job);
  int jfd = nm_ofi_region_hold(dir, held);
  ck_assert_int_ge(jfd, 0);
  ck_assert_int_eq(nm_ofi_region_sweep(dir, prefix, 1000 * SEC, 0), 1);
  ck_assert(!exists(job_dead) && exists(other_job) && exists(held) && exists(dead));
  close(jfd);
  touch(young);
  touch(old_format);
  touch(other);
  touch(bad_clock);
  int fd = nm_ofi_region_hold(dir, held);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(nm_ofi_region_hold(dir, "nmad-nothing-l"), -1);
  ck_assert_int_eq(nm_ofi_region_sweep(dir, NULL, 1000 * SEC, 60 * SEC), 1);
  ck_assert(!exists(dead));
  ck_assert(exists(held) && exists(young) && exists(old_format) && exists(other) && exists(bad_clock));
  close(fd); /* its owner dies: the next sweep takes it */
  ck_assert_int_eq(nm_ofi_region_sweep(dir, NULL, 1000 * SEC, 60 * SEC), 1);
  ck_assert(!exists(held) && exists(young));
  ck_assert_int_eq(nm_ofi_region_sweep(dir, NULL, 1050 * SEC, 60 * SEC), 1); /* young no more */
  ck_assert(!exists(young) && exists(old_format) && exists(other) && exists(bad_clock));
  ck_assert_int_eq(nm_ofi_region_sweep("/nonexistent/dir", NULL, 1000 * SEC, 60 * SEC), 0);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("ofi_region");
  TCase *tc = tcase_create("region");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_name);
  tcase_add_test(tc, test_sweep);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
