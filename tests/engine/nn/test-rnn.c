/* test-rnn.c: what a user of the recurrent modules relies on beyond the numbers (which
 * rnn-torch and the gradcheck cases check): PyTorch's parameter names and shapes, packed
 * output keeping the input's layout, only the results left in the step's scope, dropout only
 * between layers and only in training, and bad calls refused with what was expected. */
#include "test-util.h"

/* The message first: it reads as the rule being checked. */
#define TEST_EXPECT_ERROR(message, stmt) EXPECT_ERROR(stmt, message)

/* max |a - b| (disposing what it made). */
static double max_abs_diff(gs_tensor a, gs_tensor b) {
  gs_tensor d = gs_sub(a, b), m = gs_abs(d), r = gs_max(m, NULL, 0, false);
  double v = gs_item(r);
  gs_dispose(d), gs_dispose(m), gs_dispose(r);
  return v;
}

static void test_parameter_names_and_shapes(void) {
  gs_rnn_options o = GS_RNN_OPTIONS_DEFAULT;
  o.num_layers = 2, o.bidirectional = true;
  gs_module m = gs_rnn_new(GS_RNN_GRU, 5, 4, &o);
  const char *names[16];
  gs_tensor params[16];
  g_assert_cmpint(gs_module_named_parameters(m, params, names, 16), ==, 16);
  g_assert_cmpstr(names[0], ==, "weight_ih_l0");
  g_assert_cmpstr(names[3], ==, "bias_hh_l0");
  g_assert_cmpstr(names[4], ==, "weight_ih_l0_reverse");
  g_assert_cmpstr(names[8], ==, "weight_ih_l1");
  g_assert_cmpstr(names[15], ==, "bias_hh_l1_reverse");
  g_assert_cmpint(gs_size(params[0], 0), ==, 12); /* 3 gates x 4 */
  g_assert_cmpint(gs_size(params[0], 1), ==, 5);
  g_assert_cmpint(gs_size(params[8], 1), ==, 8); /* layer 1 reads both directions */
  /* U(-1/sqrt(4), 1/sqrt(4)) */
  gs_tensor zeros = gs_zeros_like(params[1]);
  double absmax = max_abs_diff(params[1], zeros);
  g_assert_cmpfloat(absmax, <=, 0.5);
  g_assert_cmpfloat(absmax, >, 0.3);
  gs_dispose(zeros);
  gs_module_dispose(m);
  gs_module cell = gs_rnn_cell_new(GS_RNN_LSTM, 3, 2, false, GS_F32, NULL);
  g_assert_cmpint(gs_module_named_parameters(cell, NULL, NULL, 0), ==, 2);
  g_assert_cmpstr(gs_module_type_name(cell), ==, "LSTMCell");
  gs_module_dispose(cell);
}

/* A packed forward in a scope leaves the packed result and h_n there, nothing else. */
static void test_packed_forward_leaves_only_its_results(void) {
  gs_module m = gs_rnn_new(GS_RNN_LSTM, 3, 4, NULL);
  gs_tensor x = gs_randn(GS_F32, (int64_t[]){5, 3, 3}, 3, NULL);
  gs_tensor len = gs_from_data(GS_I64, (int64_t[]){3}, 1, (int64_t[]){2, 5, 3});
  uint64_t live = gs_live_tensor_count();
  gs_scope s = gs_scope_begin("step");
  gs_packed_sequence in = gs_pack_padded_sequence(x, len, false, false);
  gs_tensor h_n, c_n;
  gs_packed_sequence out = gs_rnn_forward_packed(m, in, GS_NO_TENSOR, GS_NO_TENSOR, &h_n, &c_n);
  g_assert_true(gs_packed_owner_scope(out).id == s.id);
  g_assert_true(gs_owner_scope(h_n).id == s.id);
  g_assert_cmpint(gs_size(gs_packed_data(out), 0), ==, 10);
  g_assert_cmpint(gs_size(c_n, 0), ==, 1);
  /* The same batch sizes and permutation as the input. */
  g_assert_cmpfloat(gs_get(gs_packed_sorted_indices(out), (int64_t[]){0}), ==, 1);
  g_assert_cmpfloat(gs_get(gs_packed_batch_sizes(out), (int64_t[]){2}), ==, 2);
  /* The packed result over 4 tensors + h_n + c_n + the input's 4. */
  g_assert_cmpint(gs_live_tensor_count() - live, ==, 10);
  gs_scope_end(s);
  g_assert_cmpint(gs_live_tensor_count(), ==, live);
  gs_dispose(x), gs_dispose(len);
  gs_module_dispose(m);
}

/* Dropout acts between layers in training only: eval mode gives the no-dropout numbers. */
static void test_dropout_between_layers_in_training_only(void) {
  gs_rng a, b;
  gs_rng_seed(&a, 3), gs_rng_seed(&b, 3);
  gs_rnn_options o = GS_RNN_OPTIONS_DEFAULT;
  o.num_layers = 2, o.dtype = GS_F64, o.rng = &a;
  gs_module plain = gs_rnn_new(GS_RNN_TANH, 3, 4, &o);
  o.dropout = 0.5, o.rng = &b;
  gs_module dropping = gs_rnn_new(GS_RNN_TANH, 3, 4, &o);
  gs_tensor x = gs_randn(GS_F64, (int64_t[]){4, 2, 3}, 3, NULL);
  gs_tensor y0 = gs_rnn_forward(plain, x, GS_NO_TENSOR, GS_NO_TENSOR, NULL, NULL);
  gs_tensor y1 = gs_rnn_forward(dropping, x, GS_NO_TENSOR, GS_NO_TENSOR, NULL, NULL);
  gs_module_train(dropping, false);
  gs_tensor y2 = gs_rnn_forward(dropping, x, GS_NO_TENSOR, GS_NO_TENSOR, NULL, NULL);
  g_assert_cmpfloat(max_abs_diff(y0, y1), >, 1e-3);
  g_assert_cmpfloat(max_abs_diff(y0, y2), ==, 0.0);
  gs_dispose(x), gs_dispose(y0), gs_dispose(y1), gs_dispose(y2);
  gs_module_dispose(plain), gs_module_dispose(dropping);
}

static void test_bad_calls_name_what_was_expected(void) {
  gs_module m = gs_rnn_new(GS_RNN_LSTM, 3, 4, NULL);
  gs_tensor x = gs_randn(GS_F32, (int64_t[]){5, 2, 7}, 3, NULL);
  gs_tensor x64 = gs_randn(GS_F64, (int64_t[]){5, 2, 3}, 3, NULL);
  gs_tensor ok = gs_randn(GS_F32, (int64_t[]){5, 2, 3}, 3, NULL);
  gs_tensor h0 = gs_zeros(GS_F32, (int64_t[]){2, 2, 4}, 3);
  TEST_EXPECT_ERROR("and 3 features (input_size) in the last, got shape [5, 2, 7]",
                    gs_rnn_forward(m, x, GS_NO_TENSOR, GS_NO_TENSOR, NULL, NULL));
  TEST_EXPECT_ERROR("expected input [T, B, input_size] of dtype f32 (the parameters'), got f64",
                    gs_rnn_forward(m, x64, GS_NO_TENSOR, GS_NO_TENSOR, NULL, NULL));
  TEST_EXPECT_ERROR("expected h0 of shape [1, 2, 4] (num_layers * num_directions, batch, "
                    "hidden_size), got [2, 2, 4]",
                    gs_rnn_forward(m, ok, h0, GS_NO_TENSOR, NULL, NULL));
  TEST_EXPECT_ERROR("expected dropout in [0, 1), got 1",
                    gs_rnn_new(GS_RNN_GRU, 3, 4, &(gs_rnn_options){1, true, false, 1.0, false, GS_F32, NULL}));
  /* parameters that could never fit: refused at once, not made until memory runs out */
  TEST_EXPECT_ERROR(
      "4611686018427387904 layers of hidden size 1 would need",
      gs_rnn_new(GS_RNN_TANH, 3, 1,
                 &(gs_rnn_options){(int64_t)1 << 62, true, false, 0, false, GS_F32, NULL}));
  gs_module linear = gs_linear_new(3, 4, true, NULL);
  TEST_EXPECT_ERROR("expected an RNN, LSTM or GRU module, got a Linear",
                    gs_rnn_forward(linear, ok, GS_NO_TENSOR, GS_NO_TENSOR, NULL, NULL));
  gs_module_dispose(linear);
  gs_module gru = gs_rnn_new(GS_RNN_GRU, 3, 4, NULL);
  TEST_EXPECT_ERROR("expected no c0 (only LSTM has a cell state), got one",
                    gs_rnn_forward(gru, ok, GS_NO_TENSOR, h0, NULL, NULL));
  gs_module cell = gs_rnn_cell_new(GS_RNN_GRU, 3, 4, true, GS_F32, NULL);
  gs_tensor x2 = gs_randn(GS_F32, (int64_t[]){2, 5}, 2, NULL);
  TEST_EXPECT_ERROR("expected input of shape [batch, 3] (input_size), got [2, 5]",
                    gs_rnn_cell_forward(cell, x2, GS_NO_TENSOR, GS_NO_TENSOR, NULL));
  gs_dispose(x), gs_dispose(x64), gs_dispose(ok), gs_dispose(h0), gs_dispose(x2);
  gs_module_dispose(m), gs_module_dispose(gru), gs_module_dispose(cell);
}

/* PackedSequence(data, batch_sizes, sorted_indices, unsorted_indices) as PyTorch's: a packed
 * sequence rebuilt from another's parts (here with data replaced by 2 * data, as a layer over
 * packed.data does) pads to the same layout, feeds an RNN, passes gradients back to the new
 * data, and leaves the caller's parts the caller's; parts that do not fit are refused. */
static void test_packed_sequence_from_parts(void) {
  gs_tensor x = gs_randn(GS_F64, (int64_t[]){4, 3, 2}, 3, NULL);
  gs_tensor len = gs_from_data(GS_I64, (int64_t[]){3}, 1, (int64_t[]){2, 4, 1});
  gs_packed_sequence in = gs_pack_padded_sequence(x, len, false, false);
  gs_tensor data = gs_mul_scalar(gs_packed_data(in), 2.0);
  gs_set_requires_grad(data, true);
  uint64_t live = gs_live_tensor_count();
  gs_packed_sequence ps =
      gs_packed_sequence_from(data, gs_packed_batch_sizes(in), gs_packed_sorted_indices(in),
                              gs_packed_unsorted_indices(in));
  g_assert_true(gs_packed_sequence_is_alive(ps));
  gs_tensor twice = gs_mul_scalar(x, 2.0);
  gs_tensor padded = gs_pad_packed_sequence(ps, false, 0.0, -1, NULL);
  gs_tensor mask = gs_pad_packed_sequence(in, false, 0.0, -1, NULL); /* x with zero padding */
  gs_tensor twice_masked = gs_mul_scalar(mask, 2.0);
  g_assert_cmpfloat(max_abs_diff(padded, twice_masked), <, 1e-12);
  gs_tensor loss = gs_sum(padded, NULL, 0, false);
  gs_backward(loss);
  gs_tensor g = gs_grad(data); /* each packed row is used once in padded: gradient 1 */
  gs_tensor ones = gs_ones_like(data);
  g_assert_cmpfloat(max_abs_diff(g, ones), ==, 0.0);
  gs_dispose(twice), gs_dispose(padded), gs_dispose(mask), gs_dispose(twice_masked);
  gs_dispose(loss), gs_dispose(ones);
  gs_packed_sequence_dispose(ps);
  gs_zero_grad(data);
  g_assert_cmpint(gs_live_tensor_count(), ==, live); /* the caller's parts stay alive */
  g_assert_true(gs_is_alive(data));

  gs_tensor bs = gs_from_data(GS_I64, (int64_t[]){3}, 1, (int64_t[]){3, 4, 1});
  TEST_EXPECT_ERROR("expected batch_sizes to be non-empty, positive and non-increasing",
                    gs_packed_sequence_from(data, bs, GS_NO_TENSOR, GS_NO_TENSOR));
  gs_tensor bs6 = gs_from_data(GS_I64, (int64_t[]){2}, 1, (int64_t[]){3, 3});
  TEST_EXPECT_ERROR("expected packed data of 6 rows (the sum of batch_sizes [3, 3])",
                    gs_packed_sequence_from(data, bs6, GS_NO_TENSOR, GS_NO_TENSOR));
  TEST_EXPECT_ERROR("expected both sorted_indices and unsorted_indices, or neither, got only "
                    "sorted_indices",
                    gs_packed_sequence_from(data, gs_packed_batch_sizes(in),
                                            gs_packed_sorted_indices(in), GS_NO_TENSOR));
  gs_tensor wrong = gs_from_data(GS_I64, (int64_t[]){3}, 1, (int64_t[]){0, 2, 1});
  TEST_EXPECT_ERROR("expected sorted_indices to be the inverse of unsorted_indices",
                    gs_packed_sequence_from(data, gs_packed_batch_sizes(in), wrong,
                                            gs_packed_unsorted_indices(in)));
  gs_tensor dup = gs_from_data(GS_I64, (int64_t[]){3}, 1, (int64_t[]){0, 0, 1});
  TEST_EXPECT_ERROR(
      "expected unsorted_indices to be a permutation of the batch's 3 sequences",
      gs_packed_sequence_from(data, gs_packed_batch_sizes(in), gs_packed_sorted_indices(in), dup));
  g_assert_cmpint(gs_live_tensor_count(), ==, live + 4); /* nothing left by the refusals */
  gs_dispose(bs), gs_dispose(bs6), gs_dispose(wrong), gs_dispose(dup), gs_dispose(data);
  gs_packed_sequence_dispose(in);
  gs_dispose(x), gs_dispose(len);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/rnn/parameter-names-and-shapes", test_parameter_names_and_shapes);
  g_test_add_func("/rnn/packed-forward-leaves-only-its-results",
                  test_packed_forward_leaves_only_its_results);
  g_test_add_func("/rnn/dropout-between-layers-in-training-only",
                  test_dropout_between_layers_in_training_only);
  g_test_add_func("/rnn/bad-calls-name-what-was-expected", test_bad_calls_name_what_was_expected);
  g_test_add_func("/rnn/packed-sequence-from-parts", test_packed_sequence_from_parts);
  return g_test_run();
}
