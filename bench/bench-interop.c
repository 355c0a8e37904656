/* bench-interop: handing a tensor over without copying, against copying it. For arrays of
 * 64 KiB, 4 MiB and 256 MiB:
 *   memcpy:  a plain memcpy of the same bytes into a warm buffer (the cost a copy would have);
 *   dlpack:  gs_to_dlpack + gs_from_dlpack + gs_dispose (our own round trip) and a foreign
 *            producer's tensor wrapped by gs_from_dlpack, exported again and both let go;
 *   shm:     gs_tensor_send + gs_tensor_recv + gs_dispose over a socket pair in one process
 *            (the storage already shared: the descriptor passed and the pages mapped again),
 *            then the same to a forked child that receives and acknowledges with one byte.
 * Target: the DLPack and shared-memory times stay flat (O(1)) while memcpy grows with size.
 * Also: opening a 1 GiB .npy mapped (gs_npy_load_mode) against reading it.
 * Median of REPS after warm-up; `name=value unit` lines. */
#include <dlpack/dlpack.h>
#include <fcntl.h>
#include <gradscope/gradscope.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-util.h"

#define REPS 21

static void producer_deleter(DLManagedTensor *m) { (void)m; }

static double time_memcpy(void *dst, const void *src, size_t n) {
  double t0 = bench_now_s();
  memcpy(dst, src, n);
  bench_escape(dst);
  return bench_now_s() - t0;
}

static double time_dlpack_own(gs_tensor t) {
  double t0 = bench_now_s();
  DLManagedTensor *m = gs_to_dlpack(t);
  gs_tensor back = gs_from_dlpack(m);
  gs_dispose(back);
  return bench_now_s() - t0;
}

static double time_dlpack_foreign(DLManagedTensor *producer) {
  double t0 = bench_now_s();
  gs_tensor t = gs_from_dlpack(producer);
  DLManagedTensor *out = gs_to_dlpack(t);
  gs_dispose(t);
  out->deleter(out);
  return bench_now_s() - t0;
}

static double time_shm_local(int sv[2], gs_tensor t) {
  double t0 = bench_now_s();
  gs_tensor_send(sv[0], t);
  gs_tensor r = gs_tensor_recv(sv[1]);
  bench_escape(gs_data(r));
  gs_dispose(r);
  return bench_now_s() - t0;
}

static void quiet(const gs_error *error, void *user_data) {
  (void)error, (void)user_data;
}

/* A child that receives tensors, touches their first element and acknowledges each; it ends
 * when the socket closes (an error its handler keeps quiet). */
static pid_t start_receiver(int sock, int parent_end) {
  pid_t pid = fork();
  if (pid == 0) {
    close(parent_end); /* else closing it in the parent would not end the stream */
    gs_set_error_handler(quiet, NULL, NULL);
    for (;;) {
      gs_tensor r = gs_tensor_recv(sock);
      if (!r.id)
        _exit(0);
      char ack = gs_get(r, (int64_t[]){0}) == 1.0 ? 'y' : 'n';
      gs_dispose(r);
      if (write(sock, &ack, 1) != 1)
        _exit(1);
    }
  }
  return pid;
}

static double time_shm_process(int sock, gs_tensor t) {
  double t0 = bench_now_s();
  gs_tensor_send(sock, t);
  char ack = 0;
  if (read(sock, &ack, 1) != 1 || ack != 'y') {
    fprintf(stderr, "bench-interop: the receiving process did not see the tensor\n");
    exit(1);
  }
  return bench_now_s() - t0;
}

static void bench_size(const char *label, int64_t n, int child_sock) {
  size_t bytes = (size_t)n * sizeof(float);
  gs_tensor t = gs_ones(GS_F32, (int64_t[]){n}, 1);
  char *dst = malloc(bytes);
  memset(dst, 0, bytes);
  float *src = malloc(bytes);
  for (int64_t i = 0; i < n; i++)
    src[i] = 1;
  int64_t shape[1] = {n};
  DLManagedTensor producer = {.dl_tensor = {.data = src, .device = {kDLCPU, 0}, .ndim = 1,
                                            .dtype = {kDLFloat, 32, 1}, .shape = shape},
                              .deleter = producer_deleter};
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
    exit(1);

  gs_share_memory_(t); /* once, as a loader would: the round trips then copy nothing */
  double s_copy[REPS], s_own[REPS], s_foreign[REPS], s_local[REPS], s_proc[REPS];
  for (int r = -2; r < REPS; r++) {
    double a = time_memcpy(dst, src, bytes), b = time_dlpack_own(t),
           c = time_dlpack_foreign(&producer), d = time_shm_local(sv, t),
           e = time_shm_process(child_sock, t);
    if (r >= 0) {
      s_copy[r] = a, s_own[r] = b, s_foreign[r] = c, s_local[r] = d, s_proc[r] = e;
    }
  }
  char name[96];
  snprintf(name, sizeof name, "memcpy_%s_us", label);
  bench_result(name, bench_median(s_copy, REPS) * 1e6, "us");
  snprintf(name, sizeof name, "dlpack_round_trip_own_%s_us", label);
  bench_result(name, bench_median(s_own, REPS) * 1e6, "us");
  snprintf(name, sizeof name, "dlpack_round_trip_foreign_%s_us", label);
  bench_result(name, bench_median(s_foreign, REPS) * 1e6, "us");
  snprintf(name, sizeof name, "shm_send_recv_same_process_%s_us", label);
  bench_result(name, bench_median(s_local, REPS) * 1e6, "us");
  snprintf(name, sizeof name, "shm_send_to_child_and_ack_%s_us", label);
  bench_result(name, bench_median(s_proc, REPS) * 1e6, "us");
  close(sv[0]);
  close(sv[1]);
  free(src);
  free(dst);
  gs_dispose(t);
}

/* Opening a 1 GiB .npy mapped and read (a sparse file: the read still fills 1 GiB). */
static void bench_npy_map(void) {
  char path[] = "/tmp/bench-interop-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0)
    return;
  const int64_t n = (1ll << 30) / 4;
  char head[128];
  int len = snprintf(head, sizeof head, "\x93NUMPY\x01%c%c%c{'descr': '<f4', "
                     "'fortran_order': False, 'shape': (%lld,), }", 0, 118, 0, (long long)n);
  while (len < 127)
    head[len++] = ' ';
  head[127] = '\n';
  if (write(fd, head, 128) != 128 || ftruncate(fd, 128 + n * 4) != 0)
    exit(1);
  close(fd);
  double t0 = bench_now_s();
  gs_tensor m = gs_npy_load_mode(path, GS_NPY_MAP_PRIVATE);
  double t1 = bench_now_s();
  gs_dispose(m);
  double t2 = bench_now_s();
  gs_tensor r = gs_npy_load(path);
  double t3 = bench_now_s();
  gs_dispose(r);
  bench_result("npy_open_1GiB_mapped_ms", (t1 - t0) * 1e3, "ms");
  bench_result("npy_open_1GiB_read_ms", (t3 - t2) * 1e3, "ms");
  unlink(path);
}

int main(void) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
    return 1;
  pid_t child = start_receiver(sv[1], sv[0]);
  close(sv[1]);
  bench_size("64KiB", 16 << 10, sv[0]);
  bench_size("4MiB", 1 << 20, sv[0]);
  bench_size("256MiB", 64 << 20, sv[0]);
  close(sv[0]); /* the receiver's next recv fails: it exits */
  waitpid(child, NULL, 0);
  bench_npy_map();
  return 0;
}
