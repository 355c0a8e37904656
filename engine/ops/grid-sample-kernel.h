/* grid-sample-kernel.h: grid_sample's loops, for 4-D inputs and 5-D (volumes), for one floating
 * type T, their names ending in SUFFIX; grid-sample.c includes it once per dtype (T float, then
 * double), so each computes in its own precision, as torch 1.13's CPU kernel
 * (GridSamplerKernel.cpp) does.
 *
 * A grid point (x, y) in [-1, 1] is unnormalized to a pixel position, moved inside the image
 * by the padding mode (border: clipped; reflection: mirrored, then clipped) and read:
 * nearest rounds it half to even; bilinear blends the 4 pixels around it (trilinear: the 8
 * voxels of a volume, the same loop over one more dim); bicubic (2-D only) blends the
 * 4 x 4 around it with the cubic convolution of A = -0.75, padding each of the 16 taps on its
 * own. A tap outside the image reads 0 (zeros padding). The backward adds each output's
 * gradient back where it was read and, but for nearest, differentiates the blend's weights for
 * the grid's gradient.
 */
#define GS__GLUE_(a, b) a##_##b
#define GS__GLUE(a, b) GS__GLUE_(a, b)
#define GS__FN(name) GS__GLUE(name, SUFFIX)

/* [-1, 1] to a pixel position; *scale: its derivative */
static inline T GS__FN(unnormalize)(T coord, int64_t size, bool align, T *scale) {
  if (align) {
    *scale = (T)(size - 1) / 2;
    return ((coord + 1) / 2) * (T)(size - 1);
  }
  *scale = (T)size / 2;
  return ((coord + 1) * (T)size - 1) / 2;
}

/* within [0, size - 1] (std::min(size - 1, std::max(in, 0)) to the letter, NaN included); *g:
 * the derivative, 0 on the edges themselves as torch's */
static inline T GS__FN(clip)(T in, int64_t size, T *g) {
  T limit = (T)(size - 1);
  *g = in <= 0 || in >= limit ? 0 : 1;
  T lo = in < 0 ? 0 : in;
  return lo < limit ? lo : limit;
}

/* in mirrored into [twice_low / 2, twice_high / 2]; *g: its derivative (+1 or -1) */
static inline T GS__FN(reflect)(T in, int64_t twice_low, int64_t twice_high, T *g) {
  if (twice_low == twice_high) {
    *g = 0;
    return 0;
  }
  T min = (T)twice_low / 2, span = (T)(twice_high - twice_low) / 2;
  in = in - min;
  T sign = 1;
  if (in < 0)
    sign = -1, in = -in;
  T extra = fmod(in, span);
  /* the parity of the number of flips, as a float: torch's int cast overflows far away */
  bool odd = fmod(floor(in / span), (T)2) != 0;
  *g = odd ? -sign : sign;
  return odd ? span - extra + min : extra + min;
}

/* A position far outside (NaN, infinite, or beyond int) becomes -100: outside every image. */
static inline T GS__FN(safe_position)(T x) {
  return x > (T)(INT_MAX - 1) || x < (T)INT_MIN || !isfinite(x) ? (T)-100 : x;
}

/* a pixel position moved by the padding mode (*g: its derivative) */
static inline T GS__FN(pad_position)(T x, int64_t size, gs_grid_padding pad, bool align, T *g) {
  T g_clip = 1, g_refl = 1;
  if (pad == GS_GRID_PADDING_BORDER) {
    x = GS__FN(clip)(x, size, &g_clip);
  } else if (pad == GS_GRID_PADDING_REFLECTION) {
    x = align ? GS__FN(reflect)(x, 0, 2 * (size - 1), &g_refl)
              : GS__FN(reflect)(x, -1, 2 * size - 1, &g_refl);
    x = GS__FN(clip)(x, size, &g_clip);
  }
  *g = g_refl * g_clip;
  return GS__FN(safe_position)(x);
}

/* The pixel the padded position x reads along a dim of size, or -1 outside it. */
static inline int64_t GS__FN(pixel)(T x, int64_t size) {
  int64_t i = (int64_t)x; /* x is floor'd or rounded already, within int's range */
  return x >= 0 && i < size ? i : -1;
}

/* The cubic convolution's 4 weights for a tap at fraction t past the second tap (A = -0.75),
 * and their derivatives negated (torch's get_cubic_coefficients_grad), as torch writes them. */
static inline void GS__FN(cubic_weights)(T t, T w[4]) {
  const T a = (T)-0.75;
  T x = t + 1;
  w[0] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  x = 1 - t;
  w[2] = ((a + 2) * x - (a + 3)) * x * x + 1;
  x = 2 - t;
  w[3] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}
static inline void GS__FN(cubic_weights_grad)(T t, T w[4]) {
  const T a = (T)-0.75;
  T x = -1 - t;
  w[0] = (-3 * a * x - 10 * a) * x - 8 * a;
  x = -t;
  w[1] = (-3 * (a + 2) * x - 2 * (a + 3)) * x;
  x = 1 - t;
  w[2] = (3 * (a + 2) * x - 2 * (a + 3)) * x;
  x = 2 - t;
  w[3] = (3 * a * x - 10 * a) * x + 8 * a;
}

/* The plane offset of bicubic tap (ix + di, iy + dj) after padding, or -1 for a tap that
 * reads 0. */
static inline int64_t GS__FN(cubic_tap)(const gs__grid_geom *g, T ix, T iy, int di, int dj) {
  T unused;
  T x = GS__FN(pad_position)(ix + (T)di, g->w, g->padding, g->align, &unused);
  T y = GS__FN(pad_position)(iy + (T)dj, g->h, g->padding, g->align, &unused);
  int64_t px = GS__FN(pixel)(x, g->w), py = GS__FN(pixel)(y, g->h);
  return px < 0 || py < 0 ? -1 : py * g->w + px;
}

/* Where one grid point reads: the voxel offsets (-1: reads 0) and their weights, and for the
 * grid's gradient the blend's partials along x, y (and z). */
typedef struct GS__FN(sample_at) {
  int n; /* taps: 1, 4, 8 or 16 */
  int64_t at[16];
  T w[16];
  T dw[3][16]; /* d w / d (padded) x, y, z, before the unnormalization's scale */
  T scale[3];  /* d (padded position) / d grid coordinate */
} GS__FN(sample_at);

/* The taps of the grid point xyz (g->coords values: x, y and, for a volume, z). */
static void GS__FN(locate)(const gs__grid_geom *g, const T *xyz, GS__FN(sample_at) * s) {
  const int64_t size[3] = {g->w, g->h, g->d};
  int nc = g->coords;
  T pos[3];
  for (int k = 0; k < nc; k++)
    pos[k] = GS__FN(unnormalize)(xyz[k], size[k], g->align, &s->scale[k]);
  if (g->mode == GS_GRID_SAMPLE_BICUBIC) { /* 2-D only; the taps are padded one by one */
    T x = pos[0], y = pos[1];
    T ix = floor(x), iy = floor(y), cx[4], cy[4], dx[4], dy[4];
    GS__FN(cubic_weights)(x - ix, cx), GS__FN(cubic_weights)(y - iy, cy);
    GS__FN(cubic_weights_grad)(x - ix, dx), GS__FN(cubic_weights_grad)(y - iy, dy);
    s->n = 16;
    for (int j = 0; j < 4; j++)
      for (int i = 0; i < 4; i++) {
        int k = j * 4 + i;
        s->at[k] = GS__FN(cubic_tap)(g, ix, iy, i - 1, j - 1);
        s->w[k] = cx[i] * cy[j];
        s->dw[0][k] = -dx[i] * cy[j];
        s->dw[1][k] = -dy[j] * cx[i];
      }
    return;
  }
  for (int k = 0; k < nc; k++) {
    T gp;
    pos[k] = GS__FN(pad_position)(pos[k], size[k], g->padding, g->align, &gp);
    s->scale[k] *= gp;
  }
  if (g->mode == GS_GRID_SAMPLE_NEAREST) {
    int64_t at = 0;
    for (int k = nc - 1; k >= 0 && at >= 0; k--) {
      int64_t p = GS__FN(pixel)(nearbyint(pos[k]), size[k]);
      at = p < 0 ? -1 : at * size[k] + p;
    }
    s->n = 1;
    s->at[0] = at, s->w[0] = 1;
    for (int k = 0; k < nc; k++)
      s->dw[k][0] = 0;
    return;
  }
  /* (tri)linear: the 2^nc voxels around the point, x the fastest. A side's weight is written
   * as torch's 2-D kernel (1 - (x - x0)) and 3-D kernel ((x0 + 1) - x) write it, so the
   * results agree to the last bit. */
  int64_t side[3][2];
  T wt[3][2];
  for (int k = 0; k < nc; k++) {
    T x0 = floor(pos[k]), far = pos[k] - x0;
    side[k][0] = GS__FN(pixel)(x0, size[k]), side[k][1] = GS__FN(pixel)(x0 + 1, size[k]);
    wt[k][0] = nc == 3 ? (x0 + 1) - pos[k] : 1 - far, wt[k][1] = far;
  }
  s->n = 1 << nc;
  for (int t = 0; t < s->n; t++) {
    int64_t at = 0;
    for (int k = nc - 1; k >= 0 && at >= 0; k--) {
      int64_t p = side[k][(t >> k) & 1];
      at = p < 0 ? -1 : at * size[k] + p;
    }
    s->at[t] = at;
    T w = 1;
    for (int k = 0; k < nc; k++) {
      w *= wt[k][(t >> k) & 1];
      T others = (t >> k) & 1 ? 1 : -1;
      for (int j = 0; j < nc; j++)
        if (j != k)
          others *= wt[j][(t >> j) & 1];
      s->dw[k][t] = others;
    }
    s->w[t] = w;
  }
}

/* out [N, C, (Do,) Ho, Wo] from in [N, C, (D,) H, W] at grid [N, (Do,) Ho, Wo, coords], all
 * contiguous */
static void GS__FN(grid_sample_forward)(const gs__grid_geom *g, const T *in, const T *grid,
                                        T *out) {
  int64_t plane = g->d * g->h * g->w, points = g->od * g->oh * g->ow;
  for (int64_t b = 0; b < g->n; b++)
    for (int64_t p = 0; p < points; p++) {
      GS__FN(sample_at) s;
      GS__FN(locate)(g, grid + (b * points + p) * g->coords, &s);
      for (int64_t c = 0; c < g->c; c++) {
        const T *src = in + (b * g->c + c) * plane;
        T sum = 0;
        for (int k = 0; k < s.n; k++)
          sum += s.at[k] < 0 ? (T)0 : src[s.at[k]] * s.w[k];
        out[(b * g->c + c) * points + p] = sum;
      }
    }
}

/* d_in (zeroed, or NULL) and d_grid (or NULL) from gout [N, C, (Do,) Ho, Wo] */
static void GS__FN(grid_sample_backward)(const gs__grid_geom *g, const T *gout, const T *in,
                                         const T *grid, T *d_in, T *d_grid) {
  int64_t plane = g->d * g->h * g->w, points = g->od * g->oh * g->ow;
  int nc = g->coords;
  for (int64_t b = 0; b < g->n; b++)
    for (int64_t p = 0; p < points; p++) {
      GS__FN(sample_at) s;
      GS__FN(locate)(g, grid + (b * points + p) * nc, &s);
      T gsum[3] = {0, 0, 0};
      for (int64_t c = 0; c < g->c; c++) {
        int64_t at = (b * g->c + c) * plane;
        T go = gout[(b * g->c + c) * points + p];
        for (int k = 0; k < s.n; k++) {
          if (s.at[k] < 0)
            continue;
          if (d_in)
            d_in[at + s.at[k]] += s.w[k] * go;
          T v = in[at + s.at[k]];
          for (int e = 0; e < nc; e++)
            gsum[e] += v * s.dw[e][k] * go;
        }
      }
      if (d_grid)
        for (int e = 0; e < nc; e++)
          d_grid[(b * points + p) * nc + e] =
              g->mode == GS_GRID_SAMPLE_NEAREST ? 0 : gsum[e] * s.scale[e];
    }
}

#undef GS__FN
#undef GS__GLUE
#undef GS__GLUE_
