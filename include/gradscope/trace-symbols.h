/* gradscope/trace-symbols.h: call sites' addresses to functions and source lines, with
 * elfutils' libdw. Its own library in capture/ (libgradscope-symbols), so that a program that
 * only reads logs does not pull libdw in; the engine links it for its leak report.
 */
#pragma once

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- call sites ----------------------------------------------------------------------- */

/* Turns the addresses of call sites (site events' frames) into functions and source lines,
 * with the binaries a log lists (binary events) or those loaded in this process. One thread at
 * a time. GS_TRACE_STACKS=N records N frames per site instead of one (glibc's unwinder:
 * microseconds per new event rather than nanoseconds). */
typedef struct gs_symbols gs_symbols;

typedef struct gs_symbol {
  const char *function; /* NULL without a symbol for the address */
  const char *file;     /* the source file as the debug info names it; NULL without it */
  int line;
  const char *binary;   /* path of the binary the address is in; NULL: in none known */
  uint64_t offset;      /* the address less the binary's load bias */
  bool stale;           /* the binary is gone or was rebuilt since the run (its build id
                         * differs): only binary and offset are known */
} gs_symbol;

GS_API gs_symbols *gs_symbols_new(void);
GS_API void gs_symbols_free(gs_symbols *symbols);
/* A binary as a binary event gives it: path, load bias (address), where its code starts in the
 * file (offset) and its size (nbytes), GNU build id in hex (text; "" if unknown). */
GS_API void gs_symbols_add_binary(gs_symbols *symbols, const char *path, uint64_t bias,
                                  uint64_t code_offset, uint64_t code_size,
                                  const char *build_id);
/* Every binary loaded in this process now. */
GS_API void gs_symbols_add_this_process(gs_symbols *symbols);
/* What is at a return address (a site's frame: the call before it is looked up). False if it
 * lies in no known binary. The strings stay valid until the next add or free. */
GS_API bool gs_symbols_lookup(gs_symbols *symbols, uint64_t address, gs_symbol *out);
/* "main (leak.c:17)"; without debug info "main (leak+0x1234)"; without a symbol
 * "leak+0x1234"; outside every binary "0x7f...". Returns what snprintf does. */
GS_API int gs_symbol_format(const gs_symbol *symbol, uint64_t address, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
