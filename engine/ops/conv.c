/* conv.c: 2-D and 3-D convolution (torch.nn.functional.conv2d, conv3d) through im2col and
 * OpenBLAS.
 *
 * A convolution is a matrix product once each output position's receptive field is laid out
 * as a column: for one group, cols [K = C/groups * kh * kw, positions] and the weight as a
 * matrix [O/groups, K] give out = W @ cols. Samples are taken a chunk at a time, their columns
 * side by side, so one gemm covers the chunk (small images make many tiny products
 * otherwise); the chunk's product is then spread back to [N, O, H, W] with the bias added.
 * A volume's columns (vol2col) are the same with a depth: K = C/groups * kd * kh * kw rows,
 * od * oh * ow positions; one set of loops serves both, a 2-D convolution being of depth 1.
 *
 * The backward formula is the same walk with the products turned around: the gradient's
 * chunk G [O/groups, positions] gives the weight's gradient G @ cols^T (summed over chunks),
 * and the input's as W^T @ G folded back onto the image (col2im, adding where receptive
 * fields overlap). The bias's gradient is g summed over every dim but channels. A backward
 * that creates a graph computes the same gradients with ops instead (conv-grad.c), so they
 * can be differentiated again.
 *
 * 3x3 convolutions of unit stride on images at most 16 wide (the digits CNN's) skip all of
 * this for conv-direct.c, which reads padded planes in place instead of nine-fold columns.
 */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "conv-impl.h" /* ops-impl.h, and the entry points at the end of this file */

/* Elements of column buffer a chunk may use (4 M: 16 MB in f32). */
#define CONV_COLS_BUDGET ((int64_t)1 << 22)

typedef float f32;
typedef double f64;

/* im2col (vol2col for a volume): sample x (its group's cg volumes of d x h x w, contiguous)
 * into cols, whose rows are ld apart, starting at column col0. Positions outside the input
 * (padding) read zero. col2im: the reverse, adding each column entry onto the pixel it came
 * from. A 2-D convolution is the depth-1 case (one slice, offset 0). */
#define CONV_KERNELS(T)                                                                            \
  static void im2col_##T(const conv_geom *g, const T *x, T *cols, int64_t ld, int64_t col0) {      \
    const int64_t hw = g->h * g->w, area = g->oh * g->ow;                                          \
    T *row = cols + col0;                                                                          \
    for (int64_t c = 0; c < g->cg; c++)                                                            \
      for (int64_t a = 0; a < g->kd; a++)                                                          \
        for (int64_t i = 0; i < g->kh; i++)                                                        \
          for (int64_t j = 0; j < g->kw; j++, row += ld)                                           \
            for (int64_t oz = 0; oz < g->od; oz++) {                                               \
              int64_t iz = oz * g->sd - g->pd + a * g->dd;                                         \
              T *slice = row + oz * area;                                                          \
              if (iz < 0 || iz >= g->d) {                                                          \
                memset(slice, 0, sizeof(T) * (size_t)area);                                        \
                continue;                                                                          \
              }                                                                                    \
              const T *plane = x + (c * g->d + iz) * hw;                                           \
              for (int64_t oy = 0; oy < g->oh; oy++) {                                             \
                int64_t iy = oy * g->sh - g->ph + i * g->dh;                                       \
                T *r = slice + oy * g->ow;                                                         \
                if (iy < 0 || iy >= g->h) {                                                        \
                  memset(r, 0, sizeof(T) * (size_t)g->ow);                                         \
                  continue;                                                                        \
                }                                                                                  \
                const T *line = plane + iy * g->w;                                                 \
                for (int64_t ox = 0; ox < g->ow; ox++) {                                           \
                  int64_t ix = ox * g->sw - g->pw + j * g->dw;                                     \
                  r[ox] = ix >= 0 && ix < g->w ? line[ix] : (T)0;                                  \
                }                                                                                  \
              }                                                                                    \
            }                                                                                      \
  }                                                                                                \
  static void col2im_##T(const conv_geom *g, const T *cols, int64_t ld, int64_t col0, T *x) {      \
    const int64_t hw = g->h * g->w, area = g->oh * g->ow;                                          \
    const T *row = cols + col0;                                                                    \
    for (int64_t c = 0; c < g->cg; c++)                                                            \
      for (int64_t a = 0; a < g->kd; a++)                                                          \
        for (int64_t i = 0; i < g->kh; i++)                                                        \
          for (int64_t j = 0; j < g->kw; j++, row += ld)                                           \
            for (int64_t oz = 0; oz < g->od; oz++) {                                               \
              int64_t iz = oz * g->sd - g->pd + a * g->dd;                                         \
              if (iz < 0 || iz >= g->d)                                                            \
                continue;                                                                          \
              const T *slice = row + oz * area;                                                    \
              T *plane = x + (c * g->d + iz) * hw;                                                 \
              for (int64_t oy = 0; oy < g->oh; oy++) {                                             \
                int64_t iy = oy * g->sh - g->ph + i * g->dh;                                       \
                if (iy < 0 || iy >= g->h)                                                          \
                  continue;                                                                        \
                const T *r = slice + oy * g->ow;                                                   \
                T *line = plane + iy * g->w;                                                       \
                for (int64_t ox = 0; ox < g->ow; ox++) {                                           \
                  int64_t ix = ox * g->sw - g->pw + j * g->dw;                                     \
                  if (ix >= 0 && ix < g->w)                                                        \
                    line[ix] += r[ox];                                                             \
                }                                                                                  \
              }                                                                                    \
            }                                                                                      \
  }
CONV_KERNELS(f32)
CONV_KERNELS(f64)

/* Unit stride and dilation (the CNN's 3x3 padding-1 layers) take a padded copy of the
 * sample's planes instead: then every column row is oh runs of ow contiguous pixels with no
 * bounds to test, copied (or, for col2im, added) whole. Widths 4 and 8 (8x8 digits and their
 * pooled 4x4) get a copy of fixed length the compiler turns into vector moves: the general
 * loop's per-pixel bounds test and scalar copy was a quarter of the CNN's step. pad holds
 * cg planes of (h + 2 ph) x (w + 2 pw); its border stays zero between samples. */
static bool conv_is_dense(const conv_geom *g) {
  return conv_is_planar(g) && g->sh == 1 && g->sw == 1 && g->dh == 1 && g->dw == 1;
}

#define CONV_DENSE_KERNELS(T)                                                                      \
  static inline void run_copy_##T(T *restrict d, const T *restrict s, int64_t n) {                 \
    if (n == 4)                                                                                    \
      memcpy(d, s, 4 * sizeof(T));                                                                 \
    else if (n == 8)                                                                               \
      memcpy(d, s, 8 * sizeof(T));                                                                 \
    else                                                                                           \
      memcpy(d, s, (size_t)n * sizeof(T));                                                         \
  }                                                                                                \
  static inline void run_add_##T(T *restrict d, const T *restrict s, int64_t n) {                  \
    if (n == 4)                                                                                    \
      for (int k = 0; k < 4; k++)                                                                  \
        d[k] += s[k];                                                                              \
    else if (n == 8)                                                                               \
      for (int k = 0; k < 8; k++)                                                                  \
        d[k] += s[k];                                                                              \
    else                                                                                           \
      for (int64_t k = 0; k < n; k++)                                                              \
        d[k] += s[k];                                                                              \
  }                                                                                                \
  static void im2col_dense_##T(const conv_geom *g, const T *x, T *pad, T *cols, int64_t ld,        \
                               int64_t col0) {                                                     \
    const int64_t h = g->h, w = g->w, oh = g->oh, ow = g->ow, kh = g->kh, kw = g->kw;              \
    const int64_t hp = h + 2 * g->ph, wp = w + 2 * g->pw;                                          \
    for (int64_t c = 0; c < g->cg; c++)                                                            \
      for (int64_t y = 0; y < h; y++)                                                              \
        run_copy_##T(pad + (c * hp + y + g->ph) * wp + g->pw, x + (c * h + y) * w, w);             \
    T *row = cols + col0;                                                                          \
    for (int64_t c = 0; c < g->cg; c++)                                                            \
      for (int64_t i = 0; i < kh; i++)                                                             \
        for (int64_t j = 0; j < kw; j++, row += ld) {                                              \
          T *r = row;                                                                              \
          const T *s = pad + (c * hp + i) * wp + j;                                                \
          if (ow == 4)                                                                             \
            for (int64_t oy = 0; oy < oh; oy++, r += 4, s += wp)                                   \
              memcpy(r, s, 4 * sizeof(T));                                                         \
          else if (ow == 8)                                                                        \
            for (int64_t oy = 0; oy < oh; oy++, r += 8, s += wp)                                   \
              memcpy(r, s, 8 * sizeof(T));                                                         \
          else                                                                                     \
            for (int64_t oy = 0; oy < oh; oy++, r += ow, s += wp)                                  \
              memcpy(r, s, (size_t)ow * sizeof(T));                                                \
        }                                                                                          \
  }                                                                                                \
  static void col2im_dense_##T(const conv_geom *g, const T *cols, int64_t ld, int64_t col0,        \
                               T *pad, T *x) {                                                     \
    const int64_t h = g->h, w = g->w, oh = g->oh, ow = g->ow, kh = g->kh, kw = g->kw;              \
    const int64_t hp = h + 2 * g->ph, wp = w + 2 * g->pw;                                          \
    memset(pad, 0, sizeof(T) * (size_t)(g->cg * hp * wp));                                         \
    const T *row = cols + col0;                                                                    \
    for (int64_t c = 0; c < g->cg; c++)                                                            \
      for (int64_t i = 0; i < kh; i++)                                                             \
        for (int64_t j = 0; j < kw; j++, row += ld) {                                              \
          const T *r = row;                                                                        \
          T *d = pad + (c * hp + i) * wp + j;                                                      \
          for (int64_t oy = 0; oy < oh; oy++, r += ow, d += wp)                                    \
            run_add_##T(d, r, ow);                                                                 \
        }                                                                                          \
    for (int64_t c = 0; c < g->cg; c++)                                                            \
      for (int64_t y = 0; y < h; y++)                                                              \
        run_add_##T(x + (c * h + y) * w, pad + (c * hp + y + g->ph) * wp + g->pw, w);              \
  }
CONV_DENSE_KERNELS(f32)
CONV_DENSE_KERNELS(f64)

/* pad: the dense kernels' padded planes (pad_elems(g) elements, zeroed), or NULL for the
 * general ones. */
static int64_t pad_elems(const conv_geom *g) {
  return conv_is_dense(g) ? g->cg * (g->h + 2 * g->ph) * (g->w + 2 * g->pw) : 0;
}

static void im2col(gs_dtype dt, const conv_geom *g, const char *x, char *pad, char *cols,
                   int64_t ld, int64_t col0) {
  if (pad && dt == GS_F32)
    im2col_dense_f32(g, (const f32 *)x, (f32 *)pad, (f32 *)cols, ld, col0);
  else if (pad)
    im2col_dense_f64(g, (const f64 *)x, (f64 *)pad, (f64 *)cols, ld, col0);
  else if (dt == GS_F32)
    im2col_f32(g, (const f32 *)x, (f32 *)cols, ld, col0);
  else
    im2col_f64(g, (const f64 *)x, (f64 *)cols, ld, col0);
}

static void col2im(gs_dtype dt, const conv_geom *g, const char *cols, int64_t ld, int64_t col0,
                   char *pad, char *x) {
  if (pad && dt == GS_F32)
    col2im_dense_f32(g, (const f32 *)cols, ld, col0, (f32 *)pad, (f32 *)x);
  else if (pad)
    col2im_dense_f64(g, (const f64 *)cols, ld, col0, (f64 *)pad, (f64 *)x);
  else if (dt == GS_F32)
    col2im_f32(g, (const f32 *)cols, ld, col0, (f32 *)x);
  else
    col2im_f64(g, (const f64 *)cols, ld, col0, (f64 *)x);
}

/* c = alpha * op(a) @ op(b) + beta * c, row-major, in dt. */
static void gemm(gs_dtype dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double beta,
                 const char *a, int64_t lda, const char *b, int64_t ldb, char *c, int64_t ldc) {
  enum CBLAS_TRANSPOSE A = ta ? CblasTrans : CblasNoTrans, B = tb ? CblasTrans : CblasNoTrans;
  if (dt == GS_F32)
    cblas_sgemm(CblasRowMajor, A, B, (blasint)m, (blasint)n, (blasint)k, 1.0f,
                (const float *)a, (blasint)lda, (const float *)b, (blasint)ldb, (float)beta,
                (float *)c, (blasint)ldc);
  else
    cblas_dgemm(CblasRowMajor, A, B, (blasint)m, (blasint)n, (blasint)k, 1.0,
                (const double *)a, (blasint)lda, (const double *)b, (blasint)ldb, beta,
                (double *)c, (blasint)ldc);
}

/* Samples per chunk: as many as the column budget holds, at least one. */
static int64_t chunk_samples(const conv_geom *g) {
  int64_t per = g->k * g->l;
  int64_t nb = per > 0 ? CONV_COLS_BUDGET / per : g->n;
  return nb < 1 ? 1 : nb > g->n ? g->n : nb;
}

/* Moves a chunk's [og, nb * l] block (columns sample-major) to or from [nb, O, l] planes
 * starting at channel oc0. to_chunk: planes -> block, adding each plane's sum onto
 * sums[oc0 + o] when sums is not NULL (the bias's gradient, summed as gs_sum sums it: each
 * plane a run in eight double lanes, planes in sample order, so the same bits); else block ->
 * planes, adding bias[oc0 + o] when bias is not NULL (one pass for the product and the bias). */
#define CONV_SHUFFLE(T)                                                                            \
  static void shuffle_##T(const conv_geom *g, int64_t nb, int64_t oc0, T *block, T *planes,        \
                          bool to_chunk, const T *bias, double *sums) {                            \
    const int64_t l = g->l;                                                                        \
    for (int64_t s = 0; s < nb; s++)                                                               \
      for (int64_t o = 0; o < g->og; o++) {                                                        \
        T *b = block + (o * nb + s) * l, *p = planes + (s * g->o + oc0 + o) * l;                   \
        if (to_chunk) {                                                                            \
          memcpy(b, p, sizeof(T) * (size_t)l);                                                     \
          if (sums)                                                                                \
            sums[oc0 + o] += conv_plane_sum_##T(p, l);                                             \
        } else if (bias) {                                                                         \
          T v = bias[oc0 + o];                                                                     \
          for (int64_t i = 0; i < l; i++)                                                          \
            p[i] = b[i] + v;                                                                       \
        } else {                                                                                   \
          memcpy(p, b, sizeof(T) * (size_t)l);                                                     \
        }                                                                                          \
      }                                                                                            \
  }
CONV_SHUFFLE(float)
CONV_SHUFFLE(double)

static void shuffle(gs_dtype dt, const conv_geom *g, int64_t nb, int64_t oc0, char *block,
                    char *planes, bool to_chunk, const char *bias, double *sums) {
  if (dt == GS_F32)
    shuffle_float(g, nb, oc0, (f32 *)block, (f32 *)planes, to_chunk, (const f32 *)bias, sums);
  else
    shuffle_double(g, nb, oc0, (f64 *)block, (f64 *)planes, to_chunk, (const f64 *)bias, sums);
}

/* A scratch buffer of count elements of dt (an unregistered storage); false after
 * reporting. */
static bool scratch(gs__tensor *t, gs_dtype dt, int64_t count, const char *fn) {
  return gs__tensor_init(t, dt, (int64_t[]){count > 0 ? count : 1}, 1, fn);
}

/* One scratch for a call: the column buffer (k x nb * l), the product block (og x nb * l) and
 * the dense kernels' two padded planes (im2col's zeroed: its border must stay zero), in one
 * allocation. */
typedef struct conv_scratch {
  gs__tensor t;
  char *cols, *block, *pad, *acc; /* acc: col2im's padded planes, zeroed by each call */
} conv_scratch;

static bool scratch_open(conv_scratch *sc, gs_dtype dt, const conv_geom *g, int64_t nb,
                         const char *fn) {
  int64_t ncols = g->k * nb * g->l, nblock = g->og * nb * g->l, npad = pad_elems(g);
  if (!scratch(&sc->t, dt, ncols + nblock + 2 * npad, fn))
    return false;
  size_t es = gs__elsize(dt);
  sc->cols = gs__tensor_data(&sc->t);
  sc->block = sc->cols + (size_t)ncols * es;
  sc->pad = npad ? sc->block + (size_t)nblock * es : NULL;
  sc->acc = npad ? sc->pad + (size_t)npad * es : NULL;
  if (sc->pad)
    memset(sc->pad, 0, (size_t)npad * es);
  return true;
}

/* out [N, O, L] = conv(x, w) + bias, x [N, C, H, W] and w [O, cg, kh, kw] contiguous. */
static bool conv_forward(gs_dtype dt, const conv_geom *g, const char *x, const char *w,
                         const char *bias, char *out, const char *fn) {
  if (gs__conv_direct_fits(dt, g))
    return gs__conv_direct_forward(dt, g, x, w, bias, out, fn);
  int64_t nb = chunk_samples(g);
  conv_scratch sc;
  if (!scratch_open(&sc, dt, g, nb, fn))
    return false;
  int64_t es = (int64_t)gs__elsize(dt);
  for (int64_t n0 = 0; n0 < g->n; n0 += nb) {
    int64_t m = g->n - n0 < nb ? g->n - n0 : nb;
    for (int64_t gi = 0; gi < g->groups; gi++) {
      for (int64_t s = 0; s < m; s++)
        im2col(dt, g, x + (((n0 + s) * g->c + gi * g->cg) * g->d * g->h * g->w) * es, sc.pad,
               sc.cols, m * g->l, s * g->l);
      gemm(dt, false, false, g->og, m * g->l, g->k, 0.0, w + gi * g->og * g->k * es, g->k, sc.cols,
           m * g->l, sc.block, m * g->l);
      shuffle(dt, g, m, gi * g->og, sc.block, out + n0 * g->o * g->l * es, false, bias, NULL);
    }
  }
  gs__tensor_release(&sc.t);
  return true;
}

/* dx (zeroed, [N, C, H, W]), dw ([O, cg, kh, kw]) and db (O sums, zeroed) from gy [N, O, L];
 * any output may be NULL when not wanted, and then its operand (x for dw, w for dx) may be
 * NULL too. */
static bool conv_backward(gs_dtype dt, const conv_geom *g, const char *x, const char *w,
                          const char *gy, char *dx, char *dw, double *db, const char *fn) {
  if (gs__conv_direct_fits(dt, g))
    return gs__conv_direct_backward(dt, g, x, w, gy, dx, dw, db, fn);
  int64_t nb = chunk_samples(g);
  conv_scratch sc;
  if (!scratch_open(&sc, dt, g, nb, fn))
    return false;
  int64_t es = (int64_t)gs__elsize(dt);
  char *pc = sc.cols, *pb = sc.block;
  for (int64_t n0 = 0; n0 < g->n; n0 += nb) {
    int64_t m = g->n - n0 < nb ? g->n - n0 : nb, ld = m * g->l;
    for (int64_t gi = 0; gi < g->groups; gi++) {
      shuffle(dt, g, m, gi * g->og, pb, (char *)gy + n0 * g->o * g->l * es, true, NULL, db);
      if (dw) {
        for (int64_t s = 0; s < m; s++)
          im2col(dt, g, x + (((n0 + s) * g->c + gi * g->cg) * g->d * g->h * g->w) * es, sc.pad, pc,
                 ld, s * g->l);
        gemm(dt, false, true, g->og, g->k, ld, n0 == 0 ? 0.0 : 1.0, pb, ld, pc, ld,
             dw + gi * g->og * g->k * es, g->k);
      }
      if (dx) {
        gemm(dt, true, false, g->k, ld, g->og, 0.0, w + gi * g->og * g->k * es, g->k, pb, ld,
             pc, ld);
        for (int64_t s = 0; s < m; s++)
          col2im(dt, g, pc, ld, s * g->l, sc.acc,
                 dx + (((n0 + s) * g->c + gi * g->cg) * g->d * g->h * g->w) * es);
      }
    }
  }
  gs__tensor_release(&sc.t);
  return true;
}

/* ---- geometry and checks ------------------------------------------------------------- */

static int64_t or_default(int64_t v, int64_t dflt) { return v == 0 ? dflt : v; }

/* A convolution's options in three dims, depth first (a 2-D one's depth: stride 1, padding 0,
 * dilation 1), with its number of spatial dims (2 or 3). */
typedef struct conv_args {
  int64_t stride[3], padding[3], dilation[3], groups;
  int spatial;
} conv_args;

/* The convolution's geometry from its operands' shapes and options; false after reporting
 * in PyTorch's words. */
static bool plan_conv(conv_geom *g, const gs__tensor *x, const gs__tensor *w,
                      const gs__tensor *bias, const conv_args *a, const char *fn) {
  const int sp = a->spatial;
  const bool vol = sp == 3;
  char sx[GS__SHAPE_STR], sw[GS__SHAPE_STR], s1[GS__SHAPE_STR], s2[GS__SHAPE_STR],
      s3[GS__SHAPE_STR];
  if (x->ndim != sp + 1 && x->ndim != sp + 2) {
    gs__error(GS_ERR_SHAPE, fn,
              "expected a %d-D (unbatched) or %d-D (batched) input [N, C, %s], got %s", sp + 1,
              sp + 2, vol ? "D, H, W" : "H, W", gs__shape_str(sx, x->shape, x->ndim));
    return false;
  }
  if (w->ndim != sp + 2) {
    gs__error(GS_ERR_SHAPE, fn, "expected a %d-D weight [out, in / groups, %s], got %s", sp + 2,
              vol ? "kd, kh, kw" : "kh, kw", gs__shape_str(sw, w->shape, w->ndim));
    return false;
  }
  const int64_t *in = x->shape + (x->ndim - sp - 1), *ks = w->shape + 2;
  int64_t st[3], dil[3];
  for (int i = 0; i < 3; i++)
    st[i] = or_default(a->stride[i], 1), dil[i] = or_default(a->dilation[i], 1);
  *g = (conv_geom){
      .n = x->ndim == sp + 2 ? x->shape[0] : 1,
      .c = in[0],
      .d = vol ? in[1] : 1,
      .h = in[sp - 1],
      .w = in[sp],
      .o = w->shape[0],
      .kd = vol ? ks[0] : 1,
      .kh = ks[sp - 2],
      .kw = ks[sp - 1],
      .groups = or_default(a->groups, 1),
      .sd = st[0],
      .sh = st[1],
      .sw = st[2],
      .pd = a->padding[0],
      .ph = a->padding[1],
      .pw = a->padding[2],
      .dd = dil[0],
      .dh = dil[1],
      .dw = dil[2],
  };
  bool negative = g->groups < 0;
  for (int i = 0; i < 3; i++)
    negative |= st[i] < 0 || dil[i] < 0 || a->padding[i] < 0;
  if (negative) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected positive stride, dilation and groups and non-negative padding, got "
              "stride %s, padding %s, dilation %s, groups %lld",
              gs__spatial_str(s1, st, sp, false), gs__spatial_str(s2, a->padding, sp, false),
              gs__spatial_str(s3, dil, sp, false), (long long)g->groups);
    return false;
  }
  if (g->o % g->groups != 0) {
    gs__error(GS_ERR_SHAPE, fn,
              "expected the weight's out channels (%lld) to be divisible by groups (%lld)",
              (long long)g->o, (long long)g->groups);
    return false;
  }
  g->cg = w->shape[1];
  g->og = g->o / g->groups;
  if (g->cg * g->groups != g->c) {
    gs__error(GS_ERR_SHAPE, fn,
              "given groups=%lld, weight of size %s, expected input%s to have %lld channels, "
              "but got %lld channels instead",
              (long long)g->groups, gs__shape_str(sw, w->shape, w->ndim),
              gs__shape_str(sx, x->shape, x->ndim), (long long)(g->cg * g->groups),
              (long long)g->c);
    return false;
  }
  if (bias && (bias->ndim != 1 || bias->shape[0] != g->o)) {
    char sb[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn, "expected a bias of shape [%lld] (the weight's out channels), "
              "got %s", (long long)g->o, gs__shape_str(sb, bias->shape, bias->ndim));
    return false;
  }
  int64_t padded[3] = {g->d + 2 * g->pd, g->h + 2 * g->ph, g->w + 2 * g->pw};
  int64_t span[3] = {g->dd * (g->kd - 1) + 1, g->dh * (g->kh - 1) + 1, g->dw * (g->kw - 1) + 1};
  if (padded[0] < span[0] || padded[1] < span[1] || padded[2] < span[2]) {
    gs__error(GS_ERR_SHAPE, fn,
              "calculated padded input size per channel: %s; kernel size %s (with dilation) "
              "cannot be greater than the actual input size",
              gs__spatial_str(s1, padded, sp, true), gs__spatial_str(s2, span, sp, true));
    return false;
  }
  g->od = (padded[0] - span[0]) / g->sd + 1;
  g->oh = (padded[1] - span[1]) / g->sh + 1;
  g->ow = (padded[2] - span[2]) / g->sw + 1;
  g->k = g->cg * g->kd * g->kh * g->kw;
  g->l = g->od * g->oh * g->ow;
  int64_t biggest = g->k * chunk_samples(g) * g->l;
  if (g->k > INT32_MAX || g->l * g->n > INT32_MAX || biggest > INT32_MAX) {
    gs__error(GS_ERR_OVERFLOW, fn, "the convolution's products exceed BLAS's size limit");
    return false;
  }
  return true;
}

/* ---- backward formula ----------------------------------------------------------------- */

/* A node's ints: groups, stride, padding, dilation (each depth, height, width) and the
 * output's depth, height and width; a 2-D node's depth entries are 1, 0, 1 and 1. */
enum { CONV_NODE_INTS = 13 };

static void store_geom(gs__node *n, const conv_geom *g) {
  int64_t ints[CONV_NODE_INTS] = {g->groups, g->sd, g->sh, g->sw, g->pd, g->ph, g->pw,
                                  g->dd,     g->dh, g->dw, g->od, g->oh, g->ow};
  memcpy(n->ints, ints, sizeof ints);
}

/* The geometry a node recorded: options in ints, shapes from its inputs' metadata (a 5-D
 * weight: a volumetric convolution). */
static void geom_of_node(const gs__node *n, conv_geom *g) {
  const gs__input_meta *x = &n->inputs[0], *w = &n->inputs[1];
  const int sp = w->ndim - 2;
  const int64_t *in = x->shape + (x->ndim - sp - 1), *i = n->ints;
  *g = (conv_geom){
      .n = x->ndim == sp + 2 ? x->shape[0] : 1,
      .c = in[0],
      .d = sp == 3 ? in[1] : 1,
      .h = in[sp - 1],
      .w = in[sp],
      .o = w->shape[0],
      .kd = sp == 3 ? w->shape[2] : 1,
      .kh = w->shape[sp],
      .kw = w->shape[sp + 1],
      .cg = w->shape[1],
      .groups = i[0],
      .sd = i[1],
      .sh = i[2],
      .sw = i[3],
      .pd = i[4],
      .ph = i[5],
      .pw = i[6],
      .dd = i[7],
      .dh = i[8],
      .dw = i[9],
      .od = i[10],
      .oh = i[11],
      .ow = i[12],
  };
  g->og = g->o / g->groups;
  g->k = g->cg * g->kd * g->kh * g->kw;
  g->l = g->od * g->oh * g->ow;
}

/* Looks up a saved handle as a contiguous tensor of dt (retained or copied). */
static bool contiguous_of(gs_tensor h, gs_dtype dt, gs__tensor *out, const char *fn) {
  gs__tensor *t = gs__lookup(h, fn);
  return t && gs__as_contiguous(t, dt, out, fn);
}

/* d conv(x, w) + b: dx = col2im(W^T @ G), dw = G @ cols(x)^T, db = g summed over all dims but
 * channels (saved: x in slot 0 when w needs a gradient, w in slot 1 when x does); 2-D and
 * volumetric alike. */
static void conv_backward_formula(gs__node *n, gs_tensor hg, gs_tensor *grads) {
  const char *fn = n->kind->name;
  conv_geom g;
  geom_of_node(n, &g);
  if (gs__formula_creates_graph()) { /* the same with ops that record (double backward) */
    gs__conv_shape s = {g.n,
                        g.c,
                        g.h,
                        g.w,
                        g.o,
                        g.kh,
                        g.kw,
                        g.groups,
                        g.sh,
                        g.sw,
                        g.ph,
                        g.pw,
                        g.dh,
                        g.dw,
                        g.oh,
                        g.ow,
                        n->inputs[1].ndim == 5,
                        g.d,
                        g.kd,
                        g.sd,
                        g.pd,
                        g.dd,
                        g.od};
    gs__conv_backward_ops(n, hg, &s, grads);
    return;
  }
  gs__tensor *gt = gs__lookup(hg, fn);
  if (!gt)
    return;
  gs_dtype dt = gt->dtype;
  gs__tensor gy, x = {0}, w = {0};
  if (!gs__as_contiguous(gt, dt, &gy, fn))
    return;
  bool want_x = gs__needs_grad(n, 0), want_w = gs__needs_grad(n, 1);
  bool want_b = n->n_inputs > 2 && gs__needs_grad(n, 2);
  bool ok = (!want_w || contiguous_of(gs__saved(n, 0), dt, &x, fn)) &&
            (!want_x || contiguous_of(gs__saved(n, 1), dt, &w, fn));
  gs__tensor *dx = NULL, *dw = NULL, *db = NULL;
  gs_tensor hdx = GS_NO_TENSOR, hdw = GS_NO_TENSOR, hdb = GS_NO_TENSOR;
  double *sums = NULL;
  if (ok && want_x) {
    hdx = gs_zeros(dt, n->inputs[0].shape, n->inputs[0].ndim);
    dx = hdx.id ? gs__lookup(hdx, fn) : NULL;
    ok = dx != NULL;
  }
  if (ok && want_w) {
    hdw = gs__tensor_new(dt, n->inputs[1].shape, n->inputs[1].ndim, fn, &dw);
    ok = hdw.id != 0;
  }
  if (ok && want_b) { /* summed while the gradient is shuffled, not by a gs_sum pass of its own */
    hdb = gs__tensor_new(dt, n->inputs[2].shape, n->inputs[2].ndim, fn, &db);
    sums = hdb.id ? calloc((size_t)g.o, sizeof *sums) : NULL;
    if (hdb.id && !sums)
      gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory for %lld bias sums", (long long)g.o);
    ok = sums != NULL;
  }
  if (ok)
    ok = conv_backward(dt, &g, want_w ? gs__tensor_data(&x) : NULL,
                       want_x ? gs__tensor_data(&w) : NULL, gs__tensor_data(&gy),
                       dx ? gs__tensor_data(dx) : NULL, dw ? gs__tensor_data(dw) : NULL, sums, fn);
  gs__tensor_release(&gy);
  if (x.storage)
    gs__tensor_release(&x);
  if (w.storage)
    gs__tensor_release(&w);
  if (ok && db) {
    db = gs__lookup(hdb, fn); /* the lookups above may have moved the tensor table */
    ok = db != NULL;
    for (int64_t o = 0; ok && o < g.o; o++)
      if (dt == GS_F32)
        ((f32 *)gs__tensor_data(db))[o] = (f32)sums[o];
      else
        ((f64 *)gs__tensor_data(db))[o] = sums[o];
  }
  free(sums);
  if (!ok) {
    gs_dispose(hdx), gs_dispose(hdw), gs_dispose(hdb);
    return;
  }
  if (want_x)
    grads[0] = gs__reduce_grad(n, 0, hdx);
  if (want_w)
    grads[1] = gs__reduce_grad(n, 1, hdw);
  if (want_b)
    grads[2] = gs__reduce_grad(n, 2, hdb);
}
GS__BACKWARD_TWICE(Conv2dBackward, conv_backward_formula);
GS__BACKWARD_TWICE(Conv3dBackward, conv_backward_formula);

/* ---- forward -------------------------------------------------------------------------- */

/* conv2d and conv3d: x, w and b checked, planned by a, run, and recorded as a node of kind. */
static gs_tensor conv_nd(gs_tensor hx, gs_tensor hw, gs_tensor hb, const conv_args *a,
                         const gs__node_kind *kind, const char *fn) {
  gs__tensor *x = gs__lookup(hx, fn);
  gs__tensor *w = x ? gs__lookup(hw, fn) : NULL;
  gs__tensor *b = w && hb.id ? gs__lookup(hb, fn) : NULL;
  if (!w || (hb.id && !b))
    return GS_NO_TENSOR;
  if (!gs_dtype_is_floating(x->dtype) || w->dtype != x->dtype || (b && b->dtype != x->dtype)) {
    gs__error(GS_ERR_DTYPE, fn,
              "expected input, weight and bias of one floating dtype (f32 or f64), got input "
              "%s, weight %s, bias %s",
              gs_dtype_name(x->dtype), gs_dtype_name(w->dtype),
              b ? gs_dtype_name(b->dtype) : "none");
    return GS_NO_TENSOR;
  }
  conv_geom g;
  if (!plan_conv(&g, x, w, b, a, fn))
    return GS_NO_TENSOR;
  gs_dtype dt = x->dtype;
  const int sp = a->spatial;
  int64_t shape[5] = {g.n, g.o, g.od, g.oh, g.ow};
  if (sp == 2)
    shape[2] = g.oh, shape[3] = g.ow;
  bool batched = x->ndim == sp + 2;
  gs__tensor cx, cw, cb = {0};
  if (!gs__as_contiguous(x, dt, &cx, fn))
    return GS_NO_TENSOR;
  if (!gs__as_contiguous(w, dt, &cw, fn)) {
    gs__tensor_release(&cx);
    return GS_NO_TENSOR;
  }
  if (b && !gs__as_contiguous(b, dt, &cb, fn)) {
    gs__tensor_release(&cx), gs__tensor_release(&cw);
    return GS_NO_TENSOR;
  }
  gs__tensor *out;
  gs_tensor h = gs__tensor_new(dt, batched ? shape : shape + 1, x->ndim, fn, &out);
  if (h.id && !conv_forward(dt, &g, gs__tensor_data(&cx), gs__tensor_data(&cw),
                            b ? gs__tensor_data(&cb) : NULL, gs__tensor_data(out), fn)) {
    gs_dispose(h);
    h = GS_NO_TENSOR;
  }
  gs__tensor_release(&cx), gs__tensor_release(&cw);
  if (b)
    gs__tensor_release(&cb);
  if (!h.id)
    return h;
  out = gs__lookup(h, fn);
  gs__node *n = b ? gs__record(kind, out, 3, (const gs__tensor *[]){x, w, b}, 2)
                  : gs__record(kind, out, 2, (const gs__tensor *[]){x, w}, 2);
  if (n) {
    store_geom(n, &g);
    if (gs__needs_grad(n, 1))
      gs__save(n, 0, x);
    if (gs__needs_grad(n, 0))
      gs__save(n, 1, w);
  }
  return h;
}

gs_tensor gs_conv2d(gs_tensor hx, gs_tensor hw, gs_tensor hb, const gs_conv2d_options *opt) {
  static const gs_conv2d_options defaults = {{1, 1}, {0, 0}, {1, 1}, 1};
  if (!opt)
    opt = &defaults;
  conv_args a = {{1, opt->stride[0], opt->stride[1]},
                 {0, opt->padding[0], opt->padding[1]},
                 {1, opt->dilation[0], opt->dilation[1]},
                 opt->groups,
                 2};
  return conv_nd(hx, hw, hb, &a, &Conv2dBackward, "conv2d");
}

gs_tensor gs_conv3d(gs_tensor hx, gs_tensor hw, gs_tensor hb, const gs_conv3d_options *opt) {
  static const gs_conv3d_options defaults = {{1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 1};
  if (!opt)
    opt = &defaults;
  conv_args a = {{0}, {0}, {0}, opt->groups, 3};
  memcpy(a.stride, opt->stride, sizeof a.stride);
  memcpy(a.padding, opt->padding, sizeof a.padding);
  memcpy(a.dilation, opt->dilation, sizeof a.dilation);
  return conv_nd(hx, hw, hb, &a, &Conv3dBackward, "conv3d");
}

/* ---- the kernels for conv-transpose.c (conv-impl.h) ------------------------------------- */

/* The loops' geometry of s (a 2-D s: depth 1). */
static conv_geom geom_of_shape(const gs__conv_shape *s) {
  const bool vol = s->volumetric;
  conv_geom g = {
      .n = s->n,
      .c = s->c,
      .d = vol ? s->d : 1,
      .h = s->h,
      .w = s->w,
      .o = s->o,
      .kd = vol ? s->kd : 1,
      .kh = s->kh,
      .kw = s->kw,
      .groups = s->groups,
      .sd = vol ? s->sd : 1,
      .sh = s->sh,
      .sw = s->sw,
      .pd = vol ? s->pd : 0,
      .ph = s->ph,
      .pw = s->pw,
      .dd = vol ? s->dd : 1,
      .dh = s->dh,
      .dw = s->dw,
      .od = vol ? s->od : 1,
      .oh = s->oh,
      .ow = s->ow,
  };
  g.cg = g.c / g.groups;
  g.og = g.o / g.groups;
  g.k = g.cg * g.kd * g.kh * g.kw;
  g.l = g.od * g.oh * g.ow;
  return g;
}

bool gs__conv_run_forward(gs_dtype dt, const gs__conv_shape *s, const char *x, const char *w,
                          const char *bias, char *out, const char *fn) {
  conv_geom g = geom_of_shape(s);
  return conv_forward(dt, &g, x, w, bias, out, fn);
}

bool gs__conv_run_backward(gs_dtype dt, const gs__conv_shape *s, const char *x, const char *w,
                           const char *gy, char *dx, char *dw, const char *fn) {
  conv_geom g = geom_of_shape(s);
  return conv_backward(dt, &g, x, w, gy, dx, dw, NULL, fn);
}

void gs__conv_per_channel(gs_dtype dt, int64_t n, int64_t c, int64_t l, char *planes,
                          const char *bias, double *sums) {
  for (int64_t i = 0; i < n; i++)
    for (int64_t ch = 0; ch < c; ch++) {
      int64_t at = (i * c + ch) * l;
      if (dt == GS_F32) {
        f32 *p = (f32 *)planes + at;
        for (int64_t k = 0; k < l; k++)
          if (bias)
            p[k] += ((const f32 *)bias)[ch];
          else
            sums[ch] += (double)p[k];
      } else {
        f64 *p = (f64 *)planes + at;
        for (int64_t k = 0; k < l; k++)
          if (bias)
            p[k] += ((const f64 *)bias)[ch];
          else
            sums[ch] += p[k];
      }
    }
}

gs_tensor gs__conv_bias_grad(gs_dtype dt, int64_t n, int64_t c, int64_t l, char *gy,
                             const int64_t *shape, int ndim, const char *fn) {
  double *sums = calloc((size_t)c + 1, sizeof *sums);
  if (!sums) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory for %lld bias sums", (long long)c);
    return GS_NO_TENSOR;
  }
  gs__tensor *db;
  gs_tensor h = gs__tensor_new(dt, shape, ndim, fn, &db);
  if (h.id) {
    gs__conv_per_channel(dt, n, c, l, gy, NULL, sums);
    for (int64_t ch = 0; ch < c; ch++)
      if (dt == GS_F32)
        ((f32 *)gs__tensor_data(db))[ch] = (f32)sums[ch];
      else
        ((f64 *)gs__tensor_data(db))[ch] = sums[ch];
  }
  free(sums);
  return h;
}

bool gs__conv_fits_blas(const gs__conv_shape *s, const char *fn) {
  conv_geom g = geom_of_shape(s);
  if (g.k > INT32_MAX || g.l * g.n > INT32_MAX || g.k * chunk_samples(&g) * g.l > INT32_MAX) {
    gs__error(GS_ERR_OVERFLOW, fn, "the convolution's products exceed BLAS's size limit");
    return false;
  }
  return true;
}
