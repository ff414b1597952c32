/*
 * The table of algorithms, indexed by stable id. Each family file defines
 * its hq_algo_<name>; the table is the only place that lists them all.
 */
#include "internal.h"

static hq_algo *table[HQ_ID_LIMIT];
static int ids[HQ_ID_LIMIT]; /* dense list of present ids, in id order */
static int count;

static void registry_build(void) {
  hq_algo *all[] = {
#define HQ_ADDR(n) &hq_algo_##n,
      HQ_ALGOS(HQ_ADDR)
  };
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    hq_algo *a = all[i];
    if (a->init && a->info.id > 0 && a->info.id < HQ_ID_LIMIT)
      table[a->info.id] = a;
  }
  count = 0;
  for (int id = 1; id < HQ_ID_LIMIT; id++)
    if (table[id]) ids[count++] = id;
}

void hq_dispatch_select_all(uint32_t cpu) {
  registry_build();
  for (int i = 0; i < count; i++) {
    hq_algo *a = table[ids[i]];
    if (a->select) a->select(a, cpu);
    if (!a->impl) a->impl = "portable";
  }
}

hq_algo *hq_algo_by_id(int id) {
  return id > 0 && id < HQ_ID_LIMIT ? table[id] : NULL;
}

int hq_algorithm_count(void) { return count; }

const hq_info *hq_algorithm_at(int index) {
  return index >= 0 && index < count ? &table[ids[index]]->info : NULL;
}

const hq_info *hq_info_of(int id) {
  hq_algo *a = hq_algo_by_id(id);
  return a ? &a->info : NULL;
}

int hq_find(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < count; i++)
    if (strcmp(table[ids[i]]->info.name, name) == 0) return ids[i];
  return -1;
}

const char *hq_implementation(int id) {
  hq_algo *a = hq_algo_by_id(id);
  return a ? a->impl : NULL;
}
