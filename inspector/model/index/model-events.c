/* model-events.c: single events on demand: the cheap per-event columns (kind, thread, seq,
 * time) and full decoding by re-reading the event's chunk through a reader (the only parser). */
#include "model-private.h"
#include "escape.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#define MODEL_PAGE (1u << 20)

void model_decoder_init(model_decoder *d) {
  d->reader = NULL;
  d->text = NULL;
  d->chunk = G_MAXUINT;
  d->next = 0;
  d->has_last = FALSE;
}

void model_decoder_clear(model_decoder *d) {
  g_clear_pointer(&d->reader, gs_trace_reader_free);
  g_clear_pointer(&d->text, g_free);
  d->chunk = G_MAXUINT;
  d->has_last = FALSE;
}

/* Feeds the log's bytes [offset, offset + len) to reader, from memory or the file. */
static gboolean feed_range(gs_trace_model *m, gs_trace_reader *reader, guint64 offset,
                           guint64 len) {
  if (m->fd >= 0) {
    g_autofree guint8 *buf = g_malloc(len ? len : 1);
    guint64 done = 0;
    while (done < len) {
      ssize_t n = pread(m->fd, buf + done, len - done, (off_t)(offset + done));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE; /* the file shrank or broke: the event is not there any more */
      done += (guint64)n;
    }
    gs_trace_reader_feed(reader, buf, len);
    return TRUE;
  }
  while (len > 0) {
    guint page = (guint)(offset / MODEL_PAGE);
    if (page >= m->pages->len)
      return FALSE;
    const GByteArray *p = m->pages->pdata[page];
    guint64 in_page = offset % MODEL_PAGE;
    if (in_page >= p->len)
      return FALSE;
    guint64 take = MIN(len, p->len - in_page);
    gs_trace_reader_feed(reader, p->data + in_page, take);
    offset += take;
    len -= take;
  }
  return TRUE;
}

guint model_chunk_of(const gs_trace_model *m, guint64 index) {
  guint lo = 0, hi = m->chunks->len;
  while (hi - lo > 1) {
    guint mid = (lo + hi) / 2;
    if (g_array_index(m->chunks, model_chunk, mid).first <= index)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

static gboolean decoder_open(gs_trace_model *m, model_decoder *d, guint chunk) {
  model_decoder_clear(d);
  d->reader = gs_trace_reader_new();
  const model_chunk *c = &g_array_index(m->chunks, model_chunk, chunk);
  if (!feed_range(m, d->reader, 0, m->header_size) ||
      !feed_range(m, d->reader, c->offset, c->size))
    return FALSE;
  d->chunk = chunk;
  d->next = c->first;
  return TRUE;
}

gboolean model_decode(gs_trace_model *m, model_decoder *d, guint64 index, gs_trace_event *out) {
  if (index >= m->kinds->len)
    return FALSE;
  guint chunk = model_chunk_of(m, index);
  if (d->has_last && d->chunk == chunk && d->next == index + 1) {
    *out = d->last;
    return TRUE;
  }
  d->has_last = FALSE;
  if ((d->chunk != chunk || d->next > index) && !decoder_open(m, d, chunk))
    return FALSE;
  for (;;) {
    if (gs_trace_reader_next(d->reader, out) != GS_TRACE_EVENT) {
      d->chunk = G_MAXUINT;
      return FALSE;
    }
    if (gs_trace_kind_is_table(out->kind))
      continue;
    if (d->next++ == index) {
      /* Error messages come from the program, or from anyone who wrote the log: every reader
       * of an event (sentences, rows, Pango, JSON) gets valid UTF-8. */
      if (out->text && !g_utf8_validate(out->text, out->text_len, NULL)) {
        g_free(d->text);
        d->text = gs_text_from_log(out->text, out->text_len);
        out->text = d->text;
        out->text_len = (uint32_t)strlen(d->text);
      }
      d->last = *out;
      d->has_last = TRUE;
      return TRUE;
    }
  }
}

gboolean gs_trace_model_event(gs_trace_model *m, guint64 index, gs_trace_event *out) {
  return model_decode(m, &m->event_decoder, index, out);
}

gs_trace_kind gs_trace_model_kind_at(const gs_trace_model *m, guint64 index) {
  if (index >= m->kinds->len)
    return 0;
  return (gs_trace_kind)(g_array_index(m->kinds, guint8, index) & ~MODEL_DERIVED);
}

guint32 gs_trace_model_thread_at(const gs_trace_model *m, guint64 index) {
  if (index >= m->kinds->len)
    return 0;
  return g_array_index(m->chunks, model_chunk, model_chunk_of(m, index)).thread;
}

guint64 gs_trace_model_seq_at(const gs_trace_model *m, guint64 index) {
  if (index >= m->kinds->len)
    return 0;
  const model_chunk *c = &g_array_index(m->chunks, model_chunk, model_chunk_of(m, index));
  guint32 off = c->seq_wide == G_MAXUINT32
                    ? g_array_index(m->seq_off, guint16, index)
                    : g_array_index(m->seq_wide, guint32, c->seq_wide + (index - c->first));
  if (off == G_MAXUINT32)
    return *(guint64 *)g_hash_table_lookup(m->seq_big, &index);
  return c->seq0 + off;
}

guint64 gs_trace_model_time_at(const gs_trace_model *m, guint64 index) {
  if (index >= m->kinds->len)
    return 0;
  guint32 off = g_array_index(m->time_off, guint32, index);
  if (off == G_MAXUINT32)
    return *(guint64 *)g_hash_table_lookup(m->time_big, &index);
  return g_array_index(m->chunks, model_chunk, model_chunk_of(m, index)).time0 + off;
}

static gboolean derived_at(const gs_trace_model *m, guint64 index) {
  return (g_array_index(m->kinds, guint8, index) & MODEL_DERIVED) != 0;
}

/* How many of a thread's chunks (list: their positions, in order) start at or before seq. */
static guint chunks_starting_through(const gs_trace_model *m, const GArray *list, guint64 seq) {
  guint lo = 0, hi = list->len;
  while (lo < hi) {
    guint mid = (lo + hi) / 2;
    const model_chunk *c = &g_array_index(m->chunks, model_chunk, g_array_index(list, guint, mid));
    if (c->seq0 <= seq)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Each thread's chunks are in its own order, where seq never decreases: a binary search over
 * its chunks, then over the chunk's events. The events sharing a seq are one from the log
 * and those the reader derived from it (a storage_alloc just before a tensor_create, a
 * storage_free just after a tensor_dispose): the one from the log is the answer. */
guint64 gs_trace_model_find_seq(const gs_trace_model *m, guint64 seq) {
  for (guint t = 0; t < m->threads->len; t++) {
    guint32 thread = g_array_index(m->threads, guint32, t);
    const GArray *list = g_hash_table_lookup(m->thread_chunks, GUINT_TO_POINTER(thread));
    guint lo = chunks_starting_through(m, list, seq);
    /* The event may sit in the chunk before, or (equal seq0s) one further back. */
    for (guint k = lo; k-- > 0 && k + 2 >= lo;) {
      const model_chunk *c = &g_array_index(m->chunks, model_chunk, g_array_index(list, guint, k));
      guint64 end = c->first + c->n, a = c->first, b = end;
      while (a < b) {
        guint64 mid = (a + b) / 2;
        if (gs_trace_model_seq_at(m, mid) < seq)
          a = mid + 1;
        else
          b = mid;
      }
      while (a + 1 < end && derived_at(m, a) && gs_trace_model_seq_at(m, a + 1) == seq)
        a++;
      if (a < end && gs_trace_model_seq_at(m, a) == seq)
        return a;
    }
  }
  return G_MAXUINT64;
}

guint64 gs_trace_model_index_through_seq(const gs_trace_model *m, guint64 seq) {
  guint64 best = G_MAXUINT64;
  for (guint t = 0; t < m->threads->len; t++) {
    guint32 thread = g_array_index(m->threads, guint32, t);
    const GArray *list = g_hash_table_lookup(m->thread_chunks, GUINT_TO_POINTER(thread));
    guint lo = chunks_starting_through(m, list, seq);
    if (lo == 0) /* every event of this thread is later */
      continue;
    /* A thread numbers its events in increasing order, so its last one numbered <= seq is in
     * the last chunk that starts at or before seq. */
    const model_chunk *c = &g_array_index(m->chunks, model_chunk, g_array_index(list, guint, lo - 1));
    guint64 a = c->first, b = c->first + c->n; /* the first index whose seq > seq */
    while (a < b) {
      guint64 mid = (a + b) / 2;
      if (gs_trace_model_seq_at(m, mid) <= seq)
        a = mid + 1;
      else
        b = mid;
    }
    if (a > c->first && (best == G_MAXUINT64 || a - 1 > best))
      best = a - 1;
  }
  return best;
}
