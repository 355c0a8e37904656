/* trace-model.c: building the trace model: raw bytes in, one pass through the reader, every
 * event indexed and applied to the head state (see trace-model.h, model-private.h). */
#include "model-private.h"
#include "escape.h"
#include "trace-file.h"
#include <inttypes.h>

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n-lib.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* Fed bytes are kept in pages this big: no copying as the log grows. */
#define MODEL_PAGE (1u << 20)
/* load_file reads the file in pieces this big: progress moves and cancelling is prompt. */
#define LOAD_PIECE (1u << 20)

gs_trace_model *gs_trace_model_new(void) {
  gs_trace_model *m = g_new0(gs_trace_model, 1);
  m->reader = gs_trace_reader_new();
  m->pages = g_ptr_array_new_with_free_func((GDestroyNotify)g_byte_array_unref);
  m->fd = -1;
  m->chunks = g_array_new(FALSE, FALSE, sizeof(model_chunk));
  m->kinds = g_array_new(FALSE, FALSE, sizeof(guint8));
  m->seq_off = g_array_new(FALSE, FALSE, sizeof(guint16));
  m->seq_wide = g_array_new(FALSE, FALSE, sizeof(guint32));
  m->time_off = g_array_new(FALSE, FALSE, sizeof(guint32));
  m->seq_big = g_hash_table_new_full(gs_id_hash, gs_id_equal, g_free, g_free);
  m->time_big = g_hash_table_new_full(gs_id_hash, gs_id_equal, g_free, g_free);
  m->thread_chunks = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                           (GDestroyNotify)g_array_unref);
  m->threads = g_array_new(FALSE, FALSE, sizeof(guint32));
  m->strings = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  m->sites = gs_site_table_new();
  model_life_index_init(m);
  model_scopes_init(m);
  m->head = gs_replay_new();
  m->keyframes = g_array_new(FALSE, FALSE, sizeof(model_keyframe));
  m->cursor_scopes_own = g_array_new(FALSE, FALSE, sizeof(guint));
  m->keyframe_events = 8192; /* a seek applies at most this many events after a copy */
  m->keyframe_share_min = MODEL_KEYFRAME_SHARE_MIN;
  model_decoder_init(&m->seek_decoder);
  model_decoder_init(&m->event_decoder);
  model_decoder_init(&m->query_decoder);
  model_series_init(&m->total);
  model_series_init(&m->outside);
  for (int c = 0; c < GS_MEM_N_CATEGORIES; c++)
    model_series_init(&m->categories[c]);
  m->group_series = g_ptr_array_new();
  m->rest_bytes_by_group = g_array_new(FALSE, TRUE, sizeof(guint64));
  m->memory = model_memory_new();
  model_keyframes_after(m, 0); /* the empty state: seeks before the first keyframe start here */
  return m;
}

void gs_trace_model_free(gs_trace_model *m) {
  if (!m)
    return;
  model_life_feed_end(m, TRUE);
  gs_trace_reader_free(m->reader);
  g_free(m->problem);
  g_ptr_array_unref(m->pages);
  if (m->fd >= 0)
    close(m->fd);
  g_array_unref(m->chunks);
  g_array_unref(m->kinds);
  g_array_unref(m->seq_off);
  g_array_unref(m->seq_wide);
  g_array_unref(m->time_off);
  g_hash_table_destroy(m->seq_big);
  g_hash_table_destroy(m->time_big);
  g_hash_table_destroy(m->thread_chunks);
  g_array_unref(m->threads);
  g_hash_table_destroy(m->strings);
  gs_site_table_free(m->sites);
  model_life_index_clear(m);
  gs_tensor_life_free(m->life_cache);
  model_scopes_clear(m);
  model_keyframes_clear(m);
  g_array_unref(m->keyframes);
  g_clear_pointer(&m->cursor, gs_replay_free);
  g_array_unref(m->cursor_scopes_own);
  gs_replay_free(m->head);
  model_decoder_clear(&m->seek_decoder);
  model_decoder_clear(&m->event_decoder);
  model_decoder_clear(&m->query_decoder);
  model_series_clear(&m->total);
  model_series_clear(&m->outside);
  for (int c = 0; c < GS_MEM_N_CATEGORIES; c++)
    model_series_clear(&m->categories[c]);
  for (guint i = 0; i < m->group_series->len; i++) {
    model_series_clear(m->group_series->pdata[i]);
    g_free(m->group_series->pdata[i]);
  }
  g_ptr_array_unref(m->group_series);
  g_array_unref(m->rest_bytes_by_group);
  model_memory_free(m->memory);
  g_free(m);
}

static void keep_bytes(gs_trace_model *m, const guint8 *bytes, gsize n) {
  while (n > 0) {
    GByteArray *page = m->pages->len ? m->pages->pdata[m->pages->len - 1] : NULL;
    if (!page || page->len == MODEL_PAGE) {
      page = g_byte_array_sized_new(MODEL_PAGE);
      g_ptr_array_add(m->pages, page);
    }
    gsize take = MIN(n, MODEL_PAGE - page->len);
    g_byte_array_append(page, bytes, (guint)take);
    bytes += take;
    n -= take;
  }
}

static void set_problem(gs_trace_model *m, char *problem) {
  g_free(m->problem);
  m->problem = problem;
}

static void add_thread(gs_trace_model *m, guint32 thread, guint chunk) {
  GArray *list = g_hash_table_lookup(m->thread_chunks, GUINT_TO_POINTER(thread));
  if (!list) {
    list = g_array_new(FALSE, FALSE, sizeof(guint));
    g_hash_table_insert(m->thread_chunks, GUINT_TO_POINTER(thread), list);
    /* A binary search: a log may have 100,000 threads (a linear one was quadratic). Threads
     * come mostly in order, so the insertion itself moves little. */
    guint lo = 0, hi = m->threads->len;
    while (lo < hi) {
      guint mid = lo + (hi - lo) / 2;
      if (g_array_index(m->threads, guint32, mid) < thread)
        lo = mid + 1;
      else
        hi = mid;
    }
    g_array_insert_val(m->threads, lo, thread);
  }
  g_array_append_val(list, chunk);
}

/* The offset of value from base, or G_MAXUINT32 with the value kept aside. */
static guint32 offset_or_aside(GHashTable *aside, guint64 index, guint64 base, guint64 value) {
  if (value >= base && value - base < G_MAXUINT32)
    return (guint32)(value - base);
  guint64 *key = g_new(guint64, 1), *val = g_new(guint64, 1);
  *key = index;
  *val = value;
  g_hash_table_insert(aside, key, val);
  return G_MAXUINT32;
}

/* The seq offset of the event at index in the chunk being indexed: two bytes in seq_off while
 * the chunk's offsets fit (most do: a chunk holds a few thousand events), else four in
 * seq_wide for all of the chunk's events, those indexed before copied over. */
static guint16 seq_column(gs_trace_model *m, model_chunk *c, guint64 index, guint64 seq) {
  guint32 off = offset_or_aside(m->seq_big, index, c->seq0, seq);
  if (c->seq_wide == G_MAXUINT32 && off <= G_MAXUINT16)
    return (guint16)off;
  if (c->seq_wide == G_MAXUINT32) {
    c->seq_wide = m->seq_wide->len;
    if (m->life_feed) /* the chunk's earlier offsets may be on their way to the columns */
      model_life_feed_sync(m);
    guint64 flushed = m->seq_off->len;
    for (guint64 j = c->first; j < index; j++) {
      guint32 was = j < flushed ? g_array_index(m->seq_off, guint16, j)
                                : m->pending_seq[j - flushed];
      g_array_append_val(m->seq_wide, was);
    }
  }
  g_array_append_val(m->seq_wide, off);
  return 0;
}

static void flush_pending(gs_trace_model *m) {
  if (!m->n_pending)
    return;
  g_array_append_vals(m->kinds, m->pending_kinds, m->n_pending);
  g_array_append_vals(m->seq_off, m->pending_seq, m->n_pending);
  g_array_append_vals(m->time_off, m->pending_time, m->n_pending);
  m->n_pending = 0;
}

static void index_event(gs_trace_model *m, const gs_trace_event *e) {
  guint64 index = m->n_indexed++;
  uint64_t offset = 0, size = 0;
  gs_trace_reader_chunk(m->reader, &offset, &size);
  model_chunk *c = m->chunks->len ? &g_array_index(m->chunks, model_chunk, m->chunks->len - 1)
                                  : NULL;
  if (!c || c->offset != offset) {
    model_chunk fresh = {.offset = offset, .first = index, .seq0 = e->seq, .time0 = e->time_ns,
                         .size = (guint32)size, .thread = e->thread, .seq_wide = G_MAXUINT32};
    g_array_append_val(m->chunks, fresh);
    add_thread(m, e->thread, m->chunks->len - 1);
    c = &g_array_index(m->chunks, model_chunk, m->chunks->len - 1);
  }
  c->n++;
  guint8 kind = (guint8)(e->kind | (e->derived ? MODEL_DERIVED : 0));
  guint16 seq = seq_column(m, c, index, e->seq);
  guint32 time = offset_or_aside(m->time_big, index, c->time0, e->time_ns);
  if (m->life_feed) {
    model_life_feed_add(m, e, index, kind, seq, time);
  } else {
    guint p = m->n_pending++;
    m->pending_kinds[p] = kind;
    m->pending_seq[p] = seq;
    m->pending_time[p] = time;
    model_life_add(m, e, index);
    if (m->n_pending == MODEL_PENDING)
      flush_pending(m);
  }

  if (e->kind == GS_TRACE_SNAPSHOT_BEGIN && !m->snapshot) {
    m->snapshot = TRUE;
    m->snapshot_first_seq = e->seq + 1;
    m->snapshot_objects = e->count;
    m->snapshot_begin = index;
    m->snapshot_end = G_MAXUINT64;
  } else if (e->kind == GS_TRACE_SNAPSHOT_END && m->snapshot && m->snapshot_end == G_MAXUINT64) {
    m->snapshot_end = index;
    if (e->count) /* a snapshot walked as it was written counts its objects at its end */
      m->snapshot_objects = e->count;
  }
  model_memory_before(m, e);
  gs_replay_apply_with(m->head, e, model_string_fn, m);
  model_memory_after(m, e, index);
  model_scopes_after(m, e, index);
  model_keyframes_after(m, index + 1);
  /* Rebuilding costs the live nodes: after at least twice as many events as there are, so
   * 200,000 live nodes do not make every 16,384th event rebuild them all. */
  if (index + 1 >= m->compact_at) {
    gs_replay_compact(m->head);
    guint64 live = g_hash_table_size(m->head->nodes);
    m->compact_at = index + 1 + MAX(16384, 2 * live);
  }
}

/* Indexes every whole event the reader has; the count added. */
static guint64 drain(gs_trace_model *m) {
  guint64 added = 0;
  for (;;) {
    const gs_trace_event *ev = NULL; /* the reader's own: no copy per event */
    gs_trace_status status = gs_trace_reader_next_ref(m->reader, &ev);
    if (status == GS_TRACE_NEED_MORE)
      break;
    if (status == GS_TRACE_DAMAGED) {
      flush_pending(m);
      if (!m->problem) {
        uint64_t at = 0;
        const char *what = gs_trace_reader_error(m->reader, &at);
        /* The reader's message says what and at which byte. */
        (void)at;
        set_problem(m, gs_trace_problem_damaged(what, m->n_indexed));
      }
      break;
    }
    if (m->header_size == 0) {
      uint64_t offset = 0;
      gs_trace_reader_chunk(m->reader, &offset, NULL);
      m->header_size = offset;
    }
    if (ev->kind == GS_TRACE_STRING) {
      g_hash_table_replace(m->strings, GUINT_TO_POINTER(ev->name),
                           gs_text_from_log(ev->text, ev->text_len));
      continue;
    }
    if (ev->kind == GS_TRACE_SITE || ev->kind == GS_TRACE_BINARY) {
      gs_site_table_add(m->sites, ev, gs_trace_model_string(m, ev->name));
      continue;
    }
    if (m->n_indexed >= G_MAXUINT32) {
      flush_pending(m);
      set_problem(m, g_strdup_printf(_("The log has more than %u events; the first %u are "
                                       "shown."), G_MAXUINT32 - 1, G_MAXUINT32 - 1));
      break;
    }
    index_event(m, ev);
    added++;
  }
  flush_pending(m);
  return added;
}

gboolean gs_trace_model_damaged(const gs_trace_model *m) {
  return gs_trace_reader_error(m->reader, NULL) != NULL || m->n_indexed >= G_MAXUINT32;
}

guint64 gs_trace_model_feed(gs_trace_model *m, const void *bytes, gsize n) {
  g_return_val_if_fail(m != NULL, 0);
  g_return_val_if_fail(!m->finished, 0);
  if (n == 0 || gs_trace_model_damaged(m))
    return 0;
  if (m->fd < 0)
    keep_bytes(m, bytes, n);
  m->fed += n;
  gs_trace_reader_feed(m->reader, bytes, n);
  return drain(m);
}

void gs_trace_model_finish(gs_trace_model *m) {
  g_return_if_fail(m != NULL);
  if (m->finished)
    return;
  m->finished = TRUE;
  if (m->problem)
    return;
  uint64_t at = 0;
  if (!gs_trace_reader_header(m->reader, NULL, NULL, NULL, NULL))
    set_problem(m, g_strdup_printf(_("The source ended after %" PRIu64 " bytes, "
                                     "before a whole log header: it is empty or not a "
                                     "Gradscope event log."), m->fed));
  else if (gs_trace_reader_truncated(m->reader, &at))
    set_problem(m, gs_trace_problem_truncated(at, m->n_indexed));
}

/* As gs_trace_model_feed, for n bytes read into the reader's room (a regular file: m->fd). */
static void feed_read(gs_trace_model *m, gsize n) {
  m->fed += n;
  gs_trace_reader_fed(m->reader, n);
  drain(m);
}

gboolean gs_trace_model_read_back_from(gs_trace_model *m, int fd) {
  g_return_val_if_fail(m != NULL && fd >= 0, FALSE);
  g_return_val_if_fail(m->fed == 0 && m->fd < 0, FALSE);
  m->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  return m->fd >= 0;
}

guint64 gs_trace_model_bytes_kept(const gs_trace_model *m) {
  guint64 kept = 0;
  for (guint i = 0; i < m->pages->len; i++)
    kept += ((const GByteArray *)m->pages->pdata[i])->len;
  return kept;
}

const char *gs_trace_model_problem(const gs_trace_model *m) { return m->problem; }

gs_site_table *gs_trace_model_sites(const gs_trace_model *m) { return m->sites; }

guint64 gs_trace_model_bytes_fed(const gs_trace_model *m) { return m->fed; }

guint64 gs_trace_model_n_events(const gs_trace_model *m) { return m->kinds->len; }

const GArray *gs_trace_model_threads(const gs_trace_model *m) { return m->threads; }

gboolean gs_trace_model_snapshot(const gs_trace_model *m, guint64 *first_seq, guint64 *objects,
                                 guint64 *end_index) {
  if (first_seq)
    *first_seq = m->snapshot ? m->snapshot_first_seq : 0;
  if (objects)
    *objects = m->snapshot ? m->snapshot_objects : 0;
  if (end_index)
    *end_index = m->snapshot ? m->snapshot_end : G_MAXUINT64;
  return m->snapshot;
}

const char *model_string_fn(guint32 id, gpointer model) {
  const gs_trace_model *m = model;
  const char *text = g_hash_table_lookup(m->strings, GUINT_TO_POINTER(id));
  return text ? text : "";
}

const char *gs_trace_model_string(const gs_trace_model *m, guint32 id) {
  return model_string_fn(id, (gpointer)m);
}

const gs_replay *gs_trace_model_head(const gs_trace_model *m) { return m->head; }

/* Reads the file through the model; its bytes stay in the file (re-read by pread), not in
 * memory, which is what keeps a 10 M event log within the memory budget. */
gboolean model_load_file(gs_trace_model *m, const char *path, gs_trace_progress_fn progress,
                         gpointer user_data, GCancellable *cancellable, gboolean parallel,
                         GError **error) {
  g_return_val_if_fail(m->fed == 0 && m->fd < 0, FALSE);
  int fd = g_open(path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) {
    int saved = errno;
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved), _("Cannot open %s: %s"),
                path, g_strerror(saved));
    return FALSE;
  }
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    close(fd);
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_ISDIR,
                _("Cannot read %s: it is a folder, not an event log"), path);
    return FALSE;
  }
  gboolean regular = S_ISREG(st.st_mode);
  guint64 total = regular ? (guint64)st.st_size : 0;
  /* A regular file is read again on demand; a pipe or a device cannot be, so its bytes are
   * kept in memory as a fed source's are. */
  m->fd = regular ? fd : -1;
  if (parallel)
    model_life_feed_start(m);
  /* A regular file is read straight into the reader's buffer (nothing kept: the copy into the
   * reader was 3% of the open); other sources go through a piece of their own. */
  g_autofree guint8 *piece = regular ? NULL : g_malloc(LOAD_PIECE);
  gboolean ok = TRUE;
  for (;;) {
    if (g_cancellable_set_error_if_cancelled(cancellable, error)) {
      ok = FALSE;
      break;
    }
    guint8 *into = regular ? gs_trace_reader_feed_space(m->reader, LOAD_PIECE) : piece;
    if (!into) /* damaged (or out of memory) */
      break;
    ssize_t n = read(fd, into, LOAD_PIECE);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int saved = errno;
      g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved), _("Cannot read %s: %s"),
                  path, g_strerror(saved));
      ok = FALSE;
      break;
    }
    if (n == 0)
      break;
    if (regular)
      feed_read(m, (gsize)n);
    else
      gs_trace_model_feed(m, piece, (gsize)n);
    if (progress)
      progress(m->fed, total, user_data);
    if (gs_trace_model_damaged(m))
      break;
  }
  /* A cancelled or failed load's model is freed: the life thread need not finish its work. */
  model_life_feed_end(m, !ok);
  if (ok)
    gs_trace_model_finish(m);
  if (!regular)
    close(fd);
  return ok;
}

gs_trace_model *gs_trace_model_load_file(const char *path, gs_trace_progress_fn progress,
                                         gpointer user_data, GCancellable *cancellable,
                                         GError **error) {
  gs_trace_model *m = gs_trace_model_new();
  /* On two cores or more the life index is kept on a thread of its own. */
  if (!model_load_file(m, path, progress, user_data, cancellable, g_get_num_processors() > 1,
                       error)) {
    gs_trace_model_free(m);
    return NULL;
  }
  /* One seek near the end here, on the loading thread, so that the UI thread's first seek
   * does not fault in the cursor's scope list (model-seek.c: 60 ms at 100 M events): later
   * seeks reuse it, and its pages. */
  guint64 n = gs_trace_model_n_events(m);
  if (n > 2)
    gs_trace_model_seek(m, n - 2);
  return m;
}
