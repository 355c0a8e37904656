/* test-module-dtype.c: gs_tensor_set_data (torch's `t.data = x`) and gs_module_to_dtype
 * (Module.double()/float()): handles, names, requires_grad and grads kept, values converted,
 * integer buffers untouched, recurrent modules and BatchNorm computing in the new dtype, the
 * refusals, and the log's tensor_set_data events read back. */
#include "test-util.h"

#include <glib/gstdio.h>

/* The module's parameters (at most 16) and their count. */
static int params_of(gs_module m, gs_tensor *ps, const char **names) {
  int n = gs_module_named_parameters(m, ps, names, 16);
  g_assert_cmpint(n, <=, 16);
  return n;
}

static void test_set_data_keeps_the_handle(void) {
  gs_tensor t = gs_zeros(GS_F32, (int64_t[]){2}, 1);
  gs_set_requires_grad(t, true);
  gs_tensor src = gs_full(GS_F64, (int64_t[]){3}, 1, 2.5);
  gs_tensor_set_data(t, src, NULL);
  g_assert_cmpint(gs_dtype_of(t), ==, GS_F64);
  g_assert_cmpint(gs_size(t, 0), ==, 3);
  g_assert_true(gs_requires_grad(t));
  g_assert_cmpuint(gs_storage_id(t), ==, gs_storage_id(src));
  test_assert_values(t, (int64_t[]){3}, 1, (double[]){2.5, 2.5, 2.5}, 0, 0);
  /* They share bytes and version from now on, as torch's do. */
  gs_fill_(src, 4.0);
  test_assert_values(t, (int64_t[]){3}, 1, (double[]){4, 4, 4}, 0, 0);
  g_assert_cmpint(gs_version(t), ==, gs_version(src));

  gs_tensor y = gs_mul_scalar(t, 2.0);
  EXPECT_ERROR(gs_tensor_set_data(y, src, NULL), "only a leaf's data can be replaced");
  /* A leaf view may have its data replaced, as in torch: it is then a view no more, and
   * writes into it leave its old base alone. */
  gs_tensor v = gs_select(src, 0, 1); /* src does not require grad: v is a leaf */
  g_assert_cmpuint(gs_view_base(v).id, ==, src.id);
  gs_tensor fresh = gs_full(GS_F64, (int64_t[]){2}, 1, 7.0);
  gs_tensor_set_data(v, fresh, NULL);
  g_assert_cmpuint(gs_view_base(v).id, ==, 0);
  g_assert_cmpuint(gs_storage_id(v), ==, gs_storage_id(fresh));
  gs_fill_(v, -1.0);
  test_assert_values(src, (int64_t[]){3}, 1, (double[]){4, 4, 4}, 0, 0);
  test_assert_values(fresh, (int64_t[]){2}, 1, (double[]){-1, -1}, 0, 0);
  gs_dispose(fresh);
  gs_tensor ints = gs_zeros(GS_I64, (int64_t[]){3}, 1);
  EXPECT_ERROR(gs_tensor_set_data(t, ints, NULL), "requires grad, so its data must be floating");
  g_assert_cmpint(gs_dtype_of(t), ==, GS_F64); /* a refusal changes nothing */
  DISPOSE_ALL(t, src, y, v, ints);
}

static void test_double_and_float_convert_in_place(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 3);
  gs_module root = gs_module_new("Net");
  gs_module fc = gs_linear_new(3, 2, true, &rng), bn = gs_batch_norm_new(1, 2, 1e-5, 0.1);
  gs_module_register_child(root, "fc", fc);
  gs_module_register_child(root, "bn", bn);
  gs_tensor x = gs_randn(GS_F32, (int64_t[]){4, 3}, 2, &rng);
  gs_tensor h = gs_linear_forward(fc, x), y = gs_batch_norm_forward(bn, h);
  gs_tensor loss = gs_sum(y, NULL, 0, false);
  gs_backward(loss);

  gs_tensor before[16], after[16];
  const char *names[16];
  int n = params_of(root, before, names);
  g_assert_cmpint(n, ==, 7); /* fc.weight, fc.bias, bn.weight, bn.bias, 3 running estimates */
  double *values[16], *grads[16];
  for (int i = 0; i < n; i++) {
    values[i] = test_values(before[i]);
    gs_tensor g = gs_grad(before[i]);
    grads[i] = g.id ? test_values(g) : NULL;
  }
  gs_tensor grad_handle = gs_grad(before[0]);

  g_assert_cmpint(gs_module_to_dtype(root, GS_F64), ==, 6); /* not num_batches_tracked */
  g_assert_cmpint(params_of(root, after, names), ==, n);
  for (int i = 0; i < n; i++) {
    test_set_context("parameter %s", names[i]);
    g_assert_cmpuint(after[i].id, ==, before[i].id);
    bool counter = strcmp(names[i], "bn.num_batches_tracked") == 0;
    g_assert_cmpint(gs_dtype_of(after[i]), ==, counter ? GS_I64 : GS_F64);
    double *now = test_values(after[i]);
    for (int64_t k = 0; k < gs_numel(after[i]); k++)
      g_assert_cmpfloat(now[k], ==, values[i][k]); /* f32 to f64 is exact */
    g_free(now);
    if (grads[i]) {
      gs_tensor g = gs_grad(after[i]);
      g_assert_cmpint(gs_dtype_of(g), ==, GS_F64);
      double *gv = test_values(g);
      for (int64_t k = 0; k < gs_numel(g); k++)
        g_assert_cmpfloat(gv[k], ==, grads[i][k]);
      g_free(gv);
    }
    g_assert_cmpint(gs_requires_grad(after[i]), ==, i < 4);
  }
  test_set_context("%s", "");
  g_assert_cmpuint(gs_grad(before[0]).id, ==, grad_handle.id); /* the grad keeps its handle */

  /* It computes in f64 now, and refuses f32 input as torch does. */
  gs_tensor x64 = gs_to_dtype(x, GS_F64);
  gs_tensor h64 = gs_linear_forward(fc, x64), y64 = gs_batch_norm_forward(bn, h64);
  g_assert_cmpint(gs_dtype_of(y64), ==, GS_F64);
  gs_tensor loss64 = gs_sum(y64, NULL, 0, false);
  gs_backward(loss64);
  g_assert_cmpint(gs_dtype_of(gs_grad(before[0])), ==, GS_F64);

  /* And back: float() converts again, and a second call finds nothing to do. */
  g_assert_cmpint(gs_module_to_dtype(root, GS_F32), ==, 6);
  g_assert_cmpint(gs_module_to_dtype(root, GS_F32), ==, 0);
  g_assert_cmpint(gs_dtype_of(before[1]), ==, GS_F32);
  g_assert_cmpint(gs_dtype_of(gs_grad(before[1])), ==, GS_F32);
  EXPECT_ERROR(gs_module_to_dtype(root, GS_I64), "expected f32 or f64");
  for (int i = 0; i < n; i++) {
    g_free(values[i]);
    g_free(grads[i]);
  }
  DISPOSE_ALL(x, h, y, loss, x64, h64, y64, loss64);
  gs_module_dispose(root);
}

static void test_recurrent_module_follows_its_parameters(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 5);
  gs_rnn_options opt = GS_RNN_OPTIONS_DEFAULT;
  opt.rng = &rng;
  opt.num_layers = 2;
  gs_module lstm = gs_rnn_new(GS_RNN_LSTM, 3, 4, &opt);
  gs_tensor x = gs_randn(GS_F32, (int64_t[]){5, 2, 3}, 3, &rng);
  gs_tensor out32 = gs_rnn_forward(lstm, x, GS_NO_TENSOR, GS_NO_TENSOR, NULL, NULL);
  g_assert_cmpint(gs_module_to_dtype(lstm, GS_F64), ==, 8);
  gs_tensor x64 = gs_to_dtype(x, GS_F64);
  gs_tensor out64 = gs_rnn_forward(lstm, x64, GS_NO_TENSOR, GS_NO_TENSOR, NULL, NULL);
  g_assert_cmpint(gs_dtype_of(out64), ==, GS_F64);
  /* The same weights: the f64 run agrees with the f32 one to f32's precision. */
  double *a = test_values(out32), *b = test_values(out64);
  for (int64_t k = 0; k < gs_numel(out64); k++)
    g_assert_cmpfloat_with_epsilon(a[k], b[k], 1e-5);
  g_free(a), g_free(b);
  EXPECT_ERROR(gs_rnn_forward(lstm, x, GS_NO_TENSOR, GS_NO_TENSOR, NULL, NULL),
               "expected input [T, B, input_size] of dtype f64 (the parameters'), got f32");
  DISPOSE_ALL(x, out32, x64, out64);
  gs_module_dispose(lstm);
}

/* Each converted parameter and grad is one tensor_set_data event naming it, its new storage
 * and dtype, and "double". */
static void test_conversion_is_in_the_log(void) {
  g_autofree char *dir = g_dir_make_tmp("module-dtype-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "log.gstrace", NULL);
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  gs_rng rng;
  gs_rng_seed(&rng, 7);
  gs_module fc = gs_linear_new(2, 2, true, &rng);
  gs_tensor w = gs_module_parameter(fc, "weight");
  gs_tensor x = gs_ones(GS_F32, (int64_t[]){1, 2}, 2);
  gs_tensor out = gs_linear_forward(fc, x), loss = gs_sum(out, NULL, 0, false);
  gs_backward(loss);
  uint64_t grad_id = gs_grad(w).id;
  gs_module_to_dtype(fc, GS_F64);
  uint64_t storage = gs_storage_id(w);
  gs_trace_close();

  gs_trace_reader *r = test_read_log(path);
  gs_trace_event e;
  int events = 0, weight_events = 0, grad_events = 0;
  while (gs_trace_reader_next(r, &e) == GS_TRACE_EVENT) {
    if (e.kind != GS_TRACE_TENSOR_SET_DATA)
      continue;
    events++;
    g_assert_cmpuint(e.dtype, ==, GS_F64);
    g_assert_cmpstr(gs_trace_reader_string(r, e.op), ==, "double");
    if (e.tensor == w.id) {
      weight_events++;
      g_assert_cmpuint(e.storage, ==, storage);
      g_assert_cmpint(e.ndim, ==, 2);
      g_assert_cmpint(e.shape[0], ==, 2);
      g_assert_cmpint(e.strides[0], ==, 2);
    }
    grad_events += e.tensor == grad_id;
  }
  gs_trace_reader_free(r);
  g_assert_cmpint(events, ==, 4); /* weight, bias and their grads */
  g_assert_cmpint(weight_events, ==, 1);
  g_assert_cmpint(grad_events, ==, 1);
  DISPOSE_ALL(x, out, loss);
  gs_module_dispose(fc);
  g_unlink(path);
  g_rmdir(dir);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  test_add_leak_checked("/module-dtype/set-data-keeps-the-handle", test_set_data_keeps_the_handle);
  test_add_leak_checked("/module-dtype/double-and-float-convert-in-place",
                        test_double_and_float_convert_in_place);
  test_add_leak_checked("/module-dtype/recurrent-module-follows-its-parameters",
                        test_recurrent_module_follows_its_parameters);
  g_test_add_func("/module-dtype/conversion-is-in-the-log", test_conversion_is_in_the_log);
  return g_test_run();
}
