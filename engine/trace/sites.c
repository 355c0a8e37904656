/* sites.c: where the program called the engine, for the events it causes (format 1.3).
 *
 * The site of an event is the return address of the outermost engine frame: the first return
 * address, walking the frame-pointer chain up from here, that lies outside the library's code.
 * That is what a thread-local depth counter at every public entry would give, without touching
 * every entry, and it costs nothing with the log off; in a callback the engine calls (a
 * module's forward), it is the callback's line, the innermost user code. The engine is built
 * with frame pointers (engine/meson.build) so the walk only ever reads engine frames; the
 * program's own frames are read only for GS_TRACE_STACKS=N (N > 1), through glibc's unwinder.
 *
 * Each distinct site (an address, or a stack) gets an id, defined by a site event in each
 * stream that uses it, as strings are. The binaries the addresses point into are recorded as
 * binary events (path, load bias, code range, build id), each the first time a site points
 * into it in the log (one loaded by dlopen since the log began included). A library linked statically into the
 * program cannot tell its frames from the program's: it records no sites.
 *
 * An interpreter's program (Python, through the gradscope module) runs in frames the walk
 * cannot name, so it names its own lines: gs_trace_set_site_text charges the thread's events
 * to a site given as text, "function (file:line)", recorded in the site event's name (1.5).
 */
#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format.h"
#include "trace-writer.h"
#include "writer-impl.h"

#define MAX_FRAMES 32

/* ---- the library's own code ---------------------------------------------------------- */

uintptr_t gs__tw_code_lo, gs__tw_code_hi; /* the library's code; 0, 0: no sites */
int gs__tw_stack_depth = 1;        /* GS_TRACE_STACKS */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static int find_own_code(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  uintptr_t self = (uintptr_t)data;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  bool mine = false;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
      continue;
    uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
    lo = a < lo ? a : lo;
    hi = b > hi ? b : hi;
    mine |= self >= a && self < b;
  }
  if (!mine)
    return 0;
  /* The program itself (the first object, named ""): the engine is linked into it. */
  if (info->dlpi_name[0] != '\0') {
    gs__tw_code_lo = lo;
    gs__tw_code_hi = hi;
  }
  return 1;
}

static void init(void) {
  dl_iterate_phdr(find_own_code, (void *)(uintptr_t)&gs__trace_site);
  const char *env = getenv("GS_TRACE_STACKS");
  if (env && *env) {
    long n = strtol(env, NULL, 10);
    gs__tw_stack_depth = n < 1 ? 1 : n > MAX_FRAMES ? MAX_FRAMES : (int)n;
  }
}


/* ---- binaries ------------------------------------------------------------------------ */

/* The binaries recorded in the current log (under table_lock): their code ranges, to notice
 * an address in none of them. */
typedef struct binary_range {
  uintptr_t lo, hi;
} binary_range;
static binary_range *binaries;
static size_t n_binaries, binaries_capacity;
static uint64_t binaries_epoch;

static bool known_binary(uintptr_t a) {
  for (size_t i = 0; i < n_binaries; i++)
    if (a >= binaries[i].lo && a < binaries[i].hi)
      return true;
  return false;
}

/* The GNU build id in a loaded object's notes, as hex (empty if it has none). */
static void build_id_hex(const struct dl_phdr_info *info, char *out, size_t cap) {
  out[0] = '\0';
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE)
      continue;
    const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
    const uint8_t *end = p + ph->p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)(const void *)p;
      const uint8_t *name = p + sizeof *n;
      const uint8_t *desc = name + ((n->n_namesz + 3) & ~3u);
      if (desc + n->n_descsz > end)
        break;
      if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
        size_t k = 0;
        for (uint32_t j = 0; j < n->n_descsz && k + 3 <= cap; j++, k += 2)
          snprintf(out + k, 3, "%02x", desc[j]);
        return;
      }
      p = desc + ((n->n_descsz + 3) & ~3u);
    }
  }
}

static void write_binary(uintptr_t bias, uintptr_t code_vaddr, uint64_t code_size,
                         const char *path, const char *build_id) {
  uint32_t name = gs__trace_string(gs__intern(path));
  size_t len = strlen(build_id);
  gs__tw_buffer *b = gs__tw_mine;
  /* Like strings, a table entry rather than an engine event: it repeats the stream's number. */
  uint8_t *p = gs__tw_begin_in(b, GS_TRACE_BINARY, b->last_seq, 5 * 10 + len);
  if (!p)
    return;
  p = gs__put_uvarint(p, bias);
  p = gs__put_svarint(p, (int64_t)code_vaddr);
  p = gs__put_uvarint(p, code_size);
  p = gs__put_uvarint(p, name);
  p = gs__put_uvarint(p, len);
  memcpy(p, build_id, len);
  gs__tw_end(p + len);
}

/* dl_iterate_phdr's callback: records the binary whose code holds *data (an address). */
static int record_binary(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  uintptr_t address = *(const uintptr_t *)data;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
      uintptr_t a = info->dlpi_addr + ph->p_vaddr;
      lo = a < lo ? a : lo;
      hi = a + ph->p_memsz > hi ? a + ph->p_memsz : hi;
    }
  }
  if (hi == 0 || address < lo || address >= hi)
    return 0; /* not this one */
  if (known_binary(lo))
    return 1;
  char path[PATH_MAX];
  const char *name = info->dlpi_name;
  if (!name[0]) { /* the program */
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0)
      return 0;
    path[n] = '\0';
    name = path;
  } else if (name[0] != '/') {
    return 0; /* the vDSO: no file to read symbols from, and no program code in it */
  } else if (realpath(name, path)) {
    name = path; /* "build/examples/../engine/libgradscope.so.0" as the file it is */
  }
  char build_id[2 * 64 + 1];
  build_id_hex(info, build_id, sizeof build_id);
  if (n_binaries == binaries_capacity) {
    size_t cap = binaries_capacity ? 2 * binaries_capacity : 32;
    binary_range *grown = realloc(binaries, cap * sizeof *grown);
    if (!grown)
      return 1;
    binaries = grown, binaries_capacity = cap;
  }
  binaries[n_binaries++] = (binary_range){lo, hi};
  write_binary(info->dlpi_addr, lo - info->dlpi_addr, hi - lo, name, build_id);
  return 1;
}

/* ---- the site table ------------------------------------------------------------------ */

/* Sites by frames, open addressing; ids from 1, persistent across logs like string ids. */
typedef struct site {
  uint64_t hash;
  uint32_t n;
  uint64_t *frames;
  const char *text; /* an interpreter's site (n is 0), kept for the process's life */
} site;
/* A mutex, not a spinlock: only a new site takes it, and it may write out a full buffer. */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
GS__FORK_GUARD_MUTEX(GS__FORK_RANK_TRACE_SITES, table_lock)
static uint32_t *slots; /* site id, 0 empty */
static size_t n_slots;
static site *sites; /* by id - 1 */
static uint32_t n_sites, sites_capacity;

static uint64_t hash_frames(const uint64_t *f, uint32_t n) {
  uint64_t h = 0x9e3779b97f4a7c15ull * (n + 1);
  for (uint32_t i = 0; i < n; i++)
    h = (h ^ f[i]) * 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}

/* Doubles an open-addressed table of site ids (*table, *n slots; 1024 at first), placing its
 * ids again by their sites' hashes. */
static bool grow_slots(uint32_t **table, size_t *n) {
  size_t cap = *n ? 2 * *n : 1024;
  uint32_t *grown = calloc(cap, sizeof *grown);
  if (!grown)
    return false;
  for (size_t i = 0; i < *n; i++) {
    uint32_t id = (*table)[i];
    if (!id)
      continue;
    size_t j = (size_t)sites[id - 1].hash & (cap - 1);
    while (grown[j])
      j = (j + 1) & (cap - 1);
    grown[j] = id;
  }
  free(*table);
  *table = grown, *n = cap;
  return true;
}

/* Room in sites for one more. */
static bool reserve_site(void) {
  if (n_sites < sites_capacity)
    return true;
  uint32_t cap = sites_capacity ? 2 * sites_capacity : 256;
  site *grown = realloc(sites, cap * sizeof *grown);
  if (!grown)
    return false;
  sites = grown, sites_capacity = cap;
  return true;
}

/* The id of the site with these frames, adding it if new (under table_lock); 0 when out of
 * memory. */
static uint32_t site_id(const uint64_t *f, uint32_t n) {
  uint64_t h = hash_frames(f, n);
  if ((n_sites + 1) * 2 > n_slots && !grow_slots(&slots, &n_slots))
    return 0;
  size_t j = (size_t)h & (n_slots - 1);
  for (uint32_t id; (id = slots[j]); j = (j + 1) & (n_slots - 1)) {
    const site *s = &sites[id - 1];
    if (s->hash == h && s->n == n && !memcmp(s->frames, f, n * sizeof *f))
      return id;
  }
  if (!reserve_site())
    return 0;
  uint64_t *copy = malloc(n * sizeof *copy);
  if (!copy)
    return 0;
  memcpy(copy, f, n * sizeof *f);
  sites[n_sites] = (site){h, n, copy, NULL};
  slots[j] = ++n_sites;
  return n_sites;
}

/* Defines site id in this thread's stream if it has not yet, after the binaries its frames
 * point into (under table_lock: the binary list and the site's frames). */
static void define(gs__tw_buffer *b, uint32_t id) {
  if (!gs__tw_first_use(&b->sites, id))
    return;
  uint64_t epoch = atomic_load_explicit(&gs__tw_log_epoch, memory_order_relaxed);
  if (binaries_epoch != epoch) { /* a new log: its binaries again */
    n_binaries = 0;
    binaries_epoch = epoch;
  }
  /* Only the binaries sites point into: a GUI program has a hundred loaded. One loaded since
   * the log began (a dlopen) is found the same way. */
  const site *s = &sites[id - 1];
  for (uint32_t i = 0; i < s->n; i++) {
    uintptr_t address = (uintptr_t)s->frames[i];
    if (!known_binary(address))
      dl_iterate_phdr(record_binary, &address);
  }
  /* Its text is a string-table entry, defined before the site that names it. */
  uint32_t text_id = s->text ? gs__trace_string(s->text) : 0;
  uint8_t *p = gs__tw_begin_in(b, GS_TRACE_SITE, b->last_seq, (3 + (size_t)s->n) * 10);
  if (!p)
    return;
  p = gs__put_uvarint(p, id);
  p = gs__put_uvarint(p, s->n);
  for (uint32_t i = 0; i < s->n; i++)
    p = gs__put_uvarint(p, s->frames[i]);
  p = gs__put_uvarint(p, text_id); /* since 1.5 */
  gs__tw_end(p);
}

/* ---- capture ------------------------------------------------------------------------- */

/* Set by an engine thread working for the program (the DataLoader's prefetch worker): the
 * site its events are charged to, since its own stack leads back to no program code. */
GS__THREAD_LOCAL uintptr_t gs__tw_thread_site;

/* A per-thread cache of address -> id, for sites this stream has already defined: most events
 * come from a few lines in a loop, and a hit takes no lock (writer-impl.h, gs__tw_site_find). */
GS__THREAD_LOCAL uintptr_t gs__tw_site_addr[GS__TW_SITE_CACHE];
GS__THREAD_LOCAL uint32_t gs__tw_site_id[GS__TW_SITE_CACHE];
GS__THREAD_LOCAL uint64_t gs__tw_site_epoch;

/* The first return address outside the engine, walking the frame pointers up from the frame
 * of the function that called this one; 0 if the chain is broken. Engine frames
 * all keep frame pointers, and the walk stops at the first one that is not the engine's, so
 * it never follows a frame pointer the program may not have kept. */
__attribute__((noinline)) uintptr_t gs__tw_walk(void) {
  void **fp = __builtin_frame_address(0);
  for (;;) {
    uintptr_t ret = (uintptr_t)fp[1];
    if (!gs__tw_in_engine(ret))
      return ret;
    void **up = fp[0];
    if (__builtin_expect(up <= fp, 0)) /* the chain must go up the stack: else it is broken */
      return 0;
    fp = up;
  }
}

/* Whether init has run: checked with a plain load on every event (pthread_once costs a call
 * and an atomic load each time). Set before recording starts (gs__trace_sites_init). */
atomic_bool gs__tw_sites_ready;

void gs__trace_sites_init(void) {
  pthread_once(&init_once, init);
  atomic_store_explicit(&gs__tw_sites_ready, true, memory_order_release);
}

uintptr_t gs__trace_caller(void) {
  if (!atomic_load_explicit(&gs__tw_sites_ready, memory_order_acquire))
    gs__trace_sites_init();
  if (gs__tw_thread_site)
    return gs__tw_thread_site;
  return gs__tw_code_hi ? gs__tw_walk() : 0;
}

void gs__trace_thread_site(uintptr_t address) {
  gs__tw_thread_site = address;
  gs__tw_call_site_forget();
}

/* A whole stack (GS_TRACE_STACKS=N): glibc's unwinder reads the program's frames whether or
 * not it kept frame pointers; the engine's frames are skipped. */
static uint32_t capture_stack(uint64_t *frames) {
  void *raw[64 + MAX_FRAMES];
  int n = backtrace(raw, 64 + MAX_FRAMES);
  int first = 0;
  while (first < n && (gs__tw_in_engine((uintptr_t)raw[first]) || !first))
    first++; /* frame 0 is backtrace's caller, in the engine */
  uint32_t k = 0;
  if (gs__tw_thread_site) { /* the charged site first, once */
    frames[k++] = gs__tw_thread_site;
    if (first < n && (uintptr_t)raw[first] == gs__tw_thread_site)
      first++;
  }
  for (int i = first; i < n && k < (uint32_t)gs__tw_stack_depth; i++)
    frames[k++] = (uint64_t)(uintptr_t)raw[i];
  return k;
}

static uint32_t site_of_frames(gs__tw_buffer *b, const uint64_t *frames, uint32_t n) {
  pthread_mutex_lock(&table_lock);
  uint32_t id = site_id(frames, n);
  if (id)
    define(b, id);
  pthread_mutex_unlock(&table_lock);
  return id;
}

uint32_t gs__trace_site(void) { return gs__tw_site_find(); }

/* A site not in this thread's cache, or a whole stack. */
uint32_t gs__tw_site_slow(uintptr_t ret, size_t slot, uint64_t epoch) {
  gs__tw_emit_pending(); /* before a definition, as for strings (writer.c) */
  gs__tw_buffer *b = gs__tw_mine;
  if (!b && !(b = gs__tw_buffer_new()))
    return 0;
  if (gs__tw_stack_depth > 1) {
    uint64_t frames[MAX_FRAMES];
    uint32_t n = capture_stack(frames);
    return n ? site_of_frames(b, frames, n) : 0;
  }
  if (!ret)
    return 0;
  if (gs__tw_site_epoch != epoch) { /* ids too: an empty slot must answer 0 for address 0 */
    memset(gs__tw_site_addr, 0, sizeof gs__tw_site_addr);
    memset(gs__tw_site_id, 0, sizeof gs__tw_site_id);
    gs__tw_site_epoch = epoch;
  }
  uint64_t frame = ret;
  uint32_t id = site_of_frames(b, &frame, 1);
  if (id) {
    gs__tw_site_addr[slot] = ret;
    gs__tw_site_id[slot] = id;
  }
  return id;
}

/* ---- interpreters' sites (since 1.5) ----------------------------------------------------- */

/* Text -> site id, open addressing over the same id space as the address sites (under
 * table_lock). An interpreter has one site per line that calls the engine: a few thousand. */
static uint32_t *text_slots;
static size_t n_text_slots, n_texts;

static uint64_t hash_text(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++)
    h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
  return h;
}

/* The id of the site with this text, adding it if new; 0 when out of memory. */
static uint32_t text_site_id(const char *text) {
  if ((n_texts + 1) * 2 > n_text_slots && !grow_slots(&text_slots, &n_text_slots))
    return 0;
  uint64_t h = hash_text(text);
  size_t j = (size_t)h & (n_text_slots - 1);
  for (uint32_t id; (id = text_slots[j]); j = (j + 1) & (n_text_slots - 1)) {
    const site *s = &sites[id - 1];
    if (s->hash == h && strcmp(s->text, text) == 0)
      return id;
  }
  if (!reserve_site())
    return 0;
  char *copy = strdup(text);
  if (!copy)
    return 0;
  sites[n_sites] = (site){h, 0, NULL, copy};
  text_slots[j] = ++n_sites;
  n_texts++;
  return n_sites;
}

GS__THREAD_LOCAL uint32_t gs__tw_text_site;
GS__THREAD_LOCAL uint32_t gs__tw_call_site;
GS__THREAD_LOCAL uint64_t gs__tw_call_site_epoch;
/* The last interpreter site this thread's stream defined, and in which log. */
static GS__THREAD_LOCAL uint32_t text_site_defined;
static GS__THREAD_LOCAL uint64_t text_site_defined_epoch;

void gs_trace_set_site_text(const char *text) {
  gs__tw_call_site_forget(); /* the events after this take the interpreter's line */
  if (!text || !*text) {
    gs__tw_text_site = 0;
    return;
  }
  pthread_mutex_lock(&table_lock);
  gs__tw_text_site = text_site_id(text);
  pthread_mutex_unlock(&table_lock);
}

const char *gs__trace_site_text_current(void) {
  uint32_t id = gs__tw_text_site;
  if (!id)
    return NULL;
  pthread_mutex_lock(&table_lock); /* the table may be growing on another thread */
  const char *text = id <= n_sites ? sites[id - 1].text : NULL;
  pthread_mutex_unlock(&table_lock);
  return text;
}

uint32_t gs__tw_text_site_use(void) {
  uint32_t id = gs__tw_text_site;
  uint64_t epoch = atomic_load_explicit(&gs__tw_log_epoch, memory_order_relaxed);
  if (text_site_defined == id && text_site_defined_epoch == epoch)
    return id; /* a loop calling from one line: defined already, no lock */
  gs__tw_emit_pending(); /* before a definition, as for strings (writer.c) */
  gs__tw_buffer *b = gs__tw_mine;
  if (!b && !(b = gs__tw_buffer_new()))
    return 0;
  pthread_mutex_lock(&table_lock);
  define(b, id);
  pthread_mutex_unlock(&table_lock);
  text_site_defined = id;
  text_site_defined_epoch = epoch;
  return id;
}
