/* word-language: a character-level LSTM that reads a word and tells its language (English,
 * German, French, Spanish or Italian), trained on Debian's word lists (words.h picks the same
 * words every run: 4,000 per language for training, 1,000 held out for the test).
 *
 * Each word is a sequence of one-hot characters. A DataLoader shuffles the training words'
 * indices and labels; the collate step (collate_words) pads the batch's words, packs them in
 * its own "collate" dispose scope and moves the PackedSequence out to the training step's
 * scope, the pattern the seed asked for. The LSTM (128 hidden) runs over the packed
 * batch, so each time step runs only over the words still going; its last hidden state goes
 * through Linear(128, 5) to cross_entropy, and Adam updates the parameters. Every step runs
 * in a "train step" scope, so nothing of a step survives it. With GS_TRACE set the run is
 * recorded with its tensors named and marks at each epoch and step, for the inspector.
 *
 * bench/compare-torch/word_language.py is the same recipe in PyTorch.
 *
 * Usage: word-language [--epochs N] [--train-words N] [--test-words N] [--seed S]
 *                      [--dict DIR] [--print-words]
 * --print-words prints the chosen words ("train|test <language index> <word>") and stops:
 * bench/compare-torch/word_language.py --print-words prints the same lines.
 * Prints machine-readable lines test_accuracy=, train_seconds= (wall), train_cpu_seconds= (all
 * threads) and, last, live_tensors= (the
 * count before training, which it must return to). Exits non-zero if it could not train or
 * tensors leaked. */
#include <gradscope/gradscope.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "words.h"

enum { HIDDEN = 128, BATCH = 32, EVAL_BATCH = 500 };
static const double LR = 3e-3;

typedef struct options {
  int epochs, train_words, test_words;
  uint64_t seed;
  const char *dict;
  bool print_words; /* print the split and stop (to compare it with the PyTorch script's) */
} options;

typedef struct model {
  gs_module net; /* WordLanguage { lstm: LSTM(vocab, 128), fc: Linear(128, 5) }: the log names
                    the parameters "lstm.weight_ih_l0", "fc.bias"... */
  gs_module lstm, fc;
  gs_optimizer adam;
} model;

static double clock_s(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool parse_args(int argc, char **argv, options *o) {
  *o = (options){.epochs = 4, .train_words = 4000, .test_words = 1000, .seed = 17,
                 .dict = "/usr/share/dict"};
  for (int i = 1; i < argc; i++) {
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    char *end = NULL;
    long long n = value ? strtoll(value, &end, 10) : 0;
    bool number = value && *value && end && *end == '\0' && n > 0 && n <= 1000000;
    if (strcmp(argv[i], "--print-words") == 0) {
      o->print_words = true;
      continue;
    }
    if (strcmp(argv[i], "--dict") == 0 && value)
      o->dict = value;
    else if (strcmp(argv[i], "--epochs") == 0 && number)
      o->epochs = (int)n;
    else if (strcmp(argv[i], "--train-words") == 0 && number)
      o->train_words = (int)n;
    else if (strcmp(argv[i], "--test-words") == 0 && number)
      o->test_words = (int)n;
    else if (strcmp(argv[i], "--seed") == 0 && value && *value && end && *end == '\0' && n >= 0)
      o->seed = (uint64_t)n;
    else {
      fprintf(stderr, "usage: word-language [--epochs N] [--train-words N] [--test-words N] "
                      "[--seed S] [--dict DIR] [--print-words]\n");
      return false;
    }
    i++;
  }
  return true;
}

/* The collate step: the words' one-hot characters padded to the longest, [T, count, vocab],
 * packed (enforce_sorted false: the batch stays in the loader's order). The padded tensor and
 * the lengths die with the "collate" scope; the packed sequence is moved out to the scope
 * that called (the training step's, or the evaluation's). */
static gs_packed_sequence collate_words(const word_split *s, const word *words,
                                        const int64_t *which, int64_t count) {
  gs_scope collate = gs_scope_begin("collate");
  int64_t longest = 1;
  for (int64_t b = 0; b < count; b++)
    if (words[which[b]].length > longest)
      longest = words[which[b]].length;
  gs_tensor chars = gs_zeros(GS_F32, (int64_t[]){longest, count, s->vocab}, 3);
  gs_tensor lengths = gs_zeros(GS_I64, (int64_t[]){count}, 1);
  gs_trace_name(chars, "padded characters");
  gs_trace_name(lengths, "lengths");
  float *x = gs_data_mut(chars);
  int64_t *len = gs_data_mut(lengths);
  for (int64_t b = 0; b < count; b++) {
    const word *w = &words[which[b]];
    len[b] = w->length;
    for (int t = 0; t < w->length; t++)
      x[((int64_t)t * count + b) * s->vocab + w->chars[t]] = 1.0f;
  }
  gs_packed_sequence packed = gs_pack_padded_sequence(chars, lengths, false, false);
  gs_trace_name(gs_packed_data(packed), "packed characters");
  gs_packed_move_to_outer(packed);
  gs_scope_end(collate);
  return packed;
}

/* Logits [count, 5]: the LSTM over the packed words, its last hidden state through fc. */
static gs_tensor forward(const model *m, gs_packed_sequence words) {
  gs_tensor h_n;
  gs_rnn_forward_packed(m->lstm, words, GS_NO_TENSOR, GS_NO_TENSOR, &h_n, NULL);
  gs_trace_name(h_n, "h_n");
  gs_tensor logits = gs_linear_forward(m->fc, gs_select(h_n, 0, 0));
  gs_trace_name(logits, "logits");
  return logits;
}

/* Fraction of the words whose largest logit is their language. */
static double accuracy(const model *m, const word_split *s, const word *words, int n) {
  gs_scope scope = gs_scope_begin("evaluate");
  gs_no_grad_begin();
  int64_t *which = malloc(sizeof *which * EVAL_BATCH), *labels = malloc(sizeof *labels * EVAL_BATCH);
  int64_t hits = 0;
  for (int start = 0; start < n && which && labels; start += EVAL_BATCH) {
    gs_scope chunk = gs_scope_begin("evaluate chunk");
    int count = n - start < EVAL_BATCH ? n - start : EVAL_BATCH;
    for (int i = 0; i < count; i++)
      which[i] = start + i, labels[i] = words[start + i].language;
    gs_tensor predicted = gs_argmax(forward(m, collate_words(s, words, which, count)), 1, false);
    gs_tensor y = gs_from_data(GS_I64, (int64_t[]){count}, 1, labels);
    hits += (int64_t)gs_item(gs_sum(gs_eq(predicted, y), NULL, 0, false));
    gs_scope_end(chunk);
  }
  free(which), free(labels);
  gs_no_grad_end();
  gs_scope_end(scope);
  return (double)hits / n;
}

/* One training step on one batch of the loader; returns the loss. */
static double train_step(const model *m, const word_split *s, gs_data_loader *loader) {
  gs_scope step = gs_scope_begin("train step");
  gs_batch batch = gs_data_loader_next_batch(loader); /* word indices and labels */
  gs_tensor which = gs_batch_field(batch, 0), labels = gs_batch_field(batch, 1);
  gs_trace_name(labels, "labels");
  gs_packed_sequence words = collate_words(s, s->train, gs_data(which), gs_batch_size(batch));
  gs_tensor loss = gs_cross_entropy(forward(m, words), labels, GS_REDUCTION_MEAN, 0.0);
  gs_trace_name(loss, "loss");
  gs_backward(loss);
  gs_optimizer_step(m->adam);
  gs_optimizer_zero_grad(m->adam);
  double value = gs_item(loss);
  gs_scope_end(step); /* the batch, the packed words and every tensor of the step */
  return value;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* lines reach a pipe (the inspector's Output) at once */
  options o;
  if (!parse_args(argc, argv, &o))
    return 2;
  word_split s;
  if (!words_load(o.dict, o.seed, o.train_words, o.test_words, &s))
    return 1;
  if (o.print_words) {
    for (int i = 0; i < s.n_train; i++)
      printf("train %d %s\n", s.train[i].language, s.train[i].text);
    for (int i = 0; i < s.n_test; i++)
      printf("test %d %s\n", s.test[i].language, s.test[i].text);
    words_free(&s);
    return 0;
  }
  printf("%d training and %d test words, %d characters\n", s.n_train, s.n_test, s.vocab - 1);
  uint64_t live_before = gs_live_tensor_count();

  gs_manual_seed(o.seed);
  gs_rng rng;
  gs_rng_seed(&rng, o.seed);
  gs_rnn_options lstm_opts = GS_RNN_OPTIONS_DEFAULT;
  lstm_opts.rng = &rng;
  model m = {gs_module_new("WordLanguage"), gs_rnn_new(GS_RNN_LSTM, s.vocab, HIDDEN, &lstm_opts),
             gs_linear_new(HIDDEN, WORDS_LANGUAGES, true, &rng), {0}};
  gs_module_register_child(m.net, "lstm", m.lstm);
  gs_module_register_child(m.net, "fc", m.fc);
  gs_tensor params[6];
  int n_params = gs_module_named_parameters(m.net, params, NULL, 6);
  gs_adam_options adam_opts = GS_ADAM_OPTIONS_DEFAULT;
  adam_opts.lr = LR;
  m.adam = gs_adam_new(params, n_params, &adam_opts);

  /* The loader shuffles indices into s.train; collate_words turns them into characters. */
  int64_t *index = malloc(sizeof *index * (size_t)s.n_train);
  int64_t *language = malloc(sizeof *language * (size_t)s.n_train);
  if (!index || !language)
    return 1;
  for (int i = 0; i < s.n_train; i++)
    index[i] = i, language[i] = s.train[i].language;
  gs_tensor all_index = gs_from_data(GS_I64, (int64_t[]){s.n_train}, 1, index);
  gs_tensor all_language = gs_from_data(GS_I64, (int64_t[]){s.n_train}, 1, language);
  gs_trace_name(all_index, "training word indices");
  gs_trace_name(all_language, "training labels");
  free(index), free(language);
  gs_dataset train_set = gs_tensor_dataset((gs_tensor[]){all_index, all_language}, 2);
  gs_data_loader *loader = gs_data_loader_new(
      &train_set, &(gs_loader_options){.batch_size = BATCH, .shuffle = true, .seed = o.seed});
  if (!loader) {
    fprintf(stderr, "word-language: cannot make the data loader: %s\n", gs_last_error());
    return 1;
  }

  /* Wall time, and the CPU time of every thread (on a shared machine the wall time measures
   * the neighbours too: the CPU time is what the training itself cost). */
  double start = clock_s(CLOCK_MONOTONIC), cpu_start = clock_s(CLOCK_PROCESS_CPUTIME_ID);
  int64_t step = 0;
  for (int epoch = 1; epoch <= o.epochs; epoch++) {
    char mark[48];
    snprintf(mark, sizeof mark, "epoch %d", epoch);
    gs_trace_mark(mark);
    gs_data_loader_reset(loader);
    double loss_sum = 0;
    int64_t steps = gs_data_loader_num_batches(loader);
    for (int64_t b = 0; b < steps; b++) {
      snprintf(mark, sizeof mark, "step %lld", (long long)++step);
      gs_trace_mark(mark);
      loss_sum += train_step(&m, &s, loader);
    }
    printf("epoch %d  loss %.4f\n", epoch, loss_sum / (double)steps);
  }
  double seconds = clock_s(CLOCK_MONOTONIC) - start;
  double cpu_seconds = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu_start;
  gs_module_train(m.lstm, false);
  double test_acc = accuracy(&m, &s, s.test, s.n_test);

  gs_data_loader_free(loader);
  gs_dataset_release(&train_set);
  gs_dispose(all_index), gs_dispose(all_language);
  gs_optimizer_dispose(m.adam);
  gs_module_dispose(m.net); /* and its two children */
  words_free(&s);
  uint64_t live_after = gs_live_tensor_count();
  printf("test_accuracy=%.4f\n", test_acc);
  printf("train_seconds=%.3f\n", seconds);
  printf("train_cpu_seconds=%.3f\n", cpu_seconds);
  printf("live_tensors=%llu\n", (unsigned long long)live_after);
  return live_after == live_before ? 0 : 1;
}
