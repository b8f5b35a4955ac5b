/* PIOMan's conditions (pioman.h) over pthreads (issue 16, deliverable 2). In NewMadeleine a piom_cond is signalled
 * by request monitors that run in PIOMan's progress tasks; in nmad they run in the core's progress thread, so a
 * waiter simply blocks on a pthread condition (no spinning on these oversubscribed machines, DESIGN.md rule 2). */
#include <pioman.h>

void piom_cond_init(piom_cond_t *cond, piom_cond_value_t initial)
{
  cond->value = initial;
  pthread_mutex_init(&cond->lock, NULL);
  pthread_cond_init(&cond->cond, NULL);
}

void piom_cond_destroy(piom_cond_t *cond)
{
  pthread_cond_destroy(&cond->cond);
  pthread_mutex_destroy(&cond->lock);
}

void piom_cond_signal(piom_cond_t *cond, piom_cond_value_t mask)
{
  pthread_mutex_lock(&cond->lock);
  cond->value |= mask;
  pthread_cond_broadcast(&cond->cond);
  pthread_mutex_unlock(&cond->lock);
}

void piom_cond_mask(piom_cond_t *cond, piom_cond_value_t mask)
{
  pthread_mutex_lock(&cond->lock);
  cond->value &= ~mask;
  pthread_mutex_unlock(&cond->lock);
}

piom_cond_value_t piom_cond_test(const piom_cond_t *cond, piom_cond_value_t mask)
{
  return __atomic_load_n(&cond->value, __ATOMIC_ACQUIRE) & mask;
}

piom_cond_value_t piom_cond_test_locked(piom_cond_t *cond, piom_cond_value_t mask)
{
  /* taking the lock orders us after a signaller that is still inside piom_cond_signal() */
  pthread_mutex_lock(&cond->lock);
  piom_cond_value_t v = cond->value & mask;
  pthread_mutex_unlock(&cond->lock);
  return v;
}

void piom_cond_wait(piom_cond_t *cond, piom_cond_value_t mask)
{
  pthread_mutex_lock(&cond->lock);
  while (!(cond->value & mask))
    pthread_cond_wait(&cond->cond, &cond->lock);
  pthread_mutex_unlock(&cond->lock);
}
