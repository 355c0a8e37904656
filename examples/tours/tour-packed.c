/* tour-packed: tour 6, a PackedSequence built in a collate scope. The scope owns what is made
 * in it, the packed sequence too (its four tensors move and die as one), so when the collate
 * scope ends the batch is gone: the LSTM gets a stale handle and the error names who disposed
 * it. Moving the packed sequence to the outer scope before the end keeps it for the LSTM. */
#include "tour-common.h"

/* Three sequences of lengths 4, 2 and 3, two features each, padded to [B, T, 2]. */
static gs_packed_sequence collate(gs_rng *rng) {
  int64_t shape[] = {3, 4, 2};
  gs_tensor padded = tour_named(gs_randn(GS_F32, shape, 3, rng), "padded");
  const int64_t length_values[] = {4, 2, 3};
  int64_t shape3[] = {3};
  gs_tensor lengths = tour_named(gs_from_data(GS_I64, shape3, 1, length_values), "lengths");
  return gs_pack_padded_sequence(padded, lengths, /*batch_first*/ true, /*enforce_sorted*/ false);
}

int main(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 7);
  gs_rnn_options options = GS_RNN_OPTIONS_DEFAULT;
  options.rng = &rng;
  gs_module lstm = gs_rnn_new(GS_RNN_LSTM, 2, 3, &options);
  tour_caught caught = {0};
  void *previous_data;
  gs_error_handler previous = gs_set_error_handler(tour_keep_error, &caught, &previous_data);

  tour_section("collate without move");
  gs_scope scope = gs_scope_begin("collate");
  gs_packed_sequence batch = collate(&rng);
  gs_scope_end(scope); /* disposes everything the scope owns: the batch too */

  tour_section("use after the scope");
  gs_packed_sequence out = gs_rnn_forward_packed(lstm, batch, GS_NO_TENSOR, GS_NO_TENSOR,
                                                 NULL, NULL);
  printf("without the move: %s\n", caught.last);
  CHECK(caught.count == 1 && !gs_packed_sequence_is_alive(out));

  tour_section("collate with move");
  scope = gs_scope_begin("collate");
  gs_packed_sequence fresh = collate(&rng);
  tour_section("move to outer");
  batch = gs_packed_move_to_outer(fresh); /* the caller owns it now, parts and all */
  gs_scope_end(scope);
  CHECK(gs_packed_sequence_is_alive(batch));

  tour_section("lstm");
  gs_tensor h_n, c_n;
  out = gs_rnn_forward_packed(lstm, batch, GS_NO_TENSOR, GS_NO_TENSOR, &h_n, &c_n);
  CHECK(caught.count == 1 && gs_packed_sequence_is_alive(out));
  printf("with the move: output rows %lld, h_n %lld x %lld x %lld\n",
         (long long)gs_size(gs_packed_data(out), 0), (long long)gs_size(h_n, 0),
         (long long)gs_size(h_n, 1), (long long)gs_size(h_n, 2));

  gs_set_error_handler(previous, previous_data, NULL);
  gs_packed_sequence_dispose(out), gs_packed_sequence_dispose(batch);
  gs_dispose(h_n), gs_dispose(c_n);
  gs_module_dispose(lstm);
  CHECK(gs_live_tensor_count() == 0);
  printf("checks_failed=%d\n", tour_failures);
  return tour_failures ? 1 : 0;
}
