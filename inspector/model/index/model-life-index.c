/* model-life-index.c: the tensor-life postings sorted by object, in sealed segments merged as
 * the log grows.
 *
 * Scanning every event's 32-bit key made a life query read 4 bytes per event (892 ms at 126 M
 * events). Instead, each full segment of MODEL_LIFE_SEGMENT events is sealed: its (key, event)
 * postings are sorted by key (a stable radix sort, so the events stay ascending under a key)
 * and written as groups of varints, with a directory entry every MODEL_LIFE_DIR_EVERY keys. A
 * query binary-searches each segment's directory and decodes at most that many groups there.
 * That is a few microseconds a segment at memory latency, which at 2,435 segments (160 M
 * events) was 30 ms for four keys, so MODEL_LIFE_FANOUT neighbouring segments of one level are
 * merged into one of the next (log-structured merging): a key is looked up in a few dozen
 * segments, and each posting is rewritten once per level. A merge runs a little at a time as
 * events are indexed (MODEL_LIFE_MERGE_RATE postings per event), so no feed stalls on one;
 * until it ends its inputs answer queries. The postings cost about what the per-event keys did
 * (a key step, two counts and event steps of a byte or two). */
#include "model-private.h"

#include <string.h>
#include <sys/mman.h>

/* Sealing's scratch: postings as key << 32 | tag, tag the event's place in its segment with the
 * top bit set for an extra key (one word each: a pass of the radix sort scatters to half the
 * places it did with keys and tags apart); two buffers for the sort's passes. */
/* The sort's digits: three of 11 bits (the last 10). Their counts fit in the first-level cache
 * and a pass writes to 2,048 places at once; two of 16 bits cleared, summed and scattered
 * over 65,536 counts each seal, about as many as the postings sorted. */
#define RADIX_BITS 11
#define RADIX_PASSES 3
G_STATIC_ASSERT(RADIX_BITS *RADIX_PASSES >= 32);

typedef struct model_life_sorter {
  guint64 *items[2];
  gsize cap;
  guint32 count[RADIX_PASSES][1u << RADIX_BITS];
} model_life_sorter;

#define EXTRA_TAG 0x80000000u

/* A segment's bytes: written once up to a bound, then kept. Big ones are mapped on their own
 * and their unused tail unmapped, so a merged segment's inputs go back to the system when
 * freed (from the heap their holes stayed in RSS) and the bound costs no memory. */
enum { MAP_FROM = 256u << 10 };

typedef struct out_bytes {
  guint8 *data;
  gsize len, cap;
  gboolean mapped;
} out_bytes;

static void out_open(out_bytes *o, gsize bound) {
  o->len = 0;
  o->cap = bound;
  o->mapped = bound >= MAP_FROM;
  if (o->mapped) {
    void *p = mmap(NULL, bound, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      g_error("life index: cannot map %" G_GSIZE_FORMAT " bytes", bound);
    o->data = p;
  } else {
    o->data = g_malloc(MAX(bound, 1));
  }
}

static gsize page_round(gsize n) {
  gsize page = 4096;
  return (n + page - 1) / page * page;
}

/* Gives back what the bound reserved beyond what was written. */
static void out_close(out_bytes *o) {
  if (o->mapped) {
    gsize keep = page_round(MAX(o->len, 1));
    if (keep < o->cap)
      munmap(o->data + keep, o->cap - keep);
    o->cap = keep;
  } else {
    o->data = g_realloc(o->data, MAX(o->len, 1));
    o->cap = MAX(o->len, 1);
  }
}

static void bytes_free(guint8 *data, gsize cap, gboolean mapped) {
  if (mapped)
    munmap(data, cap);
  else
    g_free(data);
}

static inline void out_put(out_bytes *o, guint64 v) {
  while (v >= 0x80) {
    o->data[o->len++] = (guint8)(v | 0x80);
    v >>= 7;
  }
  o->data[o->len++] = (guint8)v;
}

/* A directory being written. */
typedef struct out_dir {
  model_life_dir *dir;
  guint32 n, cap;
} out_dir;

static void dir_put(out_dir *d, guint32 key, gsize pos) {
  if (d->n == d->cap) {
    d->cap = MAX(d->cap * 2, 16);
    d->dir = g_renew(model_life_dir, d->dir, d->cap);
  }
  d->dir[d->n++] = (model_life_dir){key, (guint32)pos};
}

/* A group's key (in the directory, or as a step from the group before) and counts: the
 * primaries' with two flags (extras follow; a primary is a creation or a move, which a life
 * query must decode: MODEL_LIFE_FOLLOW), then the extras'. */
static void put_group_head(out_bytes *o, out_dir *d, guint32 n_groups, guint32 key, guint32 prev,
                           guint64 primaries, guint64 extras, gboolean follow) {
  if (n_groups % MODEL_LIFE_DIR_EVERY == 0)
    dir_put(d, key, o->len);
  else
    out_put(o, key - prev);
  out_put(o, primaries << 2 | (follow ? 2 : 0) | (extras > 0));
  if (extras)
    out_put(o, extras);
}

static void segment_free(model_life_segment *s) {
  bytes_free(s->bytes, s->cap, s->mapped);
  g_free(s->dir);
}

/* One input of a merge: its next group's key and counts, and where its events start. */
typedef struct merge_input {
  const model_life_segment *seg; /* refreshed each step: life_segments may move */
  const guint8 *p;               /* the next group's start */
  guint32 group;                 /* its number; n_groups once done */
  guint32 key;
  guint64 primaries, extras;
  gboolean follow;
} merge_input;

/* The inputs' order for the loser tree: the next key, then the input's place (older first),
 * in one number; an input that is done sorts after all. */
#define INPUT_DONE G_MAXUINT64
G_STATIC_ASSERT((MODEL_LIFE_FANOUT & (MODEL_LIFE_FANOUT - 1)) == 0 && MODEL_LIFE_FANOUT <= 256);

/* Segments [from, from + count) of life_segments, being merged into out. The next input is
 * found by a loser tree over the inputs' orders (log2 FANOUT comparisons an input step, where
 * scanning every input took FANOUT): tree[0] the smallest, tree[1..] the losers of each
 * match, a leaf's matches at (FANOUT + leaf) / 2, / 4, ... */
typedef struct model_life_merge {
  guint from, count;
  merge_input in[MODEL_LIFE_FANOUT];
  guint64 order[MODEL_LIFE_FANOUT];
  guint8 tree[MODEL_LIFE_FANOUT];
  out_bytes out;
  out_dir dir;
  guint32 n_groups, prev;
  guint64 first, events;
  guint level;
} model_life_merge;

void model_life_index_init(gs_trace_model *m) {
  m->life_segment_events = MODEL_LIFE_SEGMENT;
  m->life_keys = g_array_new(FALSE, FALSE, sizeof(guint32));
  m->life_extra = g_array_new(FALSE, FALSE, sizeof(model_posting));
  m->life_segments = g_array_new(FALSE, FALSE, sizeof(model_life_segment));
}

static void sorter_free(model_life_sorter *s) {
  if (!s)
    return;
  for (int i = 0; i < 2; i++)
    g_free(s->items[i]);
  g_free(s);
}

static void merge_free(model_life_merge *g) {
  if (!g)
    return;
  bytes_free(g->out.data, g->out.cap, g->out.mapped);
  g_free(g->dir.dir);
  g_free(g);
}

void model_life_index_clear(gs_trace_model *m) {
  for (guint s = 0; s < m->life_segments->len; s++)
    segment_free(&g_array_index(m->life_segments, model_life_segment, s));
  g_array_unref(m->life_keys);
  g_array_unref(m->life_extra);
  g_array_unref(m->life_segments);
  sorter_free(m->life_sorter);
  merge_free(m->life_merge);
  g_free(m->life_follow);
}

void gs_trace_model_set_life_segment(gs_trace_model *m, guint events) {
  g_return_if_fail(m->kinds->len == 0 && m->n_pending == 0);
  g_return_if_fail(events == G_MAXUINT || (events > 0 && events <= MODEL_LIFE_SEGMENT));
  m->life_segment_events = events;
}

guint64 model_life_index_bytes(const gs_trace_model *m) {
  guint64 bytes = (guint64)m->life_keys->len * sizeof(guint32) +
                  (guint64)m->life_extra->len * sizeof(model_posting);
  for (guint s = 0; s < m->life_segments->len; s++) {
    const model_life_segment *seg = &g_array_index(m->life_segments, model_life_segment, s);
    bytes += sizeof *seg + seg->len + (guint64)seg->n_dir * sizeof(model_life_dir);
  }
  if (m->life_merge)
    bytes += m->life_merge->out.len + (guint64)m->life_merge->dir.n * sizeof(model_life_dir);
  return bytes;
}

/* The stable radix sort of n postings in buffer 0, least significant digit first (so equal
 * keys keep their order); returns the buffer the sorted postings are in. */
static int radix_sort(model_life_sorter *s, gsize n) {
  memset(s->count, 0, sizeof s->count);
  const guint32 mask = (1u << RADIX_BITS) - 1;
  for (gsize i = 0; i < n; i++) {
    guint32 k = (guint32)(s->items[0][i] >> 32);
    for (guint d = 0; d < RADIX_PASSES; d++)
      s->count[d][k >> (d * RADIX_BITS) & mask]++;
  }
  for (guint d = 0; d < RADIX_PASSES; d++) {
    guint32 sum = 0;
    for (guint v = 0; v <= mask; v++) {
      guint32 c = s->count[d][v];
      s->count[d][v] = sum;
      sum += c;
    }
  }
  int from = 0;
  for (guint d = 0; d < RADIX_PASSES; d++, from = !from) {
    const guint64 *items = s->items[from];
    guint64 *to = s->items[!from];
    guint32 *count = s->count[d];
    guint shift = 32 + d * RADIX_BITS;
    for (gsize i = 0; i < n; i++)
      to[count[items[i] >> shift & mask]++] = items[i];
  }
  return from;
}

/* Writes one key's events: items[from, to) of one kind (primary or extra), ascending. */
static void put_events(out_bytes *o, const guint64 *items, gsize from, gsize to) {
  guint32 last = 0;
  for (gsize i = from; i < to; i++) {
    guint32 at = (guint32)items[i] & ~EXTRA_TAG;
    out_put(o, at - last);
    last = at;
  }
}

static void start_merge(gs_trace_model *m);

void model_life_seal(gs_trace_model *m) {
  gsize n_keys = m->life_keys->len, n_extra = m->life_extra->len;
  model_life_sorter *s = m->life_sorter;
  if (!s)
    s = m->life_sorter = g_new0(model_life_sorter, 1);
  if (s->cap < n_keys + n_extra) {
    s->cap = MAX(n_keys + n_extra, s->cap * 2);
    for (int i = 0; i < 2; i++)
      s->items[i] = g_renew(guint64, s->items[i], s->cap);
  }
  /* Primary postings first, then extras, each in event order: the stable sort keeps that
   * order under each key. */
  gsize n = 0;
  const guint32 *keys = (const guint32 *)m->life_keys->data;
  for (gsize i = 0; i < n_keys; i++)
    if (keys[i])
      s->items[0][n++] = (guint64)keys[i] << 32 | (guint32)i;
  const model_posting *extra = (const model_posting *)m->life_extra->data;
  for (gsize i = 0; i < n_extra; i++) {
    guint32 tag = (guint32)(extra[i].index - m->life_open_first) | EXTRA_TAG;
    s->items[0][n++] = (guint64)extra[i].key << 32 | tag;
  }
  int sorted = radix_sort(s, n);
  const guint64 *si = s->items[sorted];

  /* At most a 5-byte step per posting and 5 + 10 + 10 bytes of key and counts per group. */
  out_bytes o;
  out_open(&o, n * 30 + 16);
  out_dir d = {0};
  guint32 prev = 0, n_groups = 0;
  for (gsize i = 0; i < n;) {
    guint32 key = (guint32)(si[i] >> 32);
    gsize end = i, primary_end;
    while (end < n && (guint32)(si[end] >> 32) == key && !((guint32)si[end] & EXTRA_TAG))
      end++;
    primary_end = end;
    while (end < n && (guint32)(si[end] >> 32) == key)
      end++;
    guint follow = 0;
    for (gsize k = i; k < primary_end && m->life_follow; k++) {
      guint32 at = (guint32)si[k];
      follow |= m->life_follow[at >> 3] >> (at & 7) & 1;
    }
    put_group_head(&o, &d, n_groups, key, prev, primary_end - i, end - primary_end, follow);
    put_events(&o, si, i, primary_end);
    put_events(&o, si, primary_end, end);
    n_groups++;
    prev = key;
    i = end;
  }
  out_close(&o);
  model_life_segment seg = {.bytes = o.data,
                            .len = o.len,
                            .cap = o.cap,
                            .mapped = o.mapped,
                            .dir = d.dir,
                            .n_dir = d.n,
                            .n_groups = n_groups,
                            .first = m->life_open_first,
                            .events = n_keys,
                            .level = 0};
  g_array_append_val(m->life_segments, seg);
  m->life_open_first += n_keys;
  if (m->life_follow)
    memset(m->life_follow, 0, (m->life_segment_events + 7) / 8);
  g_array_set_size(m->life_keys, 0);
  g_array_set_size(m->life_extra, 0);
  if (!m->life_merge)
    start_merge(m);
}

/* Reads in's next group's key and counts (or marks it done). */
static void input_next(merge_input *in) {
  const model_life_segment *seg = in->seg;
  if (in->group >= seg->n_groups)
    return;
  guint64 v;
  if (in->group % MODEL_LIFE_DIR_EVERY == 0) {
    in->key = seg->dir[in->group / MODEL_LIFE_DIR_EVERY].key;
  } else {
    in->p = model_get_varint(in->p, &v);
    in->key += (guint32)v;
  }
  in->p = model_get_varint(in->p, &v);
  in->primaries = v >> 2;
  in->follow = (v & 2) != 0;
  in->extras = 0;
  if (v & 1)
    in->p = model_get_varint(in->p, &in->extras);
}

/* Copies n event steps from p (relative to from) to o (relative to *last, updated). */
static const guint8 *copy_events(out_bytes *o, const guint8 *p, guint64 n, guint64 from,
                                 guint64 *last) {
  guint64 at = from, step;
  for (guint64 i = 0; i < n; i++) {
    p = model_get_varint(p, &step);
    at += step;
    out_put(o, at - *last);
    *last = at;
  }
  return p;
}

static guint64 input_order(const merge_input *in, guint k) {
  return in->group < in->seg->n_groups ? (guint64)in->key << 8 | k : INPUT_DONE;
}

/* The winner k's order grew: it plays its matches again up to the root. Without branches:
 * keys are hashes, so who wins a match is a coin toss, and the mispredicted jumps were 40% of
 * a merge. */
static void tree_replay(model_life_merge *g, guint k) {
  guint winner = k;
  guint64 winner_order = g->order[k];
  for (guint node = (MODEL_LIFE_FANOUT + k) / 2; node > 0; node /= 2) {
    guint other = g->tree[node];
    guint64 other_order = g->order[other];
    guint swap = 0u - (guint)(other_order < winner_order); /* all ones: other wins */
    g->tree[node] = (guint8)((winner & swap) | (other & ~swap));
    winner ^= (winner ^ other) & swap;
    winner_order ^= (winner_order ^ other_order) & ((guint64)0 - (swap & 1));
  }
  g->tree[0] = (guint8)winner;
}

/* Plays every match from the leaves up (inputs past count are done). */
static void tree_build(model_life_merge *g) {
  guint8 win[2 * MODEL_LIFE_FANOUT];
  for (guint k = 0; k < MODEL_LIFE_FANOUT; k++) {
    g->order[k] = k < g->count ? input_order(&g->in[k], k) : INPUT_DONE;
    win[MODEL_LIFE_FANOUT + k] = (guint8)k;
  }
  for (guint node = MODEL_LIFE_FANOUT - 1; node > 0; node--) {
    guint a = win[2 * node], b = win[2 * node + 1];
    gboolean a_wins = g->order[a] <= g->order[b];
    win[node] = (guint8)(a_wins ? a : b);
    g->tree[node] = (guint8)(a_wins ? b : a);
  }
  g->tree[0] = win[1];
}

/* The first run of MODEL_LIFE_FANOUT neighbouring segments of one level, if any, starts
 * merging. */
static void start_merge(gs_trace_model *m) {
  const model_life_segment *segs = (const model_life_segment *)m->life_segments->data;
  guint n = m->life_segments->len;
  for (guint i = 0; i + MODEL_LIFE_FANOUT <= n; i++) {
    guint j = i + 1;
    while (j < i + MODEL_LIFE_FANOUT && segs[j].level == segs[i].level)
      j++;
    if (j < i + MODEL_LIFE_FANOUT)
      continue;
    gsize bound = 16, groups = 0;
    for (guint k = i; k < i + MODEL_LIFE_FANOUT; k++) {
      bound += segs[k].len;
      groups += segs[k].n_groups;
    }
    if (bound + groups * 24 > G_MAXUINT32)
      continue; /* directory positions are 32-bit (never reached: a model holds < 2^32 events) */
    model_life_merge *g = m->life_merge = g_new0(model_life_merge, 1);
    g->from = i;
    g->count = MODEL_LIFE_FANOUT;
    g->first = segs[i].first;
    g->level = segs[i].level + 1;
    for (guint k = 0; k < g->count; k++) {
      const model_life_segment *seg = &segs[i + k];
      g->events += seg->events;
      g->in[k] = (merge_input){.seg = seg, .p = seg->bytes};
      input_next(&g->in[k]);
    }
    tree_build(g);
    /* Per input group the output may add a key step (5 bytes: the input's was in its
     * directory), longer counts (2 + 2) and longer first steps (4 + 4). */
    out_open(&g->out, bound + groups * 24);
    return;
  }
}

/* Ends the merge: its output replaces its inputs. */
static void end_merge(gs_trace_model *m) {
  model_life_merge *g = m->life_merge;
  out_close(&g->out);
  model_life_segment merged = {.bytes = g->out.data,
                               .len = g->out.len,
                               .cap = g->out.cap,
                               .mapped = g->out.mapped,
                               .dir = g->dir.dir,
                               .n_dir = g->dir.n,
                               .n_groups = g->n_groups,
                               .first = g->first,
                               .events = g->events,
                               .level = g->level};
  for (guint k = 0; k < g->count; k++)
    segment_free(&g_array_index(m->life_segments, model_life_segment, g->from + k));
  g_array_remove_range(m->life_segments, g->from + 1, g->count - 1);
  g_array_index(m->life_segments, model_life_segment, g->from) = merged;
  g_free(g);
  m->life_merge = NULL;
}

void model_life_merge_step(gs_trace_model *m) {
  if (!m->life_merge)
    start_merge(m);
  while (m->life_merge && m->life_merge_credit > 0) {
    model_life_merge *g = m->life_merge;
    for (guint k = 0; k < g->count; k++)
      g->in[k].seg = &g_array_index(m->life_segments, model_life_segment, g->from + k);
    guint64 spent = 0;
    while (spent < m->life_merge_credit) {
      /* The smallest key left, and its events from every input that has it, oldest first. */
      guint winner = g->tree[0];
      guint64 top = g->order[winner];
      if (top == INPUT_DONE)
        break;
      guint32 key = (guint32)(top >> 8);
      /* The runner-up lost a match to the winner: if none of those has the key, no other
       * input has it (the usual case); else every input is looked at. */
      guint shared = 0;
      for (guint node = (MODEL_LIFE_FANOUT + winner) / 2; node > 0; node /= 2)
        shared |= g->order[g->tree[node]] >> 8 == key;
      guint8 take[MODEL_LIFE_FANOUT];
      guint n_take = 0;
      if (shared) {
        for (guint k = 0; k < g->count; k++)
          if (g->order[k] >> 8 == key)
            take[n_take++] = (guint8)k;
      } else {
        take[n_take++] = (guint8)winner;
      }
      guint64 primaries = 0, extras = 0;
      gboolean follow = FALSE;
      for (guint t = 0; t < n_take; t++) {
        primaries += g->in[take[t]].primaries;
        extras += g->in[take[t]].extras;
        follow = follow || g->in[take[t]].follow;
      }
      put_group_head(&g->out, &g->dir, g->n_groups, key, g->prev, primaries, extras, follow);
      guint64 last = g->first;
      const guint8 *extra_at[MODEL_LIFE_FANOUT];
      for (guint t = 0; t < n_take; t++) {
        merge_input *in = &g->in[take[t]];
        extra_at[t] = copy_events(&g->out, in->p, in->primaries, in->seg->first, &last);
      }
      last = g->first;
      for (guint t = 0; t < n_take; t++) {
        guint k = take[t];
        merge_input *in = &g->in[k];
        in->p = copy_events(&g->out, extra_at[t], in->extras, in->seg->first, &last);
        in->group++;
        input_next(in);
        /* Taken in the tree's order, so each is the winner when it moves on: a loser tree
         * replays only its winner. */
        g_assert(g->tree[0] == k);
        g->order[k] = input_order(in, k);
        tree_replay(g, k);
      }
      g->n_groups++;
      g->prev = key;
      spent += primaries + extras + 1;
    }
    m->life_merge_credit -= MIN(spent, m->life_merge_credit);
    gboolean done = TRUE;
    for (guint k = 0; k < g->count; k++)
      done = done && g->in[k].group >= g->in[k].seg->n_groups;
    if (!done)
      break;
    end_merge(m);
    start_merge(m);
  }
}

void model_life_find(const gs_trace_model *m, guint32 k, GArray *groups) {
  for (guint s = 0; s < m->life_segments->len; s++) {
    const model_life_segment *seg = &g_array_index(m->life_segments, model_life_segment, s);
    const model_life_dir *dir = seg->dir;
    /* The last directory entry whose key is at most k. */
    guint lo = 0, hi = seg->n_dir;
    while (lo < hi) {
      guint mid = (lo + hi) / 2;
      if (dir[mid].key <= k)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo == 0)
      continue;
    guint entry = lo - 1;
    const guint8 *p = seg->bytes + dir[entry].pos;
    guint64 key = dir[entry].key;
    guint n_groups = MIN(MODEL_LIFE_DIR_EVERY, seg->n_groups - entry * MODEL_LIFE_DIR_EVERY);
    for (guint g = 0; g < n_groups; g++) {
      if (g > 0) {
        guint64 step;
        p = model_get_varint(p, &step);
        key += step;
      }
      if (key > k)
        break;
      guint64 counts, n_extra = 0;
      p = model_get_varint(p, &counts);
      if (counts & 1)
        p = model_get_varint(p, &n_extra);
      if (key == k) {
        model_life_group found = {p, seg->first, (guint32)(counts >> 2), (guint32)n_extra,
                                  (counts & 2) != 0};
        g_array_append_val(groups, found);
        break;
      }
      guint64 step;
      for (guint64 i = 0; i < (counts >> 2) + n_extra; i++)
        p = model_get_varint(p, &step);
    }
  }
}
