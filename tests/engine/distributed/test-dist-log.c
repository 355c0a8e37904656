/* test-dist-log.c: checks the logs of one 2-rank run of `test-dist traced` (format 1.7,
 * "Distributed runs"), read back with the reader:
 *   test-dist-log RANK0.gstrace RANK1.gstrace STEPS PARAM_BYTES [IN_PLACE]
 * IN_PLACE (a `traced-views` run, gradient_as_bucket_view): the buckets of the three steps
 * that backward from zeroed gradients say exactly that many bytes were written into them by
 * backward itself (format 2.3's in_place: the weights; the biases are copied), no step more
 * than all, and no average is written back; without it, every gradient was copied into its
 * bucket (in_place 0) and each gets its average written back.
 * Each log says its rank (0, 1), world size 2 and the same non-zero run id; every collective
 * begins and ends once, numbered 1, 2, ... alike on both ranks with the same op; each of the
 * STEPS synchronised DDP steps (a wait_end) allreduced, in its buckets, exactly the model's
 * PARAM_BYTES of gradients, every parameter in exactly one bucket_ready; and the plain
 * collectives (allreduce, broadcast, allgather, reduce_scatter, barrier) are all there. Plain C
 * with an exit status, as test-dist. */
#include <gradscope/trace-reader.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                         \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fprintf(stderr, "\n");                                                                       \
      failures++;                                                                                  \
    }                                                                                              \
  } while (0)

enum { MAX_COLLECTIVES = 4096, MAX_PARAMS = 64 };

typedef struct rank_log {
  uint32_t rank, world;
  uint64_t run;
  bool has_run;
  char ops[MAX_COLLECTIVES][16]; /* by collective number */
  bool begun[MAX_COLLECTIVES], ended[MAX_COLLECTIVES];
  uint64_t n_collectives, steps, dist_inits, steps_in_place;
  uint64_t averages, broadcasts; /* DDP's own writes, by their op's name */
  uint64_t
      ops_seen[5]; /* allreduce (not a bucket's), broadcast, allgather, reduce_scatter, barrier */
} rank_log;

static const char *const plain_ops[5] = {"allreduce", "broadcast", "allgather", "reduce_scatter",
                                         "barrier"};

static void read_log(const char *path, rank_log *l, uint64_t steps, uint64_t param_bytes,
                     uint64_t in_place_min, bool views) {
  FILE *f = fopen(path, "rb");
  CHECK(f, "cannot open %s", path);
  if (!f)
    return;
  gs_trace_reader *r = gs_trace_reader_new();
  static char buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0)
    gs_trace_reader_feed(r, buf, n);
  fclose(f);
  /* This step's bucket bytes and parameters so far. */
  uint64_t bucket_bytes = 0, ready_bytes = 0, in_place = 0, params[MAX_PARAMS];
  int n_params = 0;
  gs_trace_event e;
  gs_trace_status st;
  while ((st = gs_trace_reader_next(r, &e)) == GS_TRACE_EVENT) {
    switch (e.kind) {
    case GS_TRACE_DIST_INIT: l->dist_inits++; break;
    case GS_TRACE_BUCKET_READY:
      ready_bytes += e.nbytes;
      in_place += e.in_place;
      CHECK(e.in_place <= e.nbytes, "%s: bucket %d: %llu bytes in place of its %llu", path,
            e.bucket, (unsigned long long)e.in_place, (unsigned long long)e.nbytes);
      for (uint32_t i = 0; i < e.n_params; i++) {
        for (int j = 0; j < n_params; j++)
          CHECK(params[j] != e.params[i], "%s: parameter %llx in two buckets in one step", path,
                (unsigned long long)e.params[i]);
        if (n_params < MAX_PARAMS)
          params[n_params++] = e.params[i];
      }
      break;
    case GS_TRACE_COLLECTIVE_BEGIN:
    case GS_TRACE_COLLECTIVE_END: {
      const char *op = gs_trace_reader_string(r, e.op);
      bool begin = e.kind == GS_TRACE_COLLECTIVE_BEGIN;
      CHECK(e.collective >= 1 && e.collective < MAX_COLLECTIVES, "%s: collective number %llu", path,
            (unsigned long long)e.collective);
      if (e.collective < 1 || e.collective >= MAX_COLLECTIVES)
        break;
      if (begin) {
        CHECK(e.collective == l->n_collectives + 1, "%s: collective #%llu after #%llu", path,
              (unsigned long long)e.collective, (unsigned long long)l->n_collectives);
        l->n_collectives = e.collective;
        CHECK(!l->begun[e.collective], "%s: #%llu begun twice", path,
              (unsigned long long)e.collective);
        l->begun[e.collective] = true;
        snprintf(l->ops[e.collective], sizeof l->ops[0], "%s", op);
        if (e.bucket >= 0) {
          CHECK(!strcmp(op, "allreduce"), "%s: a bucket's %s", path, op);
          bucket_bytes += e.nbytes;
        }
        for (int k = 0; k < 5; k++)
          if (e.bucket < 0 && !strcmp(op, plain_ops[k]))
            l->ops_seen[k]++;
      } else {
        CHECK(l->begun[e.collective] && !l->ended[e.collective],
              "%s: #%llu ends without a begin, or twice", path, (unsigned long long)e.collective);
        CHECK(!strcmp(op, l->ops[e.collective]), "%s: #%llu begins as %s, ends as %s", path,
              (unsigned long long)e.collective, l->ops[e.collective], op);
        l->ended[e.collective] = true;
      }
      break;
    }
    case GS_TRACE_INPLACE_WRITE: {
      const char *op = gs_trace_reader_string(r, e.op);
      l->averages += op && !strcmp(op, "ddp_average_");
      l->broadcasts += op && !strcmp(op, "ddp_broadcast_");
      break;
    }
    case GS_TRACE_WAIT_END:
      l->steps++;
      CHECK(bucket_bytes == param_bytes,
            "%s: step %llu allreduced %llu bytes in its buckets, expected the parameters' %llu",
            path, (unsigned long long)l->steps, (unsigned long long)bucket_bytes,
            (unsigned long long)param_bytes);
      CHECK(ready_bytes == param_bytes, "%s: step %llu's buckets were ready with %llu bytes", path,
            (unsigned long long)l->steps, (unsigned long long)ready_bytes);
      CHECK(n_params == 4, "%s: step %llu: %d parameters in its buckets, expected 4", path,
            (unsigned long long)l->steps, n_params);
      CHECK(views ? in_place <= param_bytes : in_place == 0,
            "%s: step %llu: %llu bytes were in their buckets already (expected %s %llu)", path,
            (unsigned long long)l->steps, (unsigned long long)in_place,
            views ? "at most" : "exactly", (unsigned long long)(views ? param_bytes : 0));
      l->steps_in_place += views && in_place == in_place_min;
      bucket_bytes = ready_bytes = in_place = 0;
      n_params = 0;
      break;
    default: break;
    }
  }
  CHECK(st == GS_TRACE_NEED_MORE && !gs_trace_reader_truncated(r, NULL), "%s: damaged or cut: %s",
        path, gs_trace_reader_error(r, NULL));
  l->has_run = gs_trace_reader_run(r, &l->rank, &l->world, &l->run);
  gs_trace_reader_free(r);
  CHECK(l->has_run && l->dist_inits == 1, "%s: %llu dist_init events, expected 1", path,
        (unsigned long long)l->dist_inits);
  CHECK(l->steps == steps, "%s: %llu synchronised steps, expected %llu", path,
        (unsigned long long)l->steps, (unsigned long long)steps);
  for (uint64_t c = 1; c <= l->n_collectives; c++)
    CHECK(l->ended[c], "%s: collective #%llu (%s) never ended", path, (unsigned long long)c,
          l->ops[c]);
  for (int k = 0; k < 5; k++)
    CHECK(l->ops_seen[k] > 0, "%s: no %s outside DDP's buckets", path, plain_ops[k]);
  /* DDP names what it writes: the averages into the 4 gradients after each step (with bucket
   * views none: the gradients are the averages), and rank 0's parameters into the other
   * ranks' at construction. */
  CHECK(!views || l->steps_in_place >= 3,
        "%s: %llu steps had exactly %llu bytes in their buckets already, expected 3 or more", path,
        (unsigned long long)l->steps_in_place, (unsigned long long)in_place_min);
  uint64_t averages = views ? 0 : 4 * steps;
  CHECK(l->averages == averages, "%s: %llu writes named ddp_average_, expected %llu", path,
        (unsigned long long)l->averages, (unsigned long long)averages);
  CHECK(l->rank == 0 ? l->broadcasts == 0 : l->broadcasts >= 4,
        "%s: rank %u: %llu writes named ddp_broadcast_ (rank 0 none, the others its 4 parameters)",
        path, l->rank, (unsigned long long)l->broadcasts);
}

int main(int argc, char **argv) {
  if (argc != 5 && argc != 6) {
    fprintf(stderr,
            "usage: test-dist-log RANK0.gstrace RANK1.gstrace STEPS PARAM_BYTES [IN_PLACE]\n");
    return 2;
  }
  uint64_t steps = strtoull(argv[3], NULL, 10), param_bytes = strtoull(argv[4], NULL, 10);
  uint64_t in_place_min = argc == 6 ? strtoull(argv[5], NULL, 10) : 0;
  static rank_log logs[2];
  for (int i = 0; i < 2; i++)
    read_log(argv[1 + i], &logs[i], steps, param_bytes, in_place_min, argc == 6);
  for (int i = 0; i < 2; i++) {
    CHECK(logs[i].rank == (uint32_t)i, "%s says rank %u, expected %d", argv[1 + i], logs[i].rank,
          i);
    CHECK(logs[i].world == 2, "%s says world size %u, expected 2", argv[1 + i], logs[i].world);
  }
  CHECK(logs[0].run != 0 && logs[0].run == logs[1].run, "run ids %016llx and %016llx differ",
        (unsigned long long)logs[0].run, (unsigned long long)logs[1].run);
  CHECK(logs[0].n_collectives == logs[1].n_collectives && logs[0].n_collectives > 0,
        "rank 0 logged %llu collectives, rank 1 %llu", (unsigned long long)logs[0].n_collectives,
        (unsigned long long)logs[1].n_collectives);
  for (uint64_t c = 1; c <= logs[0].n_collectives && c <= logs[1].n_collectives; c++)
    CHECK(!strcmp(logs[0].ops[c], logs[1].ops[c]), "collective #%llu is %s on rank 0, %s on 1",
          (unsigned long long)c, logs[0].ops[c], logs[1].ops[c]);
  printf("dist_log_collectives=%llu\ndist_log_steps=%llu\ndist_log_run=%016llx\n",
         (unsigned long long)logs[0].n_collectives, (unsigned long long)logs[0].steps,
         (unsigned long long)logs[0].run);
  printf("%s\n", failures ? "FAIL" : "ok");
  return failures ? 1 : 0;
}
