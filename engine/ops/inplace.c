/* inplace.c: in-place forms (add_, mul_, fill_, copy_, clamp_, ...).
 *
 * Every in-place write refuses a destination whose elements overlap (an expanded tensor),
 * copies an operand that aliases the destination (so t += t.T reads the old values), then
 * goes through gs__begin_write: autograd's check (no in-place writes into leaves that require
 * grad), copy-on-write materialisation and the version bump. All checks come before the bump,
 * so a refused call changes nothing.
 *
 * With autograd recording, the write rewrites the tensor's history as PyTorch does: the op's
 * node (the same kinds as the out-of-place ops) takes the tensor's previous grad_fn as its
 * first input and becomes its new grad_fn; through a view, it is wrapped in a CopySlices node
 * that becomes the base's (engine/autograd/view-history.c). Where a formula needs the value from before the
 * write (mul_, div_, clamp_), the op saves an O(1) copy-on-write clone taken just before it:
 * the write itself then makes the copy.
 */
#include <math.h>
#include <string.h>

#include "ops-impl.h"

/* An expanded (stride-0) destination would write one element several times. */
bool gs__check_writable(const gs__tensor *t, const char *fn) {
  for (int i = 0; i < t->ndim; i++) {
    if (t->strides[i] == 0 && t->shape[i] > 1) {
      gs__error(GS_ERR_ARGUMENT, fn,
                "cannot write in place into an expanded tensor: dim %d (size %lld) has stride "
                "0, so several elements share one memory location; clone it first",
                i, (long long)t->shape[i]);
      return false;
    }
  }
  return true;
}

/* Prepares operand src for a write into t: broadcast check, dtype cast to t's dtype, and a
 * private copy when it shares t's storage. *tmp_used says whether *tmp must be released. */
static bool prepare_operand(const gs__tensor *t, const gs__tensor *src, gs__tensor *tmp,
                            bool *tmp_used, bool allow_any_dtype, const char *fn) {
  int64_t strides[GS_MAX_DIMS];
  *tmp_used = false;
  if (!gs__broadcast_strides(src, t->shape, t->ndim, strides)) {
    char a[GS__SHAPE_STR], b[GS__SHAPE_STR];
    gs__error(GS_ERR_SHAPE, fn,
              "operand of shape %s cannot be broadcast to the destination's shape %s",
              gs__shape_str(b, src->shape, src->ndim), gs__shape_str(a, t->shape, t->ndim));
    return false;
  }
  if (!allow_any_dtype && gs__dtype_category(src->dtype) > gs__dtype_category(t->dtype)) {
    gs__error(GS_ERR_DTYPE, fn,
              "result type %s cannot be written in place into a tensor of dtype %s (it would "
              "lose the %s)",
              gs_dtype_name(src->dtype), gs_dtype_name(t->dtype),
              gs__dtype_category(src->dtype) == 2 ? "fraction" : "integer values");
    return false;
  }
  if (src->dtype != t->dtype || src->storage == t->storage) {
    /* gs__as_contiguous would share a contiguous same-dtype aliasing operand: force a copy. */
    if (src->dtype == t->dtype) {
      if (!gs__tensor_init(tmp, src->dtype, src->shape, src->ndim, fn))
        return false;
      gs__copy_into(tmp, src);
    } else if (!gs__as_contiguous(src, t->dtype, tmp, fn)) {
      return false;
    }
    *tmp_used = true;
  }
  return true;
}

/* A copy-on-write clone of t's current value (unregistered), for a formula that needs the
 * value from before an in-place write. */
static bool clone_before_write(const gs__tensor *t, gs__tensor *old, const char *fn) {
  *old = *t;
  old->storage = gs__storage_share_cow(t->storage, false);
  if (!old->storage) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not allocate the storage record");
    return false;
  }
  return true;
}

static void inplace_binary(gs__binop op, gs_tensor ht, gs_tensor hb, const char *fn) {
  gs__tensor *t = gs__lookup(ht, fn);
  gs__tensor *b = t ? gs__lookup(hb, fn) : NULL;
  if (!b || !gs__check_writable(t, fn))
    return;
  if (!gs__binary_loop(op, t->dtype) || (op == GS__DIV && !gs_dtype_is_floating(t->dtype))) {
    gs__error(GS_ERR_DTYPE, fn,
              "cannot %s in place into a tensor of dtype %s%s", gs__binop_name(op),
              gs_dtype_name(t->dtype),
              op == GS__DIV ? " (true division gives a floating result)" : "");
    return;
  }
  gs__tensor tmp;
  bool tmp_used;
  if (!prepare_operand(t, b, &tmp, &tmp_used, false, fn))
    return;
  if (op == GS__POW && gs_dtype_is_integer(t->dtype) &&
      !gs__check_int_operand(tmp_used ? &tmp : b, gs__is_negative,
                             "integers to negative integer powers are not allowed (exponent ",
                             fn)) {
    if (tmp_used)
      gs__tensor_release(&tmp);
    return;
  }
  bool record = gs__any_requires_grad(2, (const gs__tensor *[]){t, b});
  bool needs_old = record && (op == GS__MUL || op == GS__DIV || op == GS__POW);
  gs__tensor old;
  if (needs_old && !clone_before_write(t, &old, fn)) {
    if (tmp_used)
      gs__tensor_release(&tmp);
    return;
  }
  /* The destination is also the left operand: out = t op b, written through t. */
  if (gs__begin_write(t, b->ag.requires_grad, fn)) {
    gs__run_binary(op, t->dtype, t, t, tmp_used ? &tmp : b);
    const gs__node_kind *kind = op == GS__ADD   ? &AddBackward
                                : op == GS__SUB ? &SubBackward
                                : op == GS__MUL ? &MulBackward
                                : op == GS__POW ? &PowBackward
                                                : &DivBackward;
    /* pow's formula reads its output too; here it recomputes it from the two saved operands:
     * t, as just written, is also input 0's handle, so a save of it would be taken for the
     * input (and a double backward would follow the wrong history). */
    int n_saved = needs_old ? 2 : 0;
    gs__node *n = record ? gs__record(kind, t, 2, (const gs__tensor *[]){t, b}, n_saved) : NULL;
    if (n && needs_old) {
      gs__save(n, 0, &old);
      gs__save(n, 1, b);
    }
  }
  if (needs_old)
    gs__tensor_release(&old);
  if (tmp_used)
    gs__tensor_release(&tmp);
}

static void inplace_binary_scalar(gs__binop op, gs_tensor ht, double s, const char *fn) {
  gs__tensor *t = gs__lookup(ht, fn);
  if (!t || !gs__check_writable(t, fn))
    return;
  if (!gs_dtype_is_floating(t->dtype) && s != floor(s)) {
    gs__error(GS_ERR_DTYPE, fn,
              "result type f32 cannot be written in place into a tensor of dtype %s (scalar "
              "%g has a fraction)",
              gs_dtype_name(t->dtype), s);
    return;
  }
  if (!gs__binary_loop(op, t->dtype)) {
    gs__error(GS_ERR_DTYPE, fn, "cannot %s in place into a tensor of dtype %s",
              gs__binop_name(op),
              gs_dtype_name(t->dtype));
    return;
  }
  gs__scalar_box box;
  const gs__tensor *st = gs__scalar_box_init(&box, t->dtype, s);
  bool record = gs__any_requires_grad(1, (const gs__tensor *[]){t});
  if (gs__begin_write(t, false, fn)) {
    gs__run_binary(op, t->dtype, t, t, st);
    gs__node *n = record ? gs__record(op == GS__ADD ? &AddScalarBackward : &MulScalarBackward, t,
                                      1, (const gs__tensor *[]){t}, 0)
                         : NULL;
    if (n)
      n->reals[0] = s;
  }
}

void gs_add_(gs_tensor t, gs_tensor b) { inplace_binary(GS__ADD, t, b, "add_"); }
void gs_sub_(gs_tensor t, gs_tensor b) { inplace_binary(GS__SUB, t, b, "sub_"); }
void gs_mul_(gs_tensor t, gs_tensor b) { inplace_binary(GS__MUL, t, b, "mul_"); }
void gs_div_(gs_tensor t, gs_tensor b) { inplace_binary(GS__DIV, t, b, "div_"); }
void gs_pow_(gs_tensor t, gs_tensor b) { inplace_binary(GS__POW, t, b, "pow_"); }
void gs_add_scalar_(gs_tensor t, double s) { inplace_binary_scalar(GS__ADD, t, s, "add_scalar_"); }
void gs_mul_scalar_(gs_tensor t, double s) { inplace_binary_scalar(GS__MUL, t, s, "mul_scalar_"); }

/* d(t + alpha * b) = g, alpha * g (alpha in reals[0]) */
static void add_scaled_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  if (gs__needs_grad(n, 0))
    grads[0] = gs__reduce_grad_through(n, 0, g);
  if (gs__needs_grad(n, 1))
    grads[1] = gs__reduce_grad(n, 1, gs_mul_scalar(g, n->reals[0]));
}
GS__BACKWARD_TWICE(AddScaledBackward, add_scaled_backward);

void gs_add_scaled_(gs_tensor ht, gs_tensor hb, double alpha) {
  const char *fn = "add_scaled_";
  gs__tensor *t = gs__lookup(ht, fn);
  gs__tensor *b = t ? gs__lookup(hb, fn) : NULL;
  if (!b || !gs__check_writable(t, fn))
    return;
  if (!gs__add_scaled_loop(t->dtype)) {
    gs__error(GS_ERR_DTYPE, fn, "cannot add_scaled_ in place into a tensor of dtype %s",
              gs_dtype_name(t->dtype));
    return;
  }
  if (!gs_dtype_is_floating(t->dtype) && (!isfinite(alpha) || alpha != floor(alpha))) {
    gs__error(GS_ERR_DTYPE, fn, "expected an integral alpha for a tensor of dtype %s, got %g",
              gs_dtype_name(t->dtype), alpha);
    return;
  }
  gs__tensor tmp;
  bool tmp_used;
  if (!prepare_operand(t, b, &tmp, &tmp_used, false, fn))
    return;
  const gs__tensor *src = tmp_used ? &tmp : b;
  bool record = gs__any_requires_grad(2, (const gs__tensor *[]){t, b});
  if (gs__begin_write(t, b->ag.requires_grad, fn)) {
    int64_t strides[3][GS_MAX_DIMS];
    memcpy(strides[0], t->strides, sizeof strides[0]);
    memcpy(strides[1], t->strides, sizeof strides[1]);
    gs__broadcast_strides(src, t->shape, t->ndim, strides[2]);
    char *data[3] = {gs__tensor_data(t), gs__tensor_data(t), gs__tensor_data(src)};
    size_t es = gs__elsize(t->dtype), sizes[3] = {es, es, es};
    gs__scalar_box alpha_box; /* alpha in t's dtype, as the loop reads it */
    gs__scalar_box_init(&alpha_box, t->dtype, alpha);
    gs__iter_run(3, data, (const int64_t(*)[GS_MAX_DIMS])strides, sizes, t->shape, t->ndim,
                 gs__add_scaled_loop(t->dtype), &alpha_box.value);
    gs__node *n = record ? gs__record(&AddScaledBackward, t, 2, (const gs__tensor *[]){t, b}, 0)
                         : NULL;
    if (n)
      n->reals[0] = alpha;
  }
  if (tmp_used)
    gs__tensor_release(&tmp);
}

static void fill(gs_tensor ht, double value, const char *fn) {
  gs__tensor *t = gs__lookup(ht, fn);
  if (!t || !gs__check_writable(t, fn))
    return;
  gs__scalar_box box;
  const gs__tensor *st = gs__scalar_box_init(&box, t->dtype, value);
  bool record = gs__any_requires_grad(1, (const gs__tensor *[]){t});
  if (gs__begin_write(t, false, fn)) {
    gs__copy_into(t, st);
    if (record) /* the old value no longer matters: its history gets a zero gradient */
      gs__record(&FillBackward, t, 1, (const gs__tensor *[]){t}, 0);
  }
}

/* fill_: the previous value is overwritten, so its history receives a zero gradient. */
static void fill_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  grads[0] = gs__reduce_grad(n, 0, gs_zeros_like(g));
}
GS__BACKWARD_TWICE(FillBackward, fill_backward);

/* copy_(t, src): t's old value gets zero, src gets g (summed to its shape, in its dtype). */
static void copy_backward(gs__node *n, gs_tensor g, gs_tensor *grads) {
  if (gs__needs_grad(n, 0))
    grads[0] = gs__reduce_grad(n, 0, gs_zeros_like(g));
  if (gs__needs_grad(n, 1))
    grads[1] = gs__reduce_grad_through(n, 1, g);
}
GS__BACKWARD_TWICE(CopyBackward, copy_backward);

void gs_zero_(gs_tensor t) { fill(t, 0.0, "zero_"); }
void gs_fill_(gs_tensor t, double value) { fill(t, value, "fill_"); }

void gs_copy_(gs_tensor ht, gs_tensor hsrc) {
  const char *fn = "copy_";
  gs__tensor *t = gs__lookup(ht, fn);
  gs__tensor *src = t ? gs__lookup(hsrc, fn) : NULL;
  if (!src || !gs__check_writable(t, fn))
    return;
  gs__tensor tmp;
  bool tmp_used = false;
  /* copy_ converts any dtype (as Tensor.copy_); only aliasing needs a private copy. */
  if (!prepare_operand(t, src, &tmp, &tmp_used, true, fn))
    return;
  bool record = gs__any_requires_grad(2, (const gs__tensor *[]){t, src}) &&
                gs_dtype_is_floating(t->dtype);
  if (gs__begin_write(t, src->ag.requires_grad, fn)) {
    gs__copy_into(t, tmp_used ? &tmp : src);
    if (record)
      gs__record(&CopyBackward, t, 2, (const gs__tensor *[]){t, src}, 0);
  }
  if (tmp_used)
    gs__tensor_release(&tmp);
}

/* t.op_() for a unary op with a node: the op runs in place and its own node (SinBackward0
 * for sin_) becomes t's grad_fn, as in PyTorch. A formula that reads the input saves a
 * copy-on-write clone taken before the write; one that reads the output saves t itself, so a
 * later write into t is caught at backward, as PyTorch's version check does. */
static void unary_inplace(gs__unop op, gs_tensor ht, const char *fn) {
  gs__tensor *t = gs__lookup(ht, fn);
  if (!t || !gs__check_writable(t, fn))
    return;
  if (!gs__unary_loop(op, t->dtype)) {
    /* An integer tensor would need a floating result (torch's message) */
    gs__error(GS_ERR_DTYPE, fn, "result type %s can't be cast to the desired output type %s",
              gs_dtype_name(GS_F32), gs_dtype_name(t->dtype));
    return;
  }
  gs__unary_save save;
  const gs__node_kind *kind = gs__unary_rule(op, &save);
  bool record = kind && gs__any_requires_grad(1, (const gs__tensor *[]){t});
  gs__tensor old;
  if (record && save == GS__SAVE_INPUT && !clone_before_write(t, &old, fn))
    return;
  if (gs__begin_write(t, false, fn)) {
    gs__run_unary(op, t->dtype, t, t, NULL);
    gs__node *n =
        record ? gs__record(kind, t, 1, (const gs__tensor *[]){t}, save == GS__SAVE_NOTHING ? 0 : 1)
               : NULL;
    if (n && save == GS__SAVE_INPUT)
      gs__save(n, 0, &old);
    else if (n && save == GS__SAVE_OUTPUT)
      gs__save_result(n, 0, t);
  }
  if (record && save == GS__SAVE_INPUT)
    gs__tensor_release(&old);
}

#define UNARY_INPLACE(NAME, OP)                                                                    \
  void gs_##NAME##_(gs_tensor t) { unary_inplace(OP, t, #NAME "_"); }
UNARY_INPLACE(neg, GS__NEG)
UNARY_INPLACE(abs, GS__ABS)
UNARY_INPLACE(exp, GS__EXP)
UNARY_INPLACE(log, GS__LOG)
UNARY_INPLACE(sqrt, GS__SQRT)
UNARY_INPLACE(rsqrt, GS__RSQRT)
UNARY_INPLACE(tanh, GS__TANH)
UNARY_INPLACE(sigmoid, GS__SIGMOID)
UNARY_INPLACE(relu, GS__RELU)
UNARY_INPLACE(sin, GS__SIN)
UNARY_INPLACE(cos, GS__COS)
UNARY_INPLACE(tan, GS__TAN)
UNARY_INPLACE(frac, GS__FRAC)
UNARY_INPLACE(reciprocal, GS__RECIPROCAL)
UNARY_INPLACE(square, GS__SQUARE)
UNARY_INPLACE(log1p, GS__LOG1P)
UNARY_INPLACE(expm1, GS__EXPM1)
UNARY_INPLACE(log2, GS__LOG2)
UNARY_INPLACE(log10, GS__LOG10)
UNARY_INPLACE(asin, GS__ASIN)
UNARY_INPLACE(acos, GS__ACOS)
UNARY_INPLACE(atan, GS__ATAN)
UNARY_INPLACE(sinh, GS__SINH)
UNARY_INPLACE(cosh, GS__COSH)
UNARY_INPLACE(erf, GS__ERF)
UNARY_INPLACE(asinh, GS__ASINH)
UNARY_INPLACE(acosh, GS__ACOSH)
UNARY_INPLACE(atanh, GS__ATANH)
UNARY_INPLACE(erfc, GS__ERFC)
UNARY_INPLACE(erfinv, GS__ERFINV)
UNARY_INPLACE(exp2, GS__EXP2)
UNARY_INPLACE(lgamma, GS__LGAMMA)
UNARY_INPLACE(digamma, GS__DIGAMMA)

void gs_clamp_(gs_tensor ht, double min, double max) {
  const char *fn = "clamp_";
  gs__tensor *t = gs__lookup(ht, fn);
  gs__unary_params p;
  if (!t || !gs__check_writable(t, fn) || !gs__clamp_params(t->dtype, min, max, &p, fn))
    return;
  if (!gs__unary_loop(GS__CLAMP, t->dtype)) {
    gs__error(GS_ERR_DTYPE, fn, "cannot clamp a %s tensor", gs_dtype_name(t->dtype));
    return;
  }
  bool record = gs__any_requires_grad(1, (const gs__tensor *[]){t});
  gs__tensor old;
  if (record && !clone_before_write(t, &old, fn))
    return;
  if (gs__begin_write(t, false, fn)) {
    gs__run_unary(GS__CLAMP, t->dtype, t, t, &p);
    gs__node *n = record ? gs__record(&ClampBackward, t, 1, (const gs__tensor *[]){t}, 1) : NULL;
    if (n) {
      gs__save(n, 0, &old);
      n->reals[0] = p.min;
      n->reals[1] = p.max;
    }
  }
  if (record)
    gs__tensor_release(&old);
}
