/* intern.c: interned strings. Names that outlive their caller's buffer (scope names, dispose
 * reasons, module types) are kept once for the life of the process, so records and the event
 * log's string table can hold a pointer and compare pointers. */
#include <stdlib.h>
#include <string.h>

#include "base.h"

typedef struct interned {
  struct interned *next;
  char text[];
} interned;

static interned *buckets[1024];
static gs__spinlock lock = GS__SPINLOCK_INIT;
GS__FORK_GUARD_SPINLOCK(GS__FORK_RANK_INTERN, lock)

static uint32_t hash_string(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++)
    h = (h ^ (uint8_t)*s) * 16777619u;
  return h;
}

const char *gs__intern(const char *s) {
  uint32_t b = hash_string(s) % 1024;
  gs__spin_lock(&lock);
  interned *e = buckets[b];
  while (e && strcmp(e->text, s) != 0)
    e = e->next;
  if (!e) {
    size_t n = strlen(s) + 1;
    e = malloc(sizeof *e + n);
    if (e) {
      memcpy(e->text, s, n);
      e->next = buckets[b];
      buckets[b] = e;
    }
  }
  gs__spin_unlock(&lock);
  return e ? e->text : "(out of memory)";
}
