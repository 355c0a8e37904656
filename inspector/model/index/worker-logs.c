/* worker-logs.c: the log a DataLoader worker process wrote next to the main log (see
 * worker-logs.h). Only file names of the workers' pattern are opened, and only their headers
 * are read: a folder of many logs costs one short read each. */
#include "worker-logs.h"

#include <gio/gio.h>
#include <gradscope/trace-reader.h>
#include <string.h>

/* The pid in a log's header, or 0 if path does not start with one (the reader judges). */
static guint32 header_pid(const char *path) {
  g_autoptr(GFile) file = g_file_new_for_path(path);
  g_autoptr(GFileInputStream) in = g_file_read(file, NULL, NULL);
  guint8 head[64]; /* the header; a longer read would only add the first chunk */
  gsize got = 0;
  if (!in || !g_input_stream_read_all(G_INPUT_STREAM(in), head, sizeof head, &got, NULL, NULL))
    return 0;
  gs_trace_reader *reader = gs_trace_reader_new();
  gs_trace_reader_feed(reader, head, got);
  gs_trace_event e;
  gs_trace_reader_next(reader, &e); /* takes the header in */
  guint32 major = 0, minor = 0, pid = 0;
  uint64_t start = 0;
  if (!gs_trace_reader_header(reader, &major, &minor, &start, &pid))
    pid = 0;
  gs_trace_reader_free(reader);
  return pid;
}

char *gs_worker_log_find(const char *log_path, guint32 pid) {
  if (!log_path || !pid)
    return NULL;
  g_autofree char *dir = g_path_get_dirname(log_path);
  g_autofree char *base = g_path_get_basename(log_path);
  /* "run.gstrace" -> "run.worker-" ... ".gstrace"; "run" -> "run.worker-" ... "". */
  const char *dot = strrchr(base, '.');
  gsize stem = dot && dot != base ? (gsize)(dot - base) : strlen(base);
  g_autofree char *prefix = g_strdup_printf("%.*s.worker-", (int)stem, base);
  const char *suffix = base + stem;
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  for (const char *name; d && (name = g_dir_read_name(d));) {
    if (!g_str_has_prefix(name, prefix) || !g_str_has_suffix(name, suffix))
      continue;
    /* Between prefix and suffix, the worker's number and nothing else. */
    const char *n = name + strlen(prefix);
    gsize digits = strlen(n) - strlen(suffix);
    if (digits == 0 || strspn(n, "0123456789") != digits)
      continue;
    g_autofree char *path = g_build_filename(dir, name, NULL);
    if (header_pid(path) == pid)
      return g_steal_pointer(&path);
  }
  return NULL;
}
