/* packed-math.c: packing a batch of variable-length sequences into PyTorch's PackedSequence
 * layout and padding it back (torch.nn.utils.rnn: pack_padded_sequence, pack_sequence,
 * pad_packed_sequence), as plain tensors.
 *
 * All three are one gather each: the work is deciding which source row every result row comes
 * from, in plain loops over the lengths, and then a single gs_index_select moves the rows. That
 * keeps autograd free: index_select's backward scatters the gradient back to the rows it
 * picked. Packing gathers from the input with its time and batch dims flattened into one (or
 * from the concatenated sequences); padding gathers from the packed data with one padding row
 * appended, which every position past a sequence's end picks.
 *
 * Errors are checked before anything is created, so a failed call leaves nothing behind.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core-impl.h"
#include "packed-impl.h"

/* Messages quote the lengths they refuse; a long batch is cut after this many values. */
#define LIST_SHOWN 16
#define LIST_STR 512

/* "[2, 0, 1]", eliding after LIST_SHOWN values, into buf (LIST_STR bytes). */
static char *list_str(char *buf, const int64_t *values, int64_t n) {
  size_t used = 0;
  buf[used++] = '[';
  for (int64_t i = 0; i < n && i < LIST_SHOWN; i++)
    used += (size_t)snprintf(buf + used, LIST_STR - used, "%s%lld", i ? ", " : "",
                             (long long)values[i]);
  snprintf(buf + used, LIST_STR - used, "%s]", n > LIST_SHOWN ? ", ..." : "");
  return buf;
}

/* malloc of n int64 values (at least one, so an empty batch is not mistaken for failure). */
static int64_t *alloc_i64(int64_t n, const char *fn) {
  int64_t *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
  if (!p)
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not allocate %lld indices", (long long)n);
  return p;
}

static void dispose_parts(gs__packed_parts *parts) {
  gs_dispose(parts->data);
  gs_dispose(parts->batch_sizes);
  gs_dispose(parts->sorted_indices);
  gs_dispose(parts->unsorted_indices);
  *parts = (gs__packed_parts){GS_NO_TENSOR, GS_NO_TENSOR, GS_NO_TENSOR, GS_NO_TENSOR};
}

/* ---- packing ------------------------------------------------------------------------- */

/* A batch about to be packed: its lengths in the caller's order and the order packing visits
 * the sequences in (longest first). */
typedef struct pack_plan {
  int64_t batch;    /* B */
  int64_t *lengths; /* [B], original order */
  int64_t *order;   /* [B]: sorted position j holds original index order[j] */
  int64_t rows;     /* sum of the lengths: the packed data's first dim */
} pack_plan;

static void plan_free(pack_plan *p) {
  free(p->lengths);
  free(p->order);
}

/* lengths' values as i64 (PyTorch converts lengths with .to(int64), so floating lengths
 * truncate), once it is known to be 1-D with one value per sequence. */
static bool read_lengths(gs_tensor h, int64_t batch, pack_plan *p, const char *fn) {
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return false;
  if (t->ndim != 1 || t->shape[0] != batch) {
    char got[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn,
              "expected lengths of shape [%lld] (one per sequence in the batch), got %s",
              (long long)batch, gs__shape_str(got, t->shape, t->ndim));
    return false;
  }
  if (!(p->lengths = alloc_i64(batch, fn)))
    return false;
  const char *first = gs__tensor_data(t);
  int64_t step = t->strides[0] * (int64_t)gs__elsize(t->dtype);
  for (int64_t i = 0; i < batch; i++) {
    const char *v = first + i * step;
    p->lengths[i] = t->dtype == GS_I64 ? *(const int64_t *)v
                                       : gs__f64_to_i64(gs__load_f64(v, t->dtype));
  }
  return true;
}

/* What PyTorch's _pack_padded_sequence requires of the lengths: each in 1..max_length (the
 * input's T; pack_sequence has no bound) and, with enforce_sorted, none longer than the one
 * before. Each value is checked before the order, so a bad value is named as such. */
static bool check_lengths(const int64_t *lengths, int64_t n, int64_t max_length,
                          bool enforce_sorted, const char *fn) {
  char list[LIST_STR];
  for (int64_t i = 0; i < n; i++) {
    if (lengths[i] < 1) {
      gs__error(GS_ERR_ARGUMENT, fn,
                "expected every length to be at least 1, got %lld at position %lld of "
                "lengths %s",
                (long long)lengths[i], (long long)i, list_str(list, lengths, n));
      return false;
    }
    if (lengths[i] > max_length) {
      gs__error(GS_ERR_ARGUMENT, fn,
                "expected every length to be at most the input's %lld time steps, got %lld "
                "at position %lld of lengths %s",
                (long long)max_length, (long long)lengths[i], (long long)i,
                list_str(list, lengths, n));
      return false;
    }
  }
  for (int64_t i = 1; enforce_sorted && i < n; i++) {
    if (lengths[i] > lengths[i - 1]) {
      gs__error(GS_ERR_ARGUMENT, fn,
                "expected lengths in decreasing order when enforce_sorted is true, got %s "
                "(pass enforce_sorted = false to have the batch sorted)",
                list_str(list, lengths, n));
      return false;
    }
  }
  return true;
}

typedef struct ranked {
  int64_t length, index;
} ranked;

/* Longest first; equal lengths keep their batch order, which makes qsort's result that of a
 * stable sort (as torch.sort(descending=True) gives on CPU). */
static int by_decreasing_length(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (x->length != y->length)
    return x->length > y->length ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

/* The visiting order: the batch's own order when enforce_sorted (already checked to be
 * sorted), otherwise sorted by decreasing length. Also sums the rows. */
static bool plan_order(pack_plan *p, bool enforce_sorted, const char *fn) {
  if (!(p->order = alloc_i64(p->batch, fn)))
    return false;
  p->rows = 0;
  for (int64_t i = 0; i < p->batch; i++) {
    p->order[i] = i;
    p->rows += p->lengths[i];
  }
  if (enforce_sorted)
    return true;
  ranked *r = malloc((size_t)p->batch * sizeof *r);
  if (!r) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not allocate %lld indices", (long long)p->batch);
    return false;
  }
  for (int64_t i = 0; i < p->batch; i++)
    r[i] = (ranked){p->lengths[i], i};
  qsort(r, (size_t)p->batch, sizeof *r, by_decreasing_length);
  for (int64_t i = 0; i < p->batch; i++)
    p->order[i] = r[i].index;
  free(r);
  return true;
}

/* The packed layout itself: time step by time step, the sequences still running, in sorted
 * order. Sequence b's step t sits at row first_row[b] + t * row_step of the source. Writes the
 * source row of every packed row, and how many sequences run at each step. */
static void pack_rows(const pack_plan *p, const int64_t *first_row, int64_t row_step,
                      int64_t *rows, int64_t *batch_sizes) {
  int64_t steps = p->lengths[p->order[0]], k = 0;
  for (int64_t t = 0; t < steps; t++) {
    int64_t j = 0;
    /* Sorted by length, so the running sequences are a prefix of the order. */
    for (; j < p->batch && p->lengths[p->order[j]] > t; j++)
      rows[k++] = first_row[p->order[j]] + t * row_step;
    batch_sizes[t] = j;
  }
}

/* data: the source's rows picked through a computed index, so the gradient of data flows back
 * to exactly the rows it came from. */
static gs_tensor gather_rows(gs_tensor source, const int64_t *rows, int64_t count) {
  gs_tensor index = gs_from_data(GS_I64, &count, 1, rows);
  gs_tensor picked = index.id ? gs_index_select(source, 0, index) : GS_NO_TENSOR;
  gs_dispose(index);
  return picked;
}

/* The permutation tensors: sorted_indices is the visiting order, unsorted_indices its inverse
 * (PyTorch's invert_permutation). */
static bool make_indices(const pack_plan *p, gs__packed_parts *parts, const char *fn) {
  int64_t *inverse = alloc_i64(p->batch, fn);
  if (!inverse)
    return false;
  for (int64_t j = 0; j < p->batch; j++)
    inverse[p->order[j]] = j;
  parts->sorted_indices = gs_from_data(GS_I64, &p->batch, 1, p->order);
  parts->unsorted_indices = gs_from_data(GS_I64, &p->batch, 1, inverse);
  free(inverse);
  return parts->sorted_indices.id && parts->unsorted_indices.id;
}

/* Creates the four parts from a planned batch whose steps live in source as pack_rows says.
 * All or nothing: on failure whatever was made is disposed. */
static bool make_parts(gs_tensor source, const pack_plan *p, const int64_t *first_row,
                       int64_t row_step, bool enforce_sorted, gs__packed_parts *out,
                       const char *fn) {
  int64_t steps = p->lengths[p->order[0]];
  int64_t *rows = alloc_i64(p->rows, fn);
  int64_t *batch_sizes = rows ? alloc_i64(steps, fn) : NULL;
  gs__packed_parts parts = {GS_NO_TENSOR, GS_NO_TENSOR, GS_NO_TENSOR, GS_NO_TENSOR};
  bool ok = false;
  if (batch_sizes) {
    pack_rows(p, first_row, row_step, rows, batch_sizes);
    parts.data = gather_rows(source, rows, p->rows);
    parts.batch_sizes = gs_from_data(GS_I64, &steps, 1, batch_sizes);
    ok = parts.data.id && parts.batch_sizes.id && (enforce_sorted || make_indices(p, &parts, fn));
  }
  free(rows);
  free(batch_sizes);
  if (!ok)
    dispose_parts(&parts);
  *out = parts;
  return ok;
}

static bool check_out(gs__packed_parts *out, const char *fn) {
  if (out) {
    *out = (gs__packed_parts){GS_NO_TENSOR, GS_NO_TENSOR, GS_NO_TENSOR, GS_NO_TENSOR};
    return true;
  }
  gs__error(GS_ERR_ARGUMENT, fn, "expected somewhere to store the packed sequence, got NULL");
  return false;
}

/* input's T and B, after checking it has both dims and something to pack. */
static bool padded_dims(gs_tensor input, bool batch_first, int64_t *steps, int64_t *batch,
                        const char *fn) {
  gs__tensor *t = gs__lookup(input, fn);
  if (!t)
    return false;
  char got[GS__SHAPE_STR];
  if (t->ndim < 2) {
    gs__error(GS_ERR_SHAPE, fn, "expected input of at least 2 dimensions (%s), got shape %s",
              batch_first ? "[B, T, *] with batch_first" : "[T, B, *]",
              gs__shape_str(got, t->shape, t->ndim));
    return false;
  }
  if (t->numel == 0) { /* as PyTorch: "Cannot pack empty tensors." */
    gs__error(GS_ERR_SHAPE, fn, "cannot pack an empty tensor, got input of shape %s",
              gs__shape_str(got, t->shape, t->ndim));
    return false;
  }
  *steps = t->shape[batch_first ? 1 : 0];
  *batch = t->shape[batch_first ? 0 : 1];
  return true;
}

bool gs__pack_padded(gs_tensor input, gs_tensor lengths, bool batch_first, bool enforce_sorted,
                     gs__packed_parts *out) {
  const char *fn = "pack_padded_sequence";
  int64_t steps, batch;
  if (!check_out(out, fn) || !padded_dims(input, batch_first, &steps, &batch, fn))
    return false;
  pack_plan p = {.batch = batch};
  int64_t *first_row = NULL;
  bool ok = read_lengths(lengths, batch, &p, fn) &&
            check_lengths(p.lengths, batch, steps, enforce_sorted, fn) &&
            plan_order(&p, enforce_sorted, fn) && (first_row = alloc_i64(batch, fn));
  if (ok) {
    /* Rows of input flattened over its first two dims: (t, b) is row t * B + b, or
     * b * T + t with batch_first. */
    for (int64_t b = 0; b < batch; b++)
      first_row[b] = batch_first ? b * steps : b;
    gs_tensor flat = gs_flatten(input, 0, 1);
    ok = flat.id && make_parts(flat, &p, first_row, batch_first ? 1 : batch, enforce_sorted,
                               out, fn);
    gs_dispose(flat);
  }
  free(first_row);
  plan_free(&p);
  return ok;
}

/* Every sequence is at least 1-D and shares sequence 0's dtype and trailing shape, as
 * pad_sequence needs (it copies them all into one tensor). */
static bool check_sequences(const gs_tensor *sequences, int count, const char *fn) {
  if (!sequences || count < 1) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a non-empty list of sequences, got %d sequences%s",
              count, sequences ? "" : " (NULL)");
    return false;
  }
  const gs__tensor *first = NULL;
  for (int i = 0; i < count; i++) {
    const gs__tensor *t = gs__lookup(sequences[i], fn);
    if (!t)
      return false;
    char want[GS__SHAPE_STR], got[GS__SHAPE_STR];
    if (t->ndim < 1) {
      gs__error(GS_ERR_SHAPE, fn, "expected sequences of at least 1 dimension ([L, *]), got a "
                "0-D tensor for sequence %d", i);
      return false;
    }
    if (!first) {
      first = t;
      continue;
    }
    if (t->ndim != first->ndim ||
        memcmp(t->shape + 1, first->shape + 1, sizeof(int64_t) * (size_t)(t->ndim - 1)) != 0) {
      gs__error(GS_ERR_SHAPE, fn,
                "expected every sequence to have sequence 0's trailing shape %s, got %s for "
                "sequence %d",
                gs__shape_str(want, first->shape + 1, first->ndim - 1),
                gs__shape_str(got, t->shape + 1, t->ndim - 1), i);
      return false;
    }
    if (t->dtype != first->dtype) {
      gs__error(GS_ERR_DTYPE, fn, "expected every sequence to have sequence 0's dtype %s, got "
                "%s for sequence %d", gs_dtype_name(first->dtype), gs_dtype_name(t->dtype), i);
      return false;
    }
  }
  return true;
}

/* Each sequence's length (its first dim), and where its rows start once they are all
 * concatenated. */
static bool sequence_lengths(const gs_tensor *sequences, int count, pack_plan *p,
                             int64_t **first_row, const char *fn) {
  p->lengths = alloc_i64(count, fn);
  *first_row = p->lengths ? alloc_i64(count, fn) : NULL;
  if (!*first_row)
    return false;
  int64_t start = 0;
  for (int i = 0; i < count; i++) {
    p->lengths[i] = gs_size(sequences[i], 0);
    (*first_row)[i] = start;
    start += p->lengths[i];
  }
  return true;
}

bool gs__pack_sequence(const gs_tensor *sequences, int count, bool enforce_sorted,
                       gs__packed_parts *out) {
  const char *fn = "pack_sequence";
  if (!check_out(out, fn) || !check_sequences(sequences, count, fn))
    return false;
  pack_plan p = {.batch = count};
  int64_t *first_row = NULL;
  bool ok = sequence_lengths(sequences, count, &p, &first_row, fn) &&
            check_lengths(p.lengths, count, INT64_MAX, enforce_sorted, fn) &&
            plan_order(&p, enforce_sorted, fn);
  if (ok) {
    /* The sequences one after another: sequence i's step t is row first_row[i] + t. No
     * padded intermediate is needed, unlike PyTorch's pack_padded(pad_sequence(...)). */
    gs_tensor joined = gs_cat(sequences, count, 0);
    ok = joined.id && make_parts(joined, &p, first_row, 1, enforce_sorted, out, fn);
    gs_dispose(joined);
  }
  free(first_row);
  plan_free(&p);
  return ok;
}

/* ---- padding ------------------------------------------------------------------------- */

/* A packed sequence as pad_packed_sequence reads it, checked for consistency. */
typedef struct packed_layout {
  int64_t steps;        /* the longest length: batch_sizes' size */
  int64_t batch;        /* batch_sizes[0] */
  int64_t rows;         /* data's first dim, the sum of batch_sizes */
  int64_t *batch_sizes; /* [steps] */
  int64_t *position;    /* [batch]: original index b -> its sorted position */
} packed_layout;

static void layout_free(packed_layout *l) {
  free(l->batch_sizes);
  free(l->position);
}

/* A 1-D i64 tensor's values, or NULL after reporting (what names it in the message). */
static int64_t *read_i64_list(gs_tensor h, const char *what, int64_t *n, const char *fn) {
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return NULL;
  if (t->dtype != GS_I64 || t->ndim != 1) {
    char got[GS__SHAPE_STR];
    gs__error(t->dtype != GS_I64 ? GS_ERR_DTYPE : GS_ERR_SHAPE, fn,
              "expected %s to be a 1-D i64 tensor, got %s %s", what,
              gs__shape_str(got, t->shape, t->ndim), gs_dtype_name(t->dtype));
    return NULL;
  }
  int64_t *values = alloc_i64(t->shape[0], fn);
  if (!values)
    return NULL;
  const int64_t *first = (const int64_t *)gs__tensor_data(t);
  for (int64_t i = 0; i < t->shape[0]; i++)
    values[i] = first[i * t->strides[0]];
  *n = t->shape[0];
  return values;
}

/* batch_sizes must describe sequences that end one after another, longest first, and add up
 * to data's rows. */
static bool read_batch_sizes(const gs__packed_parts *parts, packed_layout *l, const char *fn) {
  gs__tensor *data = gs__lookup(parts->data, fn);
  if (!data || !(l->batch_sizes = read_i64_list(parts->batch_sizes, "batch_sizes", &l->steps,
                                                fn)))
    return false;
  char list[LIST_STR];
  int64_t sum = 0;
  bool ok = l->steps > 0;
  for (int64_t t = 0; ok && t < l->steps; t++) {
    int64_t n = l->batch_sizes[t];
    ok = n >= 1 && (t == 0 || n <= l->batch_sizes[t - 1]) && !__builtin_add_overflow(sum, n, &sum);
  }
  if (!ok) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected batch_sizes to be non-empty, positive and "
              "non-increasing, got %s", list_str(list, l->batch_sizes, l->steps));
    return false;
  }
  if (data->ndim < 1 || data->shape[0] != sum) {
    char got[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn, "expected packed data of %lld rows (the sum of batch_sizes %s), "
              "got shape %s", (long long)sum, list_str(list, l->batch_sizes, l->steps),
              gs__shape_str(got, data->shape, data->ndim));
    return false;
  }
  l->batch = l->batch_sizes[0];
  l->rows = sum;
  return true;
}

/* Each original index's sorted position: unsorted_indices itself, or (as PyTorch's
 * PackedSequence derives it when missing) the inverse of sorted_indices, or the identity when
 * the batch was packed already sorted. Either list must be a permutation of the batch. */
static bool read_positions(const gs__packed_parts *parts, packed_layout *l, const char *fn) {
  if (!(l->position = alloc_i64(l->batch, fn)))
    return false;
  bool from_sorted = !parts->unsorted_indices.id;
  if (from_sorted && !parts->sorted_indices.id) {
    for (int64_t b = 0; b < l->batch; b++)
      l->position[b] = b;
    return true;
  }
  const char *what = from_sorted ? "sorted_indices" : "unsorted_indices";
  int64_t n;
  int64_t *given = read_i64_list(from_sorted ? parts->sorted_indices : parts->unsorted_indices,
                                 what, &n, fn);
  if (!given)
    return false;
  /* Inverting it into position checks it: a value out of range or seen twice fails. */
  bool ok = n == l->batch;
  for (int64_t b = 0; b < l->batch; b++)
    l->position[b] = -1;
  for (int64_t i = 0; ok && i < n; i++) {
    ok = given[i] >= 0 && given[i] < n && l->position[given[i]] < 0;
    if (ok)
      l->position[given[i]] = i;
  }
  if (ok && !from_sorted)
    memcpy(l->position, given, sizeof(int64_t) * (size_t)n);
  if (!ok) {
    char list[LIST_STR];
    gs__error(GS_ERR_ARGUMENT, fn, "expected %s to be a permutation of the batch's %lld "
              "sequences, got %s", what, (long long)l->batch, list_str(list, given, n));
  }
  free(given);
  return ok;
}

/* Whether parts describe a packed sequence, as gs_packed_sequence_from takes them: batch_sizes
 * as read_batch_sizes wants it, both index lists or neither, each a permutation of the batch
 * and sorted_indices the inverse of unsorted_indices. */
bool gs__packed_check(const gs__packed_parts *parts, const char *fn) {
  if (!parts->sorted_indices.id != !parts->unsorted_indices.id) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected both sorted_indices and unsorted_indices, or neither, got only %s",
              parts->sorted_indices.id ? "sorted_indices" : "unsorted_indices");
    return false;
  }
  packed_layout l = {0};
  bool ok = read_batch_sizes(parts, &l, fn) && read_positions(parts, &l, fn);
  if (ok && parts->sorted_indices.id) {
    int64_t n = 0;
    int64_t *sorted = read_i64_list(parts->sorted_indices, "sorted_indices", &n, fn);
    ok = sorted && n == l.batch;
    for (int64_t i = 0; ok && i < n; i++)
      ok = sorted[i] >= 0 && sorted[i] < n && l.position[sorted[i]] == i;
    if (sorted && !ok) {
      char want[LIST_STR], got[LIST_STR];
      gs__error(GS_ERR_ARGUMENT, fn,
                "expected sorted_indices to be the inverse of unsorted_indices %s, got %s",
                list_str(want, l.position, l.batch), list_str(got, sorted, n));
    }
    free(sorted);
  }
  layout_free(&l);
  return ok;
}

/* Which row of [data; padding row] each element of the padded output takes: output (t, b) is
 * sequence b's step t while b runs (the rows of step t start after those of earlier steps,
 * then b's sorted position), the padding row (index rows) after b's end. */
static void pad_rows(const packed_layout *l, int64_t total, bool batch_first, int64_t *rows) {
  int64_t step_start = 0;
  for (int64_t t = 0; t < total; t++) {
    for (int64_t b = 0; b < l->batch; b++) {
      int64_t j = l->position[b];
      bool running = t < l->steps && j < l->batch_sizes[t];
      rows[batch_first ? b * total + t : t * l->batch + b] = running ? step_start + j : l->rows;
    }
    if (t < l->steps)
      step_start += l->batch_sizes[t];
  }
}

/* The picked rows of [data; padding row]: the padding row takes part only when some position
 * needs it, and, being a constant, gets no gradient while data gets back exactly what it gave. */
static gs_tensor gather_padded(gs_tensor data, const int64_t *rows, int64_t count,
                               bool need_padding, double padding_value) {
  gs_tensor padding = GS_NO_TENSOR, joined = GS_NO_TENSOR, source = data;
  if (need_padding) {
    int64_t shape[GS_MAX_DIMS];
    int nd = gs_shape(data, shape);
    shape[0] = 1;
    padding = gs_full(gs_dtype_of(data), shape, nd, padding_value);
    joined = padding.id ? gs_cat((gs_tensor[]){data, padding}, 2, 0) : GS_NO_TENSOR;
    source = joined;
  }
  gs_tensor picked = source.id ? gather_rows(source, rows, count) : GS_NO_TENSOR;
  gs_dispose(padding);
  gs_dispose(joined);
  return picked;
}

/* Each sequence's length in the original order: sorted position j runs at every step whose
 * batch size exceeds j. */
static gs_tensor make_lengths(const packed_layout *l, const char *fn) {
  int64_t *by_position = calloc((size_t)l->batch, sizeof(int64_t));
  int64_t *lengths = by_position ? alloc_i64(l->batch, fn) : NULL;
  gs_tensor h = GS_NO_TENSOR;
  if (lengths) {
    for (int64_t t = 0; t < l->steps; t++)
      for (int64_t j = 0; j < l->batch_sizes[t]; j++)
        by_position[j]++;
    for (int64_t b = 0; b < l->batch; b++)
      lengths[b] = by_position[l->position[b]];
    h = gs_from_data(GS_I64, &l->batch, 1, lengths);
  } else if (!by_position) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not allocate %lld lengths", (long long)l->batch);
  }
  free(by_position);
  free(lengths);
  return h;
}

/* The padded output's shape ([T, B, *] or [B, T, *]) from data's trailing dims; its numel,
 * or -1 after reporting an overflow. */
static int64_t padded_shape(gs_tensor data, const packed_layout *l, int64_t total,
                            bool batch_first, int64_t *shape, int *ndim, const char *fn) {
  int64_t data_shape[GS_MAX_DIMS];
  int nd = gs_shape(data, data_shape);
  if (nd + 1 > GS_MAX_DIMS) {
    gs__error(GS_ERR_SHAPE, fn, "a padded output of %d dimensions exceeds the limit of %d",
              nd + 1, GS_MAX_DIMS);
    return -1;
  }
  shape[0] = batch_first ? l->batch : total;
  shape[1] = batch_first ? total : l->batch;
  memcpy(shape + 2, data_shape + 1, sizeof(int64_t) * (size_t)(nd - 1));
  *ndim = nd + 1;
  return gs__checked_numel(shape, *ndim, fn);
}

/* The padded tensor, once the layout is known good and total chosen. */
static gs_tensor build_padded(gs_tensor data, const packed_layout *l, int64_t total,
                              bool batch_first, double padding_value, const char *fn) {
  int64_t shape[GS_MAX_DIMS];
  int ndim;
  if (padded_shape(data, l, total, batch_first, shape, &ndim, fn) < 0)
    return GS_NO_TENSOR;
  int64_t count;
  if (__builtin_mul_overflow(total, l->batch, &count)) {
    gs__error(GS_ERR_OVERFLOW, fn, "total_length %lld times %lld sequences does not fit in 64 "
              "bits", (long long)total, (long long)l->batch);
    return GS_NO_TENSOR;
  }
  int64_t *rows = alloc_i64(count, fn);
  if (!rows)
    return GS_NO_TENSOR;
  pad_rows(l, total, batch_first, rows);
  gs_tensor flat = gather_padded(data, rows, count, l->rows < count, padding_value);
  free(rows);
  gs_tensor padded = flat.id ? gs_reshape(flat, shape, ndim) : GS_NO_TENSOR;
  gs_dispose(flat);
  return padded;
}

gs_tensor gs__pad_packed(const gs__packed_parts *parts, bool batch_first, double padding_value,
                         int64_t total_length, gs_tensor *lengths_out) {
  const char *fn = "pad_packed_sequence";
  if (lengths_out)
    *lengths_out = GS_NO_TENSOR;
  if (!parts) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a packed sequence's parts, got NULL");
    return GS_NO_TENSOR;
  }
  packed_layout l = {0};
  gs_tensor padded = GS_NO_TENSOR;
  if (read_batch_sizes(parts, &l, fn) && read_positions(parts, &l, fn)) {
    if (total_length != -1 && total_length < l.steps) /* PyTorch's ValueError */
      gs__error(GS_ERR_ARGUMENT, fn, "expected total_length to be at least the length of the "
                "longest sequence (%lld), got total_length = %lld", (long long)l.steps,
                (long long)total_length);
    else
      padded = build_padded(parts->data, &l, total_length > l.steps ? total_length : l.steps,
                            batch_first, padding_value, fn);
  }
  if (padded.id && lengths_out) {
    *lengths_out = make_lengths(&l, fn);
    if (!lengths_out->id) {
      gs_dispose(padded);
      padded = GS_NO_TENSOR;
    }
  }
  layout_free(&l);
  return padded;
}
