/* unique-slices.c: torch.unique (the distinct values, or with dim= the distinct slices along
 * a dim, in lexicographic order) and torch.unique_consecutive (runs of equal values or
 * slices, in their order). All
 * see the input as rows (the slices along dim, or single elements when flattened) of a
 * contiguous float64 copy, group equal rows, and hand out the first row of each group with
 * index_select, the group of each row (inverse) and the groups' sizes (counts). No gradient,
 * as torch 1.13's unique has none. NaN is never equal to anything, as in gs_unique. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops-impl.h"

typedef struct rows {
  const double *data; /* n rows of len elements */
  int64_t n, len;
} rows;

static const double *row(const rows *r, int64_t i) { return r->data + i * r->len; }

/* Lexicographic order; NaN after every number (and level with NaN, so the order is total). */
static int compare_rows(const void *a, const void *b, void *ctx) {
  const rows *r = ctx;
  const double *x = row(r, *(const int64_t *)a), *y = row(r, *(const int64_t *)b);
  for (int64_t k = 0; k < r->len; k++) {
    bool xn = isnan(x[k]), yn = isnan(y[k]);
    if (xn || yn) {
      if (xn != yn)
        return xn ? 1 : -1;
      continue;
    }
    if (x[k] != y[k])
      return x[k] < y[k] ? -1 : 1;
  }
  int64_t i = *(const int64_t *)a, j = *(const int64_t *)b; /* stable: the earlier first */
  return i < j ? -1 : i > j;
}

static bool same_row(const rows *r, int64_t i, int64_t j) {
  const double *x = row(r, i), *y = row(r, j);
  for (int64_t k = 0; k < r->len; k++)
    if (!(x[k] == y[k]))
      return false;
  return true;
}

/* The groups of equal rows, visited in order (sorted, or as they come): first[g] the first
 * row of group g, count[g] its size, where[i] the group of row i. Returns the group count. */
static int64_t group_rows(const rows *r, int64_t *order, bool sorted, int64_t *first,
                          int64_t *count, int64_t *where) {
  for (int64_t i = 0; i < r->n; i++)
    order[i] = i;
  if (sorted)
    qsort_r(order, (size_t)r->n, sizeof *order, compare_rows, (void *)r);
  int64_t groups = 0;
  for (int64_t k = 0; k < r->n; k++) {
    if (k == 0 || !same_row(r, order[k], order[k - 1])) {
      first[groups] = order[k];
      count[groups++] = 0;
    }
    count[groups - 1]++;
    where[order[k]] = groups - 1;
  }
  return groups;
}

/* The common path: dim NULL flattens t. */
static bool unique_rows(gs_tensor h, const int *dim, bool sorted, gs_tensor *values,
                        gs_tensor *inverse, gs_tensor *counts, const char *fn) {
  gs__tensor *t = gs__lookup(h, fn);
  if (!t)
    return false;
  int d = -1;
  if (dim && (d = gs__wrap_dim(*dim, t->ndim, fn)) < 0)
    return false;
  if (dim && t->ndim == 0) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "dim=%d: expected a tensor with at least one dim, got a 0-d "
              "tensor",
              *dim);
    return false;
  }
  /* The rows as one contiguous float64 matrix: dim moved to the front (the others keep
   * their order), the rest flattened. */
  int64_t n = dim ? t->shape[d] : t->numel;
  int perm[GS_MAX_DIMS];
  for (int k = 0, j = 1; dim && k < t->ndim; k++) {
    if (k == d)
      perm[0] = d;
    else
      perm[j++] = k;
  }
  gs_no_grad_begin();
  gs_tensor front = dim ? gs_permute(h, perm, t->ndim) : gs_reshape(h, &n, 1);
  gs_no_grad_end();
  gs__tensor *f = front.id ? gs__lookup(front, fn) : NULL;
  gs__tensor c;
  bool copied = false;
  bool ok = f && (copied = gs__as_contiguous(f, GS_F64, &c, fn));
  rows r = {ok ? (const double *)gs__tensor_data(&c) : NULL, n, n ? (ok ? c.numel / n : 0) : 0};
  size_t bytes = sizeof(int64_t) * (size_t)(n > 0 ? n : 1);
  int64_t *order = malloc(bytes), *first = malloc(bytes), *count = malloc(bytes),
          *where = malloc(bytes);
  if (ok && !(order && first && count && where)) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory for %lld rows", (long long)n);
    ok = false;
  }
  int64_t groups = ok ? group_rows(&r, order, sorted, first, count, where) : 0;
  if (copied)
    gs__tensor_release(&c);
  gs_dispose(front);
  gs_tensor v = GS_NO_TENSOR, inv = GS_NO_TENSOR, cnt = GS_NO_TENSOR;
  if (ok && values) {
    gs_tensor picks = gs_from_data(GS_I64, &groups, 1, first);
    gs_tensor flat = dim ? GS_NO_TENSOR : gs_reshape(h, &n, 1);
    gs_no_grad_begin();
    v = gs_index_select(dim ? h : flat, dim ? d : 0, picks);
    gs_no_grad_end();
    gs_dispose(picks), gs_dispose(flat);
    ok = v.id != 0;
  }
  if (ok && inverse) {
    inv = dim ? gs_from_data(GS_I64, &n, 1, where) : gs_from_data(GS_I64, t->shape, t->ndim, where);
    ok = inv.id != 0;
  }
  if (ok && counts) {
    cnt = gs_from_data(GS_I64, &groups, 1, count);
    ok = cnt.id != 0;
  }
  free(order), free(first), free(count), free(where);
  if (!ok) {
    gs_dispose(v), gs_dispose(inv), gs_dispose(cnt);
    return false;
  }
  if (values)
    *values = v;
  if (inverse)
    *inverse = inv;
  if (counts)
    *counts = cnt;
  return true;
}

bool gs_unique(gs_tensor t, gs_tensor *values, gs_tensor *inverse, gs_tensor *counts) {
  return unique_rows(t, NULL, true, values, inverse, counts, "unique");
}

bool gs_unique_dim(gs_tensor t, int dim, gs_tensor *values, gs_tensor *inverse, gs_tensor *counts) {
  return unique_rows(t, &dim, true, values, inverse, counts, "unique");
}

bool gs_unique_consecutive(gs_tensor t, const int *dim, gs_tensor *values, gs_tensor *inverse,
                           gs_tensor *counts) {
  return unique_rows(t, dim, false, values, inverse, counts, "unique_consecutive");
}
