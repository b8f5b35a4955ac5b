/* Strategy selection by name (NMAD_STRATEGY). */
#include "nm_strategy.h"
#include <string.h>

static const struct nm_strategy_ops_s *const nm_strategies[] = {
  &nm_strat_default_ops, &nm_strat_aggreg_ops, &nm_strat_prio_ops,
};

const struct nm_strategy_ops_s *nm_strategy_lookup(const char *name)
{
  for (size_t i = 0; i < sizeof(nm_strategies) / sizeof(nm_strategies[0]); i++)
    if (strcmp(nm_strategies[i]->name, name) == 0)
      return nm_strategies[i];
  return NULL;
}
