/* leaks.c: what is still alive and owned by the caller: tensors created outside every scope
 * (or detached from one) and never disposed. Listed on request, and at exit when
 * GS_LEAK_REPORT=1 (or 2: every member), grouped as a reader wants them: "200 × randn
 * [64, 32] f32 (1.6 MiB) at leak.c:17 in main, held by the program", the biggest group first,
 * each with its members' handles. Where the program made them is known when the report was
 * asked for at load (GS_LEAK_REPORT): tensors then remember their call site (core/handles.c),
 * turned into file:line with libdw (capture/symbols.c). */
#include <stdlib.h>
#include <string.h>

#include "scope-impl.h"

typedef struct leak {
  uint32_t index;
  const gs__tensor *t;
  const char *scope; /* the last scope that owned it, or NULL */
} leak;

/* Leaks that differ in nothing a reader would tell apart form one group. */
static int compare_keys(const leak *a, const leak *b) {
  const gs__tensor *x = a->t, *y = b->t;
  if (x->created_at_text != y->created_at_text) /* interned: equal text, equal pointer */
    return (uintptr_t)x->created_at_text < (uintptr_t)y->created_at_text ? -1 : 1;
  if (x->created_at != y->created_at)
    return x->created_at < y->created_at ? -1 : 1;
  if (x->created_by != y->created_by) /* interned: equal text, equal pointer */
    return (uintptr_t)x->created_by < (uintptr_t)y->created_by ? -1 : 1;
  if (x->dtype != y->dtype)
    return x->dtype < y->dtype ? -1 : 1;
  if (x->ndim != y->ndim)
    return x->ndim < y->ndim ? -1 : 1;
  int c = memcmp(x->shape, y->shape, (size_t)x->ndim * sizeof *x->shape);
  if (c)
    return c;
  if (a->scope != b->scope)
    return (uintptr_t)a->scope < (uintptr_t)b->scope ? -1 : 1;
  return 0;
}

/* By group, then in creation order: a group's first members are the first made (slots are
 * reused, so handle order is not). */
static int compare_leaks(const void *pa, const void *pb) {
  const leak *a = pa, *b = pb;
  int c = compare_keys(a, b);
  if (c)
    return c;
  if (a->t->created_event != b->t->created_event)
    return a->t->created_event < b->t->created_event ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

typedef struct group {
  size_t first, n;
  uint64_t bytes;
} group;

static int compare_groups(const void *pa, const void *pb) {
  const group *a = pa, *b = pb;
  if (a->bytes != b->bytes)
    return a->bytes > b->bytes ? -1 : 1;
  return a->first < b->first ? -1 : a->first > b->first;
}

static void format_bytes(char *buf, size_t cap, uint64_t n) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)n;
  int u = 0;
  while (v >= 1024 && u < 4)
    v /= 1024, u++;
  if (u == 0)
    snprintf(buf, cap, "%llu B", (unsigned long long)n);
  else
    snprintf(buf, cap, "%.1f %s", v, units[u]);
}

/* " at leak.c:17 in main", or what is known of the place; "" when not recorded. */
static void format_site(gs_symbols *symbols, uintptr_t at, char *buf, size_t cap) {
  buf[0] = '\0';
  if (!at)
    return;
  gs_symbol sym;
  gs_symbols_lookup(symbols, at, &sym);
  if (sym.file && sym.function) {
    const char *slash = strrchr(sym.file, '/');
    snprintf(buf, cap, " at %s:%d in %s", slash ? slash + 1 : sym.file, sym.line,
             sym.function);
  } else {
    char where[512];
    gs_symbol_format(&sym, at, where, sizeof where);
    snprintf(buf, cap, " at %s", where);
  }
}

/* Up to this many members' handles per group, unless every one is asked for. */
#define MEMBERS_SHOWN 8

static int report(FILE *out, bool every_member) {
  size_t n = 0, cap = 0;
  leak *leaks = NULL;
  gs__slot *s;
  for (uint32_t index = 0; (s = (gs__slot *)gs__pool_slot_at(&gs__tensors, index)); index++) {
    if (!atomic_load(&s->pool.live) || s->own.holder != GS__HELD_BY_CALLER)
      continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 64;
      leak *grown = realloc(leaks, cap * sizeof *grown);
      if (!grown) {
        free(leaks);
        fprintf(out, "leak: out of memory while listing leaks\n");
        return -1;
      }
      leaks = grown;
    }
    leaks[n++] = (leak){index, &s->tensor, s->own.last_scope};
  }
  if (!n) {
    free(leaks);
    return 0;
  }
  qsort(leaks, n, sizeof *leaks, compare_leaks);
  group *groups = malloc(n * sizeof *groups);
  size_t n_groups = 0;
  for (size_t i = 0; groups && i < n; i++) {
    const gs__tensor *t = leaks[i].t;
    uint64_t bytes = (uint64_t)t->numel * gs_dtype_size(t->dtype);
    if (n_groups && !compare_keys(&leaks[groups[n_groups - 1].first], &leaks[i])) {
      groups[n_groups - 1].n++;
      groups[n_groups - 1].bytes += bytes;
    } else {
      groups[n_groups++] = (group){i, 1, bytes};
    }
  }
  if (!groups) {
    free(leaks);
    fprintf(out, "leak: out of memory while listing leaks\n");
    return -1;
  }
  qsort(groups, n_groups, sizeof *groups, compare_groups);
  gs_symbols *symbols = gs_symbols_new();
  gs_symbols_add_this_process(symbols);
  for (size_t g = 0; g < n_groups; g++) {
    const leak *first = &leaks[groups[g].first];
    const gs__tensor *t = first->t;
    char shape[GS__SHAPE_STR], size[32], site[600];
    format_bytes(size, sizeof size, groups[g].bytes);
    if (t->created_at_text) /* an interpreter's line, as the log and `stats` give it */
      snprintf(site, sizeof site, " at %s", t->created_at_text);
    else
      format_site(symbols, t->created_at, site, sizeof site);
    fprintf(out, "leak: %zu × %s %s %s (%s)%s, %s%s%s:", groups[g].n,
            t->created_by ? t->created_by : "?", gs__shape_str(shape, t->shape, t->ndim),
            gs_dtype_name(t->dtype), size, site,
            first->scope ? "detached from scope '" : "held by the program (made outside every "
                                                     "scope)",
            first->scope ? first->scope : "", first->scope ? "'" : "");
    size_t shown = every_member ? groups[g].n : groups[g].n < MEMBERS_SHOWN ? groups[g].n
                                                                           : MEMBERS_SHOWN;
    for (size_t i = 0; i < shown; i++) {
      const leak *l = &leaks[groups[g].first + i];
      fprintf(out, " #%u.%u (event %llu)", l->index, (unsigned)(l->t->id >> 32),
              (unsigned long long)l->t->created_event);
    }
    if (shown < groups[g].n)
      fprintf(out, " and %zu more (GS_LEAK_REPORT=2 lists every one)", groups[g].n - shown);
    fputc('\n', out);
  }
  gs_symbols_free(symbols);
  fprintf(out, "leak: %zu tensor(s) alive and owned by the caller, in %zu group(s)%s\n", n,
          n_groups,
          gs__remember_sites ? ""
                             : "; set GS_LEAK_REPORT=1 before the program starts to see where "
                               "each was made");
  free(groups);
  free(leaks);
  return (int)n;
}

int gs_leak_report(FILE *out) { return report(out ? out : stderr, false); }

static bool every_member;

static void report_at_exit(void) {
  if (report(stderr, every_member) == 0)
    fprintf(stderr, "gradscope: no leaked tensors\n");
}

/* GS_LEAK_REPORT=1 asks for the report when the process exits (2: with every member listed);
 * from then on tensors remember where they were made. */
__attribute__((constructor)) static void register_leak_report(void) {
  const char *env = getenv("GS_LEAK_REPORT");
  if (env && (strcmp(env, "1") == 0 || strcmp(env, "2") == 0)) {
    every_member = env[0] == '2';
    gs__remember_sites = true;
    atexit(report_at_exit);
  }
}
