/* gradscope/trace.h: the event log: recording it, and (through the headers it includes)
 * reading it back.
 *
 * The recorder is off unless asked for (GS_TRACE=path, GS_TRACE=unix:/path/to/socket,
 * GS_TRACE_FD=N, or gs_trace_open). When off, each event site costs one predictable branch.
 * When on, events go into per-thread buffers that are written as CRC-checked chunks, so a
 * crash loses at most the unflushed tail. doc/trace-format.md specifies the bytes.
 *
 * Recording is the engine's (libgradscope). Reading is the capture library's (capture/,
 * which libgradscope contains too): its API is gradscope/trace-reader.h and, for call sites'
 * source lines, gradscope/trace-symbols.h. A program that only reads logs (the inspector)
 * includes those two and links the capture library alone, without the engine or OpenBLAS;
 * one that includes this header keeps seeing all of it, as before the split.
 */
#pragma once

#include "types.h"
#include "trace-reader.h"
#include "trace-symbols.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- recording ------------------------------------------------------------------------ */

/* Starts recording to dest: a file path, "unix:/path/to/socket" or "fd:N". Returns 0, or -1
 * after reporting (the recorder stays off). Recording from the environment (GS_TRACE,
 * GS_TRACE_FD) starts by itself when the library loads. */
GS_API int gs_trace_open(const char *dest);
/* A flight recorder: records as gs_trace_open does, but keeps only the newest `bytes` of the
 * log in memory (whole chunks) and writes them to path, as a log that opens with a snapshot of
 * what was alive at its first event, when gs_trace_dump is called, when an error is raised,
 * on a fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM) and at exit or
 * gs_trace_close. GS_TRACE=path with GS_TRACE_RING=64M (K, M or G) does the same from the
 * environment. Returns 0, or -1 after reporting (the recorder stays off). */
GS_API int gs_trace_open_ring(const char *path, uint64_t bytes);
/* Writes a flight recorder's ring out now (each dump replaces the last). 0, or -1 when no
 * ring is recording or the file cannot be written. */
GS_API int gs_trace_dump(void);
/* Flushes every thread's buffer and stops recording (a flight recorder is dumped first). */
GS_API void gs_trace_close(void);
/* Writes every thread's buffered events now. */
GS_API void gs_trace_flush(void);
GS_API bool gs_trace_enabled(void);
/* A user mark ("epoch 3", "step 120"): shown on timelines and in dumps. */
GS_API void gs_trace_mark(const char *label);
/* A named range of this thread's calls (torch.profiler.record_function): shown in the log
 * as a range_begin and a range_end event (since format 2.1), which profilers read back as a
 * span with the calls inside it. Ranges nest per thread: an end must name the innermost
 * open range (else an error, and the range stays open). Each takes an event number whether
 * the log is on or off. */
GS_API void gs_trace_range_begin(const char *name);
GS_API void gs_trace_range_end(const char *name);
/* How many ranges this thread has open. */
GS_API int gs_trace_ranges_open(void);
/* The name of this thread's open range i (0: the outermost), or NULL when fewer are open:
 * what a log's reader must find open at this call (the differential oracle asks). */
GS_API const char *gs_trace_range_name(int i);
/* Gives t a name in the log (shown on graphs instead of its number). */
GS_API void gs_trace_name(gs_tensor t, const char *name);
/* Charges this thread's next events to a call site given as text, "function (file:line)",
 * instead of the return address the engine finds: for programs run by an interpreter, whose
 * lines the engine cannot see (the Python module sets it from the current Python frame before
 * each engine call, while the log is on). The text is copied; NULL or "" returns to the
 * engine's own walk. Since format 1.5 (the site event's trailing name). */
GS_API void gs_trace_set_site_text(const char *text);

#ifdef __cplusplus
}
#endif
