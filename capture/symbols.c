/* symbols.c: addresses to `function (file:line)`, with elfutils' libdwfl, for the call sites a
 * log records (its binary events say which binaries were loaded where) and for the running
 * process (the leak report). Each binary is opened the first time an address falls in it, and
 * each address is looked up once. A binary whose file is gone or was rebuilt since the run
 * (another build id) gives its path and the offset only: a line from another build would be
 * a lie. Without debug info: the symbol and the offset.
 */
#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gradscope/trace-symbols.h"

typedef struct binary {
  char *path;
  uint64_t bias, lo, hi; /* code range in the address space */
  char *build_id;        /* hex, "" if unknown */
  Dwfl *dwfl;            /* opened on first use */
  Dwfl_Module *module;
  bool opened, stale;
} binary;

typedef struct entry {
  uint64_t address; /* 0: empty */
  gs_symbol symbol;
} entry;

struct gs_symbols {
  binary *binaries;
  size_t n_binaries, binaries_capacity;
  entry *cache;
  size_t cache_capacity, cache_count;
};

static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

gs_symbols *gs_symbols_new(void) { return calloc(1, sizeof(gs_symbols)); }

static void clear_symbol(gs_symbol *s) {
  free((char *)s->function);
  free((char *)s->file);
}

void gs_symbols_free(gs_symbols *s) {
  if (!s)
    return;
  for (size_t i = 0; i < s->n_binaries; i++) {
    if (s->binaries[i].dwfl)
      dwfl_end(s->binaries[i].dwfl);
    free(s->binaries[i].path);
    free(s->binaries[i].build_id);
  }
  for (size_t i = 0; i < s->cache_capacity; i++)
    if (s->cache[i].address)
      clear_symbol(&s->cache[i].symbol);
  free(s->binaries);
  free(s->cache);
  free(s);
}

static void drop_cache(gs_symbols *s) {
  for (size_t i = 0; i < s->cache_capacity; i++)
    if (s->cache[i].address)
      clear_symbol(&s->cache[i].symbol);
  if (s->cache)
    memset(s->cache, 0, s->cache_capacity * sizeof *s->cache);
  s->cache_count = 0;
}

void gs_symbols_add_binary(gs_symbols *s, const char *path, uint64_t bias, uint64_t code_offset,
                           uint64_t code_size, const char *build_id) {
  if (!s || !path)
    return;
  uint64_t lo = bias + code_offset;
  for (size_t i = 0; i < s->n_binaries; i++)
    if (s->binaries[i].lo == lo && !strcmp(s->binaries[i].path, path))
      return; /* the same binary again (every log repeats them) */
  if (s->n_binaries == s->binaries_capacity) {
    size_t cap = s->binaries_capacity ? 2 * s->binaries_capacity : 16;
    binary *grown = realloc(s->binaries, cap * sizeof *grown);
    if (!grown)
      return;
    s->binaries = grown, s->binaries_capacity = cap;
  }
  char *p = strdup(path), *b = strdup(build_id ? build_id : "");
  if (!p || !b) {
    free(p), free(b);
    return;
  }
  s->binaries[s->n_binaries++] = (binary){.path = p, .bias = bias, .lo = lo,
                                          .hi = lo + code_size, .build_id = b};
  /* An address looked up before its binary was known (a live log delivers binaries and sites
   * from different threads' streams in any order) is looked up again. */
  drop_cache(s);
}

static int add_loaded(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  uint64_t lo = UINT64_MAX, hi = 0;
  char build_id[129] = "";
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
      lo = ph->p_vaddr < lo ? ph->p_vaddr : lo;
      hi = ph->p_vaddr + ph->p_memsz > hi ? ph->p_vaddr + ph->p_memsz : hi;
    }
  }
  if (hi == 0)
    return 0;
  char path[4096];
  const char *name = info->dlpi_name;
  if (!name[0]) {
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0)
      return 0;
    path[n] = '\0';
    name = path;
  }
  /* The running process's own binaries are the ones that ran: no build id to compare. */
  gs_symbols_add_binary(data, name, info->dlpi_addr, lo, hi - lo, build_id);
  return 0;
}

void gs_symbols_add_this_process(gs_symbols *s) {
  if (s)
    dl_iterate_phdr(add_loaded, s);
}

static binary *binary_of(gs_symbols *s, uint64_t address) {
  for (size_t i = s->n_binaries; i-- > 0;) /* the latest first: a dlopen may reuse a range */
    if (address >= s->binaries[i].lo && address < s->binaries[i].hi)
      return &s->binaries[i];
  return NULL;
}

static void hex(const unsigned char *bytes, int n, char *out) {
  for (int i = 0; i < n; i++)
    snprintf(out + 2 * i, 3, "%02x", bytes[i]);
}

static void open_binary(binary *b) {
  b->opened = true;
  if (access(b->path, R_OK) != 0) {
    b->stale = true;
    return;
  }
  b->dwfl = dwfl_begin(&callbacks);
  if (!b->dwfl)
    return;
  dwfl_report_begin(b->dwfl);
  b->module = dwfl_report_elf(b->dwfl, b->path, b->path, -1, b->bias, false);
  dwfl_report_end(b->dwfl, NULL, NULL);
  if (!b->module) {
    b->stale = true;
    return;
  }
  if (b->build_id[0]) {
    const unsigned char *bits;
    GElf_Addr vaddr;
    int n = dwfl_module_build_id(b->module, &bits, &vaddr);
    char found[2 * 64 + 1] = "";
    if (n > 0 && n <= 64)
      hex(bits, n, found);
    if (strcmp(found, b->build_id) != 0)
      b->stale = true; /* rebuilt since the run: its lines would be another program's */
  }
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static void resolve(gs_symbols *s, uint64_t address, gs_symbol *out) {
  memset(out, 0, sizeof *out);
  binary *b = binary_of(s, address);
  if (!b)
    return;
  out->binary = b->path;
  out->offset = address - b->bias;
  if (!b->opened)
    open_binary(b);
  out->stale = b->stale;
  if (b->stale || !b->module)
    return;
  /* A site is a return address: the call is the instruction before it. */
  uint64_t pc = address - 1;
  out->function = dup_or_null(dwfl_module_addrname(b->module, pc));
  Dwfl_Line *line = dwfl_module_getsrc(b->module, pc);
  if (line) {
    int lineno = 0;
    const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
    if (file && lineno > 0) {
      out->file = strdup(file);
      out->line = lineno;
    }
  }
}

bool gs_symbols_lookup(gs_symbols *s, uint64_t address, gs_symbol *out) {
  memset(out, 0, sizeof *out);
  if (!s || !address)
    return false;
  if ((s->cache_count + 1) * 2 > s->cache_capacity) {
    size_t cap = s->cache_capacity ? 2 * s->cache_capacity : 256;
    entry *grown = calloc(cap, sizeof *grown);
    if (!grown)
      return false;
    for (size_t i = 0; i < s->cache_capacity; i++) {
      if (!s->cache[i].address)
        continue;
      size_t j = (size_t)(s->cache[i].address * 0x9e3779b97f4a7c15ull >> 17) & (cap - 1);
      while (grown[j].address)
        j = (j + 1) & (cap - 1);
      grown[j] = s->cache[i];
    }
    free(s->cache);
    s->cache = grown, s->cache_capacity = cap;
  }
  size_t j = (size_t)(address * 0x9e3779b97f4a7c15ull >> 17) & (s->cache_capacity - 1);
  while (s->cache[j].address && s->cache[j].address != address)
    j = (j + 1) & (s->cache_capacity - 1);
  if (!s->cache[j].address) {
    s->cache[j].address = address;
    resolve(s, address, &s->cache[j].symbol);
    s->cache_count++;
  }
  *out = s->cache[j].symbol;
  return out->binary != NULL;
}

static const char *base_name(const char *path) {
  const char *slash = path ? strrchr(path, '/') : NULL;
  return slash ? slash + 1 : path;
}

int gs_symbol_format(const gs_symbol *sym, uint64_t address, char *buf, size_t cap) {
  if (!sym->binary)
    return snprintf(buf, cap, "0x%" PRIx64, address);
  if (sym->function && sym->file)
    return snprintf(buf, cap, "%s (%s:%d)", sym->function, base_name(sym->file), sym->line);
  if (sym->function)
    return snprintf(buf, cap, "%s (%s+0x%" PRIx64 ")", sym->function, base_name(sym->binary),
                    sym->offset);
  return snprintf(buf, cap, "%s+0x%" PRIx64 "%s", base_name(sym->binary), sym->offset,
                  sym->stale ? " (not the binary that ran)" : "");
}
