/* model-life-feed.c: the life index built on a second core while a file loads (issue 32), and
 * the per-event columns appended there.
 *
 * Keeping the postings, sealing segments (a radix sort each) and merging them was about a third
 * of opening a 100 M-event log, all on the thread that reads and replays. While
 * gs_trace_model_load_file runs, that thread only works out each event's key and extra keys
 * (model_life_key: it needs the head state as of the event) into batches; a thread of the
 * model's own keeps them (model_life_keep) exactly as the serial path would, event by event,
 * so seals and merges happen at the same events and the index comes out the same. Batches are
 * recycled through a bounded queue: the reader waits when the life thread is LIFE_DEPTH
 * batches behind (never the UI thread: loading runs on the source's worker), and no fresh
 * memory is touched per batch. Until model_life_feed_end joins the thread, nothing else reads
 * or writes the model's life_ fields. */
#include "model-private.h"

/* Events per batch: a hand-over per this many events, and its keys (32 KiB) stay in cache. */
#define LIFE_BATCH 8192
/* Full batches that may wait for the life thread: 131,072 events, some 11 ms of reading, so a
 * seal or a merge step on the life thread does not leave the reading waiting. */
#define LIFE_DEPTH 16

typedef struct life_batch {
  guint64 first; /* index of its first event */
  guint n;
  guint32 keys[LIFE_BATCH];
  guint8 follow[LIFE_BATCH / 8]; /* MODEL_LIFE_FOLLOW bits, as model_life_key says */
  /* The events' columns, as index_event works them out: appending them takes fresh pages
   * (the kernel zeroes each), which cost the reading thread a tenth of its time. */
  guint8 kinds[LIFE_BATCH];
  guint16 seq[LIFE_BATCH];
  guint32 time[LIFE_BATCH];
  GArray *extras;                /* model_posting, in event order */
} life_batch;

/* A ring of batches: [head, head + n_full) wait for the life thread, the rest are free. */
struct model_life_feed {
  GThread *thread;
  GMutex lock;
  GCond changed;
  life_batch *ring[LIFE_DEPTH + 1];
  life_batch *batches; /* the ring's, in one block: mapped on its own, so freed it goes back */
  guint head, n_full;  /* ring[head] is the life thread's while it keeps it */
  gboolean ending;     /* no more batches will come */
  gboolean drop;       /* stop: what is left is not wanted (the load was cancelled or failed) */
  life_batch *filling; /* the indexing thread's; NULL until it takes a free one */
  gs_trace_model *m;
};

#define RING (LIFE_DEPTH + 1)

static void keep_batch(gs_trace_model *m, const life_batch *b) {
  const model_posting *x = (const model_posting *)b->extras->data;
  guint nx = b->extras->len, xi = 0;
  for (guint i = 0; i < b->n; i++) {
    guint64 index = b->first + i;
    guint from = xi;
    while (xi < nx && x[xi].index == (guint32)index)
      xi++;
    model_life_keep(m, index, b->keys[i], b->follow[i >> 3] >> (i & 7) & 1, x + from, xi - from);
  }
  g_array_append_vals(m->kinds, b->kinds, b->n);
  g_array_append_vals(m->seq_off, b->seq, b->n);
  g_array_append_vals(m->time_off, b->time, b->n);
}

static gpointer life_thread(gpointer data) {
  model_life_feed *f = data;
  g_mutex_lock(&f->lock);
  for (;;) {
    while (!f->n_full && !f->ending && !f->drop)
      g_cond_wait(&f->changed, &f->lock);
    if (f->drop || !f->n_full)
      break;
    life_batch *b = f->ring[f->head];
    g_mutex_unlock(&f->lock);
    keep_batch(f->m, b);
    g_mutex_lock(&f->lock);
    f->head = (f->head + 1) % RING;
    f->n_full--;
    g_cond_broadcast(&f->changed);
  }
  g_mutex_unlock(&f->lock);
  return NULL;
}

void model_life_feed_start(gs_trace_model *m) {
  g_return_if_fail(m->life_feed == NULL);
  model_life_feed *f = g_new0(model_life_feed, 1);
  g_mutex_init(&f->lock);
  g_cond_init(&f->changed);
  f->batches = g_new0(life_batch, RING);
  for (guint i = 0; i < RING; i++) {
    f->ring[i] = &f->batches[i];
    f->ring[i]->extras = g_array_new(FALSE, FALSE, sizeof(model_posting));
  }
  f->m = m;
  m->life_feed = f;
  f->thread = g_thread_new("gs-life-index", life_thread, f);
}

/* The next free batch, waiting while the life thread is LIFE_DEPTH behind. */
static life_batch *take_free(model_life_feed *f) {
  g_mutex_lock(&f->lock);
  while (f->n_full >= LIFE_DEPTH)
    g_cond_wait(&f->changed, &f->lock);
  life_batch *b = f->ring[(f->head + f->n_full) % RING];
  g_mutex_unlock(&f->lock);
  b->n = 0;
  g_array_set_size(b->extras, 0);
  return b;
}

static void hand_over(model_life_feed *f) {
  g_mutex_lock(&f->lock);
  f->n_full++;
  g_cond_broadcast(&f->changed);
  g_mutex_unlock(&f->lock);
  f->filling = NULL;
}

void model_life_feed_add(gs_trace_model *m, const gs_trace_event *e, guint64 index, guint8 kind,
                         guint16 seq, guint32 time) {
  model_life_feed *f = m->life_feed;
  life_batch *b = f->filling;
  if (!b)
    b = f->filling = take_free(f);
  if (!b->n)
    b->first = index;
  g_assert(index == b->first + b->n); /* events come in order, each once */
  gboolean follow;
  guint i = b->n++;
  b->keys[i] = model_life_key(m, e, index, b->extras, &follow);
  if (!(i & 7))
    b->follow[i >> 3] = 0;
  b->follow[i >> 3] |= (guint8)(follow << (i & 7));
  b->kinds[i] = kind;
  b->seq[i] = seq;
  b->time[i] = time;
  if (b->n == LIFE_BATCH)
    hand_over(f);
}

void model_life_feed_sync(gs_trace_model *m) {
  model_life_feed *f = m->life_feed;
  if (f->filling && f->filling->n)
    hand_over(f);
  g_mutex_lock(&f->lock);
  while (f->n_full)
    g_cond_wait(&f->changed, &f->lock);
  g_mutex_unlock(&f->lock);
}

void model_life_feed_end(gs_trace_model *m, gboolean drop) {
  model_life_feed *f = m->life_feed;
  if (!f)
    return;
  if (f->filling && f->filling->n && !drop)
    hand_over(f);
  g_mutex_lock(&f->lock);
  f->ending = TRUE;
  f->drop = drop;
  g_cond_broadcast(&f->changed);
  g_mutex_unlock(&f->lock);
  g_thread_join(f->thread);
  for (guint i = 0; i < RING; i++)
    g_array_unref(f->ring[i]->extras);
  g_free(f->batches);
  g_mutex_clear(&f->lock);
  g_cond_clear(&f->changed);
  g_free(f);
  m->life_feed = NULL;
}
