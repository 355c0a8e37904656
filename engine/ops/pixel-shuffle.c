/* pixel-shuffle.c: torch.pixel_shuffle ([*, C r^2, H, W] to [*, C, H r, W r]: each r x r block
 * of the output from r^2 channels) and its inverse torch.pixel_unshuffle.
 *
 * Each is a reshape, a permute and a reshape (a copy), done with grad mode off and recorded as
 * one node, as torch records them (PixelShuffleBackward0, PixelUnshuffleBackward0); each one's
 * gradient is the other op, so both differentiate again.
 */
#include "ops-impl.h"

/* d pixel_shuffle(t, r) = pixel_unshuffle(g, r), and the other way round (ints[0]: r) */
static void pixel_shuffle_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, gs_pixel_unshuffle(g, n->ints[0]));
}
GS__BACKWARD_TWICE(PixelShuffleBackward, pixel_shuffle_backward);

static void pixel_unshuffle_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, gs_pixel_shuffle(g, n->ints[0]));
}
GS__BACKWARD_TWICE(PixelUnshuffleBackward, pixel_unshuffle_backward);

/* Whether t [*, C, H, W] can be shuffled by r (shuffle) or unshuffled; reports why not. */
static bool check_rearrange(const gs__tensor *t, int64_t r, bool shuffle, const char *fn) {
  if (t->ndim < 3 || t->ndim > GS_MAX_DIMS - 2) {
    gs__error(GS_ERR_SHAPE, fn, "expected an input [*, C, H, W] of 3 to %d dims, got %d-D",
              GS_MAX_DIMS - 2, t->ndim);
    return false;
  }
  if (r <= 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a positive factor, got %lld", (long long)r);
    return false;
  }
  const int64_t *s = t->shape + t->ndim - 3;
  int64_t r2;
  if (shuffle && (__builtin_mul_overflow(r, r, &r2) || s[0] % r2 != 0)) {
    gs__error(GS_ERR_SHAPE, fn,
              "expected channels (dim -3) divisible by the square of the factor %lld, got %lld",
              (long long)r, (long long)s[0]);
    return false;
  }
  int64_t grown;
  if (!shuffle && (__builtin_mul_overflow(r, r, &r2) || __builtin_mul_overflow(s[0], r2, &grown))) {
    gs__error(GS_ERR_ARGUMENT, fn, "the factor %lld gives more channels than fit in 64 bits",
              (long long)r);
    return false;
  }
  if (!shuffle && (s[1] % r != 0 || s[2] % r != 0)) {
    gs__error(GS_ERR_SHAPE, fn, "expected height and width divisible by %lld, got %lld x %lld",
              (long long)r, (long long)s[1], (long long)s[2]);
    return false;
  }
  return true;
}

/* The rearranged copy of t, recorded as kind. */
static gs_tensor rearrange(gs_tensor h, int64_t r, bool shuffle, const gs__node_kind *kind,
                           const char *fn) {
  gs__tensor *t = gs__lookup(h, fn);
  if (!t || !check_rearrange(t, r, shuffle, fn))
    return GS_NO_TENSOR;
  int lead = t->ndim - 3;
  int64_t c = t->shape[lead], ht = t->shape[lead + 1], w = t->shape[lead + 2];
  int64_t split[GS_MAX_DIMS], joined[GS_MAX_DIMS];
  int order[GS_MAX_DIMS];
  for (int d = 0; d < lead; d++) {
    split[d] = joined[d] = t->shape[d];
    order[d] = d;
  }
  int64_t *s = split + lead, *j = joined + lead;
  int *o = order + lead;
  if (shuffle) { /* [C/r^2, r, r, H, W] -> [C/r^2, H, r, W, r] */
    s[0] = c / (r * r), s[1] = r, s[2] = r, s[3] = ht, s[4] = w;
    j[0] = c / (r * r), j[1] = ht * r, j[2] = w * r;
    o[0] = lead, o[1] = lead + 3, o[2] = lead + 1, o[3] = lead + 4, o[4] = lead + 2;
  } else { /* [C, H/r, r, W/r, r] -> [C, r, r, H/r, W/r] */
    s[0] = c, s[1] = ht / r, s[2] = r, s[3] = w / r, s[4] = r;
    j[0] = c * r * r, j[1] = ht / r, j[2] = w / r;
    o[0] = lead, o[1] = lead + 2, o[2] = lead + 4, o[3] = lead + 1, o[4] = lead + 3;
  }
  gs_no_grad_begin();
  gs_tensor a = gs_reshape(h, split, lead + 5);
  gs_tensor b = a.id ? gs_permute(a, order, lead + 5) : GS_NO_TENSOR;
  gs_tensor out = b.id ? gs_reshape(b, joined, lead + 3) : GS_NO_TENSOR;
  if (out.id && gs_storage_id(out) == gs_storage_id(h)) { /* r 1: still a view of t */
    gs_tensor copy = gs_clone(out);
    gs_dispose(out);
    out = copy;
  }
  gs_no_grad_end();
  if (a.id)
    gs_dispose(a);
  if (b.id)
    gs_dispose(b);
  gs__node *n = gs__record_result(kind, out, 1, (const gs__tensor *[]){t}, 0, fn);
  if (n)
    n->ints[0] = r;
  return out;
}

gs_tensor gs_pixel_shuffle(gs_tensor t, int64_t upscale_factor) {
  return rearrange(t, upscale_factor, true, &PixelShuffleBackward, "pixel_shuffle");
}

gs_tensor gs_pixel_unshuffle(gs_tensor t, int64_t downscale_factor) {
  return rearrange(t, downscale_factor, false, &PixelUnshuffleBackward, "pixel_unshuffle");
}
