/* grid-sample-kernel.h: grid_sample's loops for one floating type T, their names ending in
 * SUFFIX; grid-sample.c includes it once per dtype (T float, then double), so each computes in
 * its own precision, as torch 1.13's CPU kernel (GridSamplerKernel.cpp) does.
 *
 * A grid point (x, y) in [-1, 1] is unnormalized to a pixel position, moved inside the image
 * by the padding mode (border: clipped; reflection: mirrored, then clipped) and read:
 * nearest rounds it half to even; bilinear blends the 4 pixels around it; bicubic blends the
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

/* Where one grid point reads: the pixel offsets (-1: reads 0) and their weights, and for the
 * grid's gradient the blend's partials. */
typedef struct GS__FN(sample_at) {
  int n; /* taps: 1, 4 or 16 */
  int64_t at[16];
  T w[16];
  T dwx[16], dwy[16]; /* d w / d (padded) x and y, before the unnormalization's scale */
  T sx, sy;           /* d (padded position) / d grid coordinate */
} GS__FN(sample_at);

static void GS__FN(locate)(const gs__grid_geom *g, T gx, T gy, GS__FN(sample_at) * s) {
  T scale_x, scale_y, gpx, gpy;
  T x = GS__FN(unnormalize)(gx, g->w, g->align, &scale_x);
  T y = GS__FN(unnormalize)(gy, g->h, g->align, &scale_y);
  if (g->mode == GS_GRID_SAMPLE_BICUBIC) { /* the taps are padded one by one */
    T ix = floor(x), iy = floor(y), cx[4], cy[4], dx[4], dy[4];
    GS__FN(cubic_weights)(x - ix, cx), GS__FN(cubic_weights)(y - iy, cy);
    GS__FN(cubic_weights_grad)(x - ix, dx), GS__FN(cubic_weights_grad)(y - iy, dy);
    s->n = 16;
    for (int j = 0; j < 4; j++)
      for (int i = 0; i < 4; i++) {
        int k = j * 4 + i;
        s->at[k] = GS__FN(cubic_tap)(g, ix, iy, i - 1, j - 1);
        s->w[k] = cx[i] * cy[j];
        s->dwx[k] = -dx[i] * cy[j];
        s->dwy[k] = -dy[j] * cx[i];
      }
    s->sx = scale_x, s->sy = scale_y;
    return;
  }
  x = GS__FN(pad_position)(x, g->w, g->padding, g->align, &gpx);
  y = GS__FN(pad_position)(y, g->h, g->padding, g->align, &gpy);
  s->sx = scale_x * gpx, s->sy = scale_y * gpy;
  if (g->mode == GS_GRID_SAMPLE_NEAREST) {
    int64_t px = GS__FN(pixel)(nearbyint(x), g->w), py = GS__FN(pixel)(nearbyint(y), g->h);
    s->n = 1;
    s->at[0] = px < 0 || py < 0 ? -1 : py * g->w + px;
    s->w[0] = 1, s->dwx[0] = 0, s->dwy[0] = 0;
    return;
  }
  T x0 = floor(x), y0 = floor(y);
  T e = x - x0, n = y - y0, w = 1 - e, sth = 1 - n; /* e: weight of the east column */
  int64_t xs[2] = {GS__FN(pixel)(x0, g->w), GS__FN(pixel)(x0 + 1, g->w)};
  int64_t ys[2] = {GS__FN(pixel)(y0, g->h), GS__FN(pixel)(y0 + 1, g->h)};
  T wx[2] = {w, e}, wy[2] = {sth, n};
  s->n = 4;
  for (int j = 0; j < 2; j++)
    for (int i = 0; i < 2; i++) {
      int k = j * 2 + i;
      s->at[k] = xs[i] < 0 || ys[j] < 0 ? -1 : ys[j] * g->w + xs[i];
      s->w[k] = wy[j] * wx[i];
      s->dwx[k] = (i ? 1 : -1) * wy[j];
      s->dwy[k] = (j ? 1 : -1) * wx[i];
    }
}

/* out [N, C, Ho, Wo] from in [N, C, H, W] at grid [N, Ho, Wo, 2], all contiguous */
static void GS__FN(grid_sample_forward)(const gs__grid_geom *g, const T *in, const T *grid,
                                        T *out) {
  int64_t plane = g->h * g->w, points = g->oh * g->ow;
  for (int64_t b = 0; b < g->n; b++)
    for (int64_t p = 0; p < points; p++) {
      const T *xy = grid + (b * points + p) * 2;
      GS__FN(sample_at) s;
      GS__FN(locate)(g, xy[0], xy[1], &s);
      for (int64_t c = 0; c < g->c; c++) {
        const T *src = in + (b * g->c + c) * plane;
        T sum = 0;
        for (int k = 0; k < s.n; k++)
          sum += s.at[k] < 0 ? (T)0 : src[s.at[k]] * s.w[k];
        out[(b * g->c + c) * points + p] = sum;
      }
    }
}

/* d_in (zeroed, or NULL) and d_grid (or NULL) from gout [N, C, Ho, Wo] */
static void GS__FN(grid_sample_backward)(const gs__grid_geom *g, const T *gout, const T *in,
                                         const T *grid, T *d_in, T *d_grid) {
  int64_t plane = g->h * g->w, points = g->oh * g->ow;
  for (int64_t b = 0; b < g->n; b++)
    for (int64_t p = 0; p < points; p++) {
      const T *xy = grid + (b * points + p) * 2;
      GS__FN(sample_at) s;
      GS__FN(locate)(g, xy[0], xy[1], &s);
      T gx = 0, gy = 0;
      for (int64_t c = 0; c < g->c; c++) {
        int64_t at = (b * g->c + c) * plane;
        T go = gout[(b * g->c + c) * points + p];
        for (int k = 0; k < s.n; k++) {
          if (s.at[k] < 0)
            continue;
          if (d_in)
            d_in[at + s.at[k]] += s.w[k] * go;
          T v = in[at + s.at[k]];
          gx += v * s.dwx[k] * go;
          gy += v * s.dwy[k] * go;
        }
      }
      if (d_grid) {
        T *d = d_grid + (b * points + p) * 2;
        d[0] = g->mode == GS_GRID_SAMPLE_NEAREST ? 0 : gx * s.sx;
        d[1] = g->mode == GS_GRID_SAMPLE_NEAREST ? 0 : gy * s.sy;
      }
    }
}

#undef GS__FN
#undef GS__GLUE
#undef GS__GLUE_
