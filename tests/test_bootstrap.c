/* Unit test of the nmad-run bootstrap's barrier that progresses the core (nmad/launcher/bootstrap_nmadrun.c): the
 * progress it calls may run the core's fault check, which reads the same socket (poll_fault()). Here the
 * launcher's side of a socket pair holds the barrier's reply before the wait starts, and the progress function
 * polls for faults, as nm_core_progress() does every NM_FAULT_CHECK_EVERY passes: the reply must reach the
 * barrier, not be taken for a protocol error and lost (the barrier then waited forever: tests/it_mcast_seg over
 * tcp hung in 1 run of 20-40). A FAULT frame read the same way still reports its rank. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include "nmad/launcher/nm_bootstrap.h"
#include "nmad/launcher/nmad_run_proto.h"
#include <nmad/nm_errno.h>

static int launcher_fd;
static struct nm_bootstrap_s bs;

/* Rank 1 of 2, connected to a fake nmad-run (the other end of a socket pair). */
static void setup(void)
{
  int sv[2];
  ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  launcher_fd = sv[0];
  char fd[16];
  snprintf(fd, sizeof(fd), "%d", sv[1]);
  setenv("NMAD_RUN_FD", fd, 1);
  setenv("NMAD_RUN_SIZE", "2", 1);
  setenv("NMAD_RUN_RANK", "1", 1);
  setenv(NMAD_RUN_KEY_ENV, "0123456789abcdef", 1);
  bs.ops = &nm_bootstrap_nmadrun_ops;
  ck_assert_int_eq(bs.ops->init(&bs), 0);
  ck_assert_int_eq(bs.size, 2);
}

static void teardown(void)
{
  close(launcher_fd);
  bs.ops->fini(&bs);
}

struct prog_s {
  int calls, faults, fault_rank, errors;
};

/* What nm_core_progress() does when its fault check comes round: poll the bootstrap for dead ranks. */
static int progress_polls_faults(void *arg)
{
  struct prog_s *p = arg;
  p->calls++;
  int rank, rc;
  while ((rc = bs.ops->poll_fault(&bs, &rank)) == 1) {
    p->faults++;
    p->fault_rank = rank;
  }
  if (rc < 0)
    p->errors++;
  return 0;
}

START_TEST(test_reply_read_by_fault_check)
{
  alarm(20); /* the bug was a hang: fail instead */
  /* the reply is there before the barrier waits: the first progress call's poll_fault() reads it */
  ck_assert_int_eq(nmad_run_send(launcher_fd, NMAD_RUN_MSG_BARRIER, 2, NULL, 0), 0);
  struct prog_s p = {0};
  ck_assert_int_eq(bs.ops->barrier_progress(&bs, progress_polls_faults, &p), 0);
  ck_assert_int_ge(p.calls, 1);
  ck_assert_int_eq(p.errors, 0);
  /* the request the rank sent reached the launcher */
  struct nmad_run_hdr_s h;
  void *payload = NULL;
  ck_assert_int_eq(nmad_run_recv(launcher_fd, &h, &payload), 0);
  ck_assert_uint_eq(h.type, NMAD_RUN_MSG_BARRIER);
  free(payload);
  /* and a second barrier still works (nothing left stashed) */
  ck_assert_int_eq(nmad_run_send(launcher_fd, NMAD_RUN_MSG_BARRIER, 2, NULL, 0), 0);
  ck_assert_int_eq(bs.ops->barrier_progress(&bs, progress_polls_faults, &p), 0);
  alarm(0);
}
END_TEST

START_TEST(test_fault_then_reply)
{
  alarm(20);
  /* a FAULT ahead of the reply: poll_fault() reports rank 0 dead, and the barrier fails as a collective with a
   * dead rank must */
  ck_assert_int_eq(nmad_run_send(launcher_fd, NMAD_RUN_MSG_FAULT, 0, NULL, 0), 0);
  ck_assert_int_eq(nmad_run_send(launcher_fd, NMAD_RUN_MSG_BARRIER, 2, NULL, 0), 0);
  struct prog_s p = {0};
  int rc = bs.ops->barrier_progress(&bs, progress_polls_faults, &p);
  ck_assert_int_eq(p.errors, 0);
  ck_assert_int_eq(p.faults, 1);
  ck_assert_int_eq(p.fault_rank, 0);
  ck_assert_int_eq(rc, 0); /* the reply came: this barrier completed; the next collective sees the dead rank */
  ck_assert_int_eq(bs.ops->barrier(&bs), -NM_ECLOSED);
  alarm(0);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("nmad-run bootstrap");
  TCase *tc = tcase_create("barrier_progress");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_reply_read_by_fault_check);
  tcase_add_test(tc, test_fault_then_reply);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
