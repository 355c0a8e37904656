/* test-trace-model-memory-origin.c: where a storage's bytes come from (format 1.4), as the
 * inspector's model tells it: each alive storage's memory and peer at the head of a log the
 * engine records here, the sentences that explain a wrapped allocation and a move into
 * shared memory, the event's fields as the event list and the CLI's dump list them, and the
 * bytes outside the engine's allocator that the memory timeline draws apart. */
#include <dlpack/dlpack.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "model-test-util.h"

static guint64 engine_storage, blob_storage, dlpack_storage, received_storage;
static float blob_bytes[4];
static double producer_bytes[3];

static void ignore_deleter(DLManagedTensor *m) { (void)m; }

static void origins_work(void) {
  gs_tensor engine = gs_ones(GS_F32, (int64_t[]){8}, 1);
  gs_tensor blob = gs_from_blob(GS_F32, (int64_t[]){4}, 1, NULL, blob_bytes, NULL, NULL);
  int64_t shape[1] = {3};
  DLManagedTensor producer = {.dl_tensor = {.data = producer_bytes, .device = {kDLCPU, 0},
                                            .ndim = 1, .dtype = {kDLFloat, 64, 1},
                                            .shape = shape},
                              .deleter = ignore_deleter};
  gs_tensor dl = gs_from_dlpack(&producer);
  gs_share_memory_(engine);
  int sv[2];
  g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), ==, 0);
  gs_tensor_send(sv[0], engine);
  gs_tensor received = gs_tensor_recv(sv[1]);
  close(sv[0]);
  close(sv[1]);
  engine_storage = gs_storage_id(engine);
  blob_storage = gs_storage_id(blob);
  dlpack_storage = gs_storage_id(dl);
  received_storage = gs_storage_id(received);
  gs_trace_mark("all alive");
  gs_dispose(received), gs_dispose(dl), gs_dispose(blob), gs_dispose(engine);
}

static void assert_memory(const gs_replay *r, guint64 storage, guint memory, guint peer) {
  guint got_memory = 99, got_peer = 99;
  g_assert_true(gs_replay_storage_memory(r, storage, &got_memory, &got_peer));
  g_assert_cmpuint(got_memory, ==, memory);
  g_assert_cmpuint(got_peer, ==, peer);
}

/* The index of kind's event about storage. */
static guint64 storage_event(gs_trace_model *m, gs_trace_kind kind, guint64 storage) {
  for (guint64 i = find_event(m, 0, kind, NULL); i != G_MAXUINT64;
       i = find_event(m, i + 1, kind, NULL)) {
    gs_trace_event e;
    if (gs_trace_model_event(m, i, &e) && e.storage == storage)
      return i;
  }
  g_error("no %s event for storage %" G_GUINT64_FORMAT, gs_trace_kind_name(kind), storage);
}

/* "memory" and "peer" as the event list and the CLI's dump list them. */
static void collect_field(const gs_event_field *f, gpointer user_data) {
  GString *out = user_data;
  if (!strcmp(f->key, "memory"))
    g_string_append_printf(out, "memory=%s ", f->s);
  else if (!strcmp(f->key, "peer"))
    g_string_append_printf(out, "peer=%" G_GUINT64_FORMAT " ", f->u);
}

static void test_storage_memory_in_the_model(void) {
  char *path = record_log(origins_work);
  GBytes *bytes = read_log_bytes(path);
  gs_trace_model *m = model_from_bytes(bytes, 0);
  g_assert_null(gs_trace_model_problem(m));
  guint64 mark = find_event(m, 0, GS_TRACE_MARK, "all alive");
  g_assert_cmpuint(mark, !=, G_MAXUINT64);
  const gs_replay *r = gs_trace_model_seek(m, mark);
  assert_memory(r, engine_storage, 4, 0); /* moved into shared memory */
  assert_memory(r, blob_storage, 1, 0);
  assert_memory(r, dlpack_storage, 2, 0);
  assert_memory(r, received_storage, 5, (guint)getpid());
  guint memory, peer;
  g_assert_false(gs_replay_storage_memory(gs_trace_model_head(m), blob_storage, &memory, &peer));

  g_autofree char *blob =
      gs_trace_model_explain(m, storage_event(m, GS_TRACE_STORAGE_ALLOC,
                                                                  blob_storage));
  g_assert_nonnull(strstr(blob, "wraps 16 bytes of the program’s own memory (gs_from_blob); "
                                "nothing was copied"));
  g_autofree char *moved =
      gs_trace_model_explain(m, storage_event(m, GS_TRACE_STORAGE_MATERIALISE, engine_storage));
  g_assert_nonnull(strstr(moved, "moved its bytes (32 bytes) into shared memory made by this "
                                 "process; every view of it follows"));
  gs_trace_event e;
  g_assert_true(gs_trace_model_event(
      m, storage_event(m, GS_TRACE_STORAGE_ALLOC, received_storage), &e));
  GString *fields = g_string_new(NULL);
  gs_event_fields_foreach(&e, NULL, collect_field, fields);
  g_autofree char *want = g_strdup_printf("memory=received peer=%d ", (int)getpid());
  g_assert_cmpstr(fields->str, ==, want);
  g_string_free(fields, TRUE);
  /* External and shared bytes apart from the engine's own: before the move into shared
   * memory, the blob (16) and the DLPack producer's (24) beside the engine's 32; at the mark,
   * everything alive is outside the allocator (the shared 32 and the received 32 too); at the
   * end, nothing. The timeline's columns carry the same. */
  guint64 move = storage_event(m, GS_TRACE_STORAGE_MATERIALISE, engine_storage);
  g_assert_cmpuint(gs_trace_model_outside_bytes_at(m, move - 1), ==, 16 + 24);
  g_assert_cmpuint(gs_trace_model_bytes_at(m, move - 1), ==, 16 + 24 + 32);
  g_assert_cmpuint(gs_trace_model_outside_bytes_at(m, mark), ==, 16 + 24 + 32 + 32);
  g_assert_cmpuint(gs_trace_model_bytes_at(m, mark), ==, 16 + 24 + 32 + 32);
  g_assert_cmpuint(gs_trace_model_outside_bytes_at(m, gs_trace_model_n_events(m) - 1), ==, 0);
  gs_memory_column col;
  gs_trace_model_memory_columns(m, mark, mark, 1, FALSE, &col);
  g_assert_cmpuint(col.outside, ==, 16 + 24 + 32 + 32);
  gs_trace_model_memory_columns(m, move - 1, move - 1, 1, TRUE, &col);
  g_assert_cmpuint(col.outside, ==, 16 + 24);
  g_autofree char *label = gs_memory_origin_label(5, 4242);
  g_assert_cmpstr(label, ==, "shared memory received from process 4242");
  gs_trace_model_free(m);
  g_bytes_unref(bytes);
  remove_log(path);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/trace-model/storage-memory-in-the-model", test_storage_memory_in_the_model);
  return g_test_run();
}
