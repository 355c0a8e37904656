/* recurrent-kernel.h: the time loop of a recurrent layer (one direction), forward and
 * backward, for one floating type. recurrent.c includes it once per dtype with REAL (float or
 * double), SUFFIX (f32, f64), GEMM (cblas_sgemm, cblas_dgemm), EXP and TANH defined: the math
 * is written once and the two copies differ only in their type.
 *
 * Rows: the packed layout. Step t's rows start at off[t] and hold its bs[t] active sequences,
 * which are always the first bs[t] of the batch (sequences are sorted longest first). The
 * state (h, and c for LSTM) is one [B, H] matrix: a step reads and rewrites its first bs[t]
 * rows, so rows a step does not touch keep the state their sequence ended with (forward
 * direction) or has not yet started from (reverse direction, where h0 waits in them). That
 * single rule makes the final state h_n and both directions come out of the same loop.
 *
 * Per row, the forward writes the work row backward needs (see recurrent.c's layout), so the
 * backward is elementwise per step plus one GEMM per step for the recurrent gradient, and
 * one GEMM for all of W_hh's gradient at the end. The LSTM's work row keeps tanh(c), which is
 * all the backward needs of c: it is not computed twice.
 *
 * With RK_VECTOR set (f32) and AVX-512 at hand, a row's gate math is recurrent-rows.h's,
 * which computes the same values as the loops here, bit for bit, and the steps' products are
 * recurrent-gemm.h's over W_hh packed once per call (sgemm when that copy cannot be had).
 */

#define RK_CAT2(a, b) a##_##b
#define RK_CAT(a, b) RK_CAT2(a, b)
#define RK(name) RK_CAT(name, SUFFIX)

static inline REAL RK(sigm)(REAL x) { return (REAL)1 / ((REAL)1 + EXP(-x)); }

/* gates [n, G*H] = h[0:n] @ W_hh^T plus the input projection xs (LSTM, RNN) or plus b_hh
 * (GRU, whose reset gate multiplies the hidden part alone): through wpack, W_hh^T packed for
 * recurrent-gemm.h, when there is one (bias_row: GRU's b_hh or zeros, so that 0 + x keeps
 * sgemm's signs of zero). */
static void RK(step_gates)(const rec_plan *p, int64_t n, const REAL *xs, const REAL *h,
                           const REAL *whh, const REAL *bhh, const float *wpack,
                           const float *bias_row, REAL *gates) {
  const int64_t H = p->hidden, GH = p->gate_width;
  const bool gru = p->mode == GS_RNN_GRU;
#if RK_VECTOR
  if (wpack) {
    gs__step_gemm_avx512(n, GH, H, h, H, wpack, gru ? bias_row : xs, gru ? 0 : GH, gates, GH);
    return;
  }
#else
  (void)wpack, (void)bias_row;
#endif
  if (gru) {
    for (int64_t j = 0; j < n; j++)
      for (int64_t k = 0; k < GH; k++)
        gates[j * GH + k] = bhh ? bhh[k] : (REAL)0;
  } else {
    memcpy(gates, xs, sizeof(REAL) * (size_t)(n * GH));
  }
  GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)n, (blasint)GH, (blasint)H, (REAL)1, h,
       (blasint)H, whh, (blasint)H, (REAL)1, gates, (blasint)GH);
}

/* Forward. x: [rows, G*H] input projections (biases in, and for LSTM and RNN b_hh too);
 * h0, c0: [B, H]; whh: [G*H, H]; bhh: [G*H] (GRU only, may be NULL); out: [rows + B (+ B), H]
 * (outputs, final h, final c); work: [rows, W]; gates: [B, G*H] scratch. */
static void RK(recurrence_forward)(const rec_plan *p, const REAL *x, const REAL *h0,
                                   const REAL *c0, const REAL *whh, const REAL *bhh, REAL *out,
                                   REAL *work, REAL *gates) {
  const int64_t H = p->hidden, GH = p->gate_width, W = p->work_width, B = p->batch;
  REAL *h = out + p->rows * H, *c = h + B * H;
  float *wpack = NULL, *bias_row = NULL; /* step_gates' (f32 with AVX-512) */
#if RK_VECTOR
  const bool vec = gs__cpu_has_avx512f();
  if (vec) {
    wpack = aligned_alloc(64, sizeof(float) * gs__step_gemm_packed_size(H, GH));
    bias_row = p->mode == GS_RNN_GRU ? calloc((size_t)GH, sizeof(float)) : NULL;
    if (wpack && (p->mode != GS_RNN_GRU || bias_row))
      gs__step_gemm_pack_avx512(whh, H, GH, true, H, wpack);
    else
      free(wpack), wpack = NULL; /* sgemm then */
    if (bias_row && bhh)
      memcpy(bias_row, bhh, sizeof(float) * (size_t)GH);
  }
#endif
  memcpy(h, h0, sizeof(REAL) * (size_t)(B * H));
  if (p->mode == GS_RNN_LSTM)
    memcpy(c, c0, sizeof(REAL) * (size_t)(B * H));
  for (int64_t s = 0; s < p->steps; s++) {
    int64_t t = p->reverse ? p->steps - 1 - s : s, n = p->bs[t], r0 = p->off[t];
    const REAL *xs = x + r0 * GH;
    RK(step_gates)(p, n, xs, h, whh, bhh, wpack, bias_row, gates);
    for (int64_t j = 0; j < n; j++) {
      const REAL *g = gates + j * GH;
      REAL *w = work + (r0 + j) * W, *hp = w + W - H, *hj = h + j * H, *o = out + (r0 + j) * H;
      memcpy(hp, hj, sizeof(REAL) * (size_t)H);
#if RK_VECTOR
      if (vec && p->mode != GS_RNN_RELU) {
        if (p->mode == GS_RNN_LSTM)
          gs__lstm_forward_row_avx512(g, w, c + j * H, hj, o, H);
        else if (p->mode == GS_RNN_GRU)
          gs__gru_forward_row_avx512(xs + j * GH, g, hp, w, hj, o, H);
        else
          gs__rnn_tanh_forward_row_avx512(g, w, hj, o, H);
        continue;
      }
#endif
      if (p->mode == GS_RNN_LSTM) {
        REAL *cj = c + j * H;
        for (int64_t k = 0; k < H; k++) {
          REAL i = RK(sigm)(g[k]), f = RK(sigm)(g[H + k]), gg = TANH(g[2 * H + k]),
               og = RK(sigm)(g[3 * H + k]);
          REAL cp = cj[k], cn = f * cp + i * gg, tc = TANH(cn), hn = og * tc;
          w[k] = i, w[H + k] = f, w[2 * H + k] = gg, w[3 * H + k] = og;
          w[4 * H + k] = tc, w[5 * H + k] = cp;
          cj[k] = cn, hj[k] = hn, o[k] = hn;
        }
      } else if (p->mode == GS_RNN_GRU) {
        const REAL *xj = xs + j * GH;
        for (int64_t k = 0; k < H; k++) {
          REAL r = RK(sigm)(xj[k] + g[k]), z = RK(sigm)(xj[H + k] + g[H + k]);
          REAL nn = TANH(xj[2 * H + k] + r * g[2 * H + k]);
          REAL hn = nn + z * (hp[k] - nn);
          w[k] = r, w[H + k] = z, w[2 * H + k] = nn, w[3 * H + k] = g[2 * H + k];
          hj[k] = hn, o[k] = hn;
        }
      } else {
        for (int64_t k = 0; k < H; k++) {
          REAL v = g[k];
          REAL hn = p->mode == GS_RNN_TANH ? TANH(v) : (v > 0 ? v : (REAL)0);
          w[k] = hn;
          hj[k] = hn, o[k] = hn;
        }
      }
    }
  }
  free(wpack);
  free(bias_row);
}

/* Backward. gout: [rows + B (+ B), H], the gradient of forward's out. Writes dx [rows, G*H],
 * dh0 and dc0 [B, H] (dc0 LSTM only), dwhh [G*H, H] and dbhh [G*H] (GRU only; NULL when not
 * wanted). dh, dc: [B, H] scratch; dhg: [rows, G*H] scratch for GRU (the hidden side's
 * pre-activation gradients, which differ from the input side's there), NULL otherwise. */
static void RK(recurrence_backward)(const rec_plan *p, const REAL *gout, const REAL *work,
                                    const REAL *whh, REAL *dx, REAL *dh, REAL *dc, REAL *dhg,
                                    REAL *dwhh, REAL *dbhh) {
  const int64_t H = p->hidden, GH = p->gate_width, W = p->work_width, B = p->batch;
  /* The state's gradient starts as the final state's and ends as the initial state's. */
  memcpy(dh, gout + p->rows * H, sizeof(REAL) * (size_t)(B * H));
  if (p->mode == GS_RNN_LSTM)
    memcpy(dc, gout + (p->rows + B) * H, sizeof(REAL) * (size_t)(B * H));
  REAL *hidden_side = p->mode == GS_RNN_GRU ? dhg : dx;
  float *wpack = NULL; /* W_hh packed for recurrent-gemm.h (f32 with AVX-512) */
#if RK_VECTOR
  const bool vec = gs__cpu_has_avx512f();
  if (vec && (wpack = aligned_alloc(64, sizeof(float) * gs__step_gemm_packed_size(GH, H))))
    gs__step_gemm_pack_avx512(whh, GH, H, false, H, wpack);
#endif
  for (int64_t s = p->steps - 1; s >= 0; s--) {
    int64_t t = p->reverse ? p->steps - 1 - s : s, n = p->bs[t], r0 = p->off[t];
    for (int64_t j = 0; j < n; j++) {
      const REAL *w = work + (r0 + j) * W, *hp = w + W - H, *go = gout + (r0 + j) * H;
      REAL *dxj = dx + (r0 + j) * GH, *dhj = dh + j * H;
#if RK_VECTOR
      if (vec && p->mode == GS_RNN_LSTM) {
        gs__lstm_backward_row_avx512(w, go, dhj, dc + j * H, dxj, H);
        continue;
      }
      if (vec && p->mode == GS_RNN_GRU) {
        gs__gru_backward_row_avx512(w, hp, go, dhj, dxj, dhg + (r0 + j) * GH, H);
        continue;
      }
#endif
      if (p->mode == GS_RNN_LSTM) {
        REAL *dcj = dc + j * H;
        for (int64_t k = 0; k < H; k++) {
          REAL i = w[k], f = w[H + k], gg = w[2 * H + k], og = w[3 * H + k];
          REAL tc = w[4 * H + k], cp = w[5 * H + k];
          REAL d = go[k] + dhj[k];
          REAL dcell = dcj[k] + d * og * ((REAL)1 - tc * tc);
          dxj[k] = dcell * gg * i * ((REAL)1 - i);
          dxj[H + k] = dcell * cp * f * ((REAL)1 - f);
          dxj[2 * H + k] = dcell * i * ((REAL)1 - gg * gg);
          dxj[3 * H + k] = d * tc * og * ((REAL)1 - og);
          dcj[k] = dcell * f;
        }
      } else if (p->mode == GS_RNN_GRU) {
        REAL *dhgj = dhg + (r0 + j) * GH;
        for (int64_t k = 0; k < H; k++) {
          REAL r = w[k], z = w[H + k], nn = w[2 * H + k], hgn = w[3 * H + k];
          REAL d = go[k] + dhj[k];
          REAL dn = d * ((REAL)1 - z) * ((REAL)1 - nn * nn);
          REAL dr = dn * hgn * r * ((REAL)1 - r), dz = d * (hp[k] - nn) * z * ((REAL)1 - z);
          dxj[k] = dhgj[k] = dr;
          dxj[H + k] = dhgj[H + k] = dz;
          dxj[2 * H + k] = dn;
          dhgj[2 * H + k] = dn * r;
          dhj[k] = d * z; /* the direct path h' = ... + z * h; the GEMM below adds the rest */
        }
      } else {
        for (int64_t k = 0; k < H; k++) {
          REAL hn = w[k], d = go[k] + dhj[k];
          dxj[k] = p->mode == GS_RNN_TANH ? d * ((REAL)1 - hn * hn) : (hn > 0 ? d : (REAL)0);
        }
      }
    }
    /* The previous state's gradient through W_hh (GRU keeps its direct path: beta 1). */
#if RK_VECTOR
    if (wpack) {
      gs__step_gemm_avx512(n, H, GH, hidden_side + r0 * GH, GH, wpack,
                           p->mode == GS_RNN_GRU ? dh : NULL, H, dh, H);
      continue;
    }
#endif
    GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)n, (blasint)H, (blasint)GH,
         (REAL)1, hidden_side + r0 * GH, (blasint)GH, whh, (blasint)H,
         p->mode == GS_RNN_GRU ? (REAL)1 : (REAL)0, dh, (blasint)H);
  }
  free(wpack);
  /* Every row's hidden-side gradient times the state it read: all of W_hh's gradient. */
  if (dwhh)
    GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, (blasint)GH, (blasint)H, (blasint)p->rows,
         (REAL)1, hidden_side, (blasint)GH, work + W - H, (blasint)W, (REAL)0, dwhh,
         (blasint)H);
  if (dbhh) {
    for (int64_t k = 0; k < GH; k++)
      dbhh[k] = 0;
    for (int64_t r = 0; r < p->rows; r++)
      for (int64_t k = 0; k < GH; k++)
        dbhh[k] += dhg[r * GH + k];
  }
}

#undef RK
#undef RK_CAT
#undef RK_CAT2
