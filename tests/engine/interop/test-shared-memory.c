/* test-shared-memory.c: storages moved into shared memory (gs_share_memory_) and tensors sent
 * to another process over a Unix socket (gs_tensor_send / gs_tensor_recv): the receiver's
 * tensor is over the same pages (a write in one process is seen in the other), the memory
 * lives while any process holds it, and a damaged, truncated or hostile message is an error
 * that leaves no descriptor open. */
#include <dlpack/dlpack.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test-util.h"

/* Descriptors open in this process. */
static int open_fds(void) {
  return test_count_entries("/proc/self/fd") - 1; /* the directory's own */
}

/* Mappings of gradscope's memfds in this process. */
static int shared_mappings(void) {
  char *maps = NULL;
  g_assert_true(g_file_get_contents("/proc/self/maps", &maps, NULL, NULL));
  int n = 0;
  for (char *p = maps; (p = strstr(p, "/memfd:gradscope-storage")); p++)
    n++;
  g_free(maps);
  return n;
}

static void socket_pair(int sv[2]) {
  g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), ==, 0);
}

/* Waits for pid and asserts it exited with status 0 (its checks passed). */
static void assert_child_ok(pid_t pid) {
  int status = 0;
  g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
  g_assert_true(WIFEXITED(status));
  g_assert_cmpint(WEXITSTATUS(status), ==, 0);
}

static void test_share_memory_moves_every_view(void) {
  gs_tensor a = gs_arange(0, 12, 1, GS_F32);
  gs_tensor v = gs_slice(a, 0, 4, 8, 1);
  gs_tensor c = gs_clone(a); /* copy-on-write: stays where it is */
  g_assert_false(gs_is_shared(a));
  const void *before = gs_data(a);
  g_assert_cmpint(gs_share_memory_(v), ==, 0);
  g_assert_true(gs_is_shared(a));
  g_assert_true(gs_is_shared(v));
  g_assert_false(gs_is_shared(c));
  g_assert_true(gs_data(a) != before);
  g_assert_true(gs_data(c) == before);
  g_assert_cmpint(shared_mappings(), ==, 1);
  gs_storage_info info;
  gs_storage_info_of(a, &info);
  g_assert_cmpint(info.origin, ==, GS_MEMORY_SHARED);
  g_assert_true(info.seen_outside);
  double expect[4] = {4, 5, 6, 7};
  test_assert_values(v, (int64_t[]){4}, 1, expect, 0, 0);
  gs_fill_(v, -1);
  g_assert_cmpfloat(gs_get(a, (int64_t[]){5}), ==, -1.0);
  g_assert_cmpfloat(gs_get(c, (int64_t[]){5}), ==, 5.0);
  /* Already shared: nothing moves. */
  const void *shared = gs_data(a);
  g_assert_cmpint(gs_share_memory_(a), ==, 0);
  g_assert_true(gs_data(a) == shared);
  /* A clone of shared bytes copies at once, into engine memory. */
  gs_tensor c2 = gs_clone(a);
  g_assert_false(gs_is_shared(c2));
  int fds = open_fds();
  gs_dispose(a);
  gs_dispose(v);
  g_assert_cmpint(open_fds(), ==, fds - 1);
  g_assert_cmpint(shared_mappings(), ==, 0);
  gs_dispose(c);
  gs_dispose(c2);
}

/* Bytes others look at cannot move: a DLPack consumer would be left with freed memory. */
static void test_bytes_seen_outside_do_not_move(void) {
  gs_tensor a = gs_arange(0, 4, 1, GS_F32);
  DLManagedTensor *out = gs_to_dlpack(a);
  int rc = 0;
  EXPECT_ERROR(rc = gs_share_memory_(a), "expected a storage only the engine sees, got one "
               "whose bytes a DLPack consumer sees (gs_to_dlpack): it cannot move into shared "
               "memory (share a gs_clone of it instead)");
  g_assert_cmpint(rc, ==, -1);
  EXPECT_ERROR(rc = gs_tensor_send(-1, a), "cannot move into shared memory");
  g_assert_false(gs_is_shared(a));
  g_assert_true(gs_data(a) == out->dl_tensor.data);
  gs_tensor c = gs_clone(a); /* a copy: free to move */
  g_assert_cmpint(gs_share_memory_(c), ==, 0);
  out->deleter(out);
  gs_dispose(c);
  gs_dispose(a);
}

static void test_send_to_another_process_shares_pages(void) {
  int sv[2];
  socket_pair(sv);
  gs_tensor a = gs_arange(0, 1000, 1, GS_F64);
  gs_tensor m = gs_reshape(a, (int64_t[]){10, 100}, 2);
  gs_tensor v = gs_t(m); /* strided */
  gs_dispose(m);
  pid_t pid = fork();
  g_assert_cmpint(pid, >=, 0);
  if (pid == 0) {
    close(sv[0]);
    gs_tensor r = gs_tensor_recv(sv[1]);
    bool ok = gs_size(r, 0) == 100 && gs_size(r, 1) == 10 && gs_stride(r, 0) == 1 &&
              gs_stride(r, 1) == 100 && gs_get(r, (int64_t[]){3, 2}) == 203.0;
    gs_storage_info info;
    ok = ok && gs_storage_info_of(r, &info) == 0 && info.origin == GS_MEMORY_RECEIVED &&
         info.peer_pid == (int64_t)getppid();
    gs_fill_(r, 42); /* into the parent's pages */
    char done = ok ? 'y' : 'n';
    ok = write(sv[1], &done, 1) == 1 && ok;
    _exit(ok ? 0 : 1);
  }
  close(sv[1]);
  g_assert_cmpint(gs_tensor_send(sv[0], v), ==, 0);
  g_assert_true(gs_is_shared(a)); /* moved into shared memory to be sent */
  char done = 0;
  g_assert_cmpint(read(sv[0], &done, 1), ==, 1);
  g_assert_cmpint(done, ==, 'y');
  assert_child_ok(pid);
  /* The child wrote through its tensor: no bytes were copied. */
  g_assert_cmpfloat(gs_get(a, (int64_t[]){0}), ==, 42.0);
  g_assert_cmpfloat(gs_get(a, (int64_t[]){999}), ==, 42.0);
  close(sv[0]);
  gs_dispose(v);
  gs_dispose(a);
}

/* The sender lets go first (and exits): the pages live on in the receiver. */
static void test_memory_lives_while_any_process_holds_it(void) {
  int sv[2];
  socket_pair(sv);
  int fds = open_fds();
  pid_t pid = fork();
  g_assert_cmpint(pid, >=, 0);
  if (pid == 0) {
    close(sv[0]);
    gs_tensor t = gs_full(GS_I64, (int64_t[]){1 << 16}, 1, 7);
    int rc = gs_tensor_send(sv[1], t);
    gs_dispose(t);
    _exit(rc == 0 ? 0 : 1);
  }
  close(sv[1]);
  assert_child_ok(pid); /* gone before the parent even looks */
  gs_tensor r = gs_tensor_recv(sv[0]);
  g_assert_cmpint(gs_numel(r), ==, 1 << 16);
  g_assert_cmpfloat(gs_get(r, (int64_t[]){12345}), ==, 7.0);
  g_assert_cmpint(shared_mappings(), ==, 1);
  gs_storage_info info;
  gs_storage_info_of(r, &info);
  g_assert_cmpint(info.peer_pid, ==, pid);
  /* Re-sending a received tensor passes the same pages on: no new segment. */
  int sv2[2];
  socket_pair(sv2);
  g_assert_cmpint(gs_tensor_send(sv2[0], r), ==, 0);
  gs_tensor again = gs_tensor_recv(sv2[1]);
  g_assert_cmpuint(gs_storage_id(again), !=, gs_storage_id(r));
  gs_fill_(again, 1);
  g_assert_cmpfloat(gs_get(r, (int64_t[]){0}), ==, 1.0);
  close(sv2[0]);
  close(sv2[1]);
  gs_dispose(again);
  gs_dispose(r);
  close(sv[0]);
  g_assert_cmpint(shared_mappings(), ==, 0);
  g_assert_cmpint(open_fds(), ==, fds - 2);
}

/* ---- damaged messages ----------------------------------------------------------------- */

/* The message gs_tensor_send writes for t (whose storage must be shared), captured from a
 * socket pair, and its storage's descriptor. */
typedef struct captured {
  unsigned char bytes[512];
  ssize_t len;
} captured;

static captured capture_message(gs_tensor t) {
  int sv[2];
  socket_pair(sv);
  g_assert_cmpint(gs_tensor_send(sv[0], t), ==, 0);
  captured c;
  char control[CMSG_SPACE(sizeof(int) * 4)];
  struct iovec iov = {c.bytes, sizeof c.bytes};
  struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                      .msg_controllen = sizeof control};
  c.len = recvmsg(sv[1], &mh, 0);
  g_assert_cmpint(c.len, >, 0);
  for (struct cmsghdr *h = CMSG_FIRSTHDR(&mh); h; h = CMSG_NXTHDR(&mh, h)) {
    int fd;
    memcpy(&fd, CMSG_DATA(h), sizeof fd);
    close(fd);
  }
  close(sv[0]);
  close(sv[1]);
  return c;
}

/* Sends len bytes of msg with the nfds descriptors fds attached. */
static void send_raw(int sock, const void *msg, size_t len, const int *fds, int nfds) {
  char control[CMSG_SPACE(sizeof(int) * 4)];
  struct iovec iov = {(void *)msg, len};
  struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
  if (nfds) {
    memset(control, 0, sizeof control);
    mh.msg_control = control;
    mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
    struct cmsghdr *h = CMSG_FIRSTHDR(&mh);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
    memcpy(CMSG_DATA(h), fds, sizeof(int) * (size_t)nfds);
  }
  g_assert_cmpint(sendmsg(sock, &mh, MSG_NOSIGNAL), ==, (ssize_t)len);
}

/* Receiving msg (with nfds memfds of memfd_bytes attached; the sending end closed after it if
 * close_after) fails naming substring and leaves the same descriptors open as before. */
static void expect_damaged(int type, const void *msg, size_t len, int nfds,
                           off_t memfd_bytes, bool close_after, const char *substring) {
  int fds_before = open_fds();
  int sv[2];
  g_assert_cmpint(socketpair(AF_UNIX, type, 0, sv), ==, 0);
  int fds[4];
  for (int i = 0; i < nfds; i++) {
    fds[i] = memfd_create("test", MFD_CLOEXEC);
    g_assert_cmpint(ftruncate(fds[i], memfd_bytes), ==, 0);
  }
  if (len)
    send_raw(sv[0], msg, len, fds, nfds);
  for (int i = 0; i < nfds; i++)
    close(fds[i]);
  if (close_after)
    close(sv[0]);
  gs_tensor r = {1};
  EXPECT_ERROR(r = gs_tensor_recv(sv[1]), substring);
  g_assert_cmpuint(r.id, ==, 0);
  if (!close_after)
    close(sv[0]);
  close(sv[1]);
  g_assert_cmpint(open_fds(), ==, fds_before);
}

static void test_damaged_messages_are_errors(void) {
  gs_tensor t = gs_arange(0, 64, 1, GS_F32);
  gs_share_memory_(t);
  captured good = capture_message(t);
  g_assert_cmpint(good.len, ==, 168);
  unsigned char m[168];

  memcpy(m, good.bytes, sizeof m);
  m[0] = 'X';
  expect_damaged(SOCK_STREAM, m, sizeof m, 1, 256, false,
                 "expected a tensor message starting \"GSt1\", got bytes 58 53 74 31");
  expect_damaged(SOCK_STREAM, good.bytes, sizeof m, 0, 0, false,
                 "expected one shared-memory descriptor with the message, got 0");
  expect_damaged(SOCK_STREAM, good.bytes, sizeof m, 3, 256, false,
                 "expected one shared-memory descriptor with the message, got 3");
  expect_damaged(SOCK_STREAM, good.bytes, sizeof m, 1, 100, false,
                 "expected shared memory of at least 256 bytes with the message, got 100 bytes");
  expect_damaged(SOCK_STREAM, good.bytes, 100, 1, 256, true,
                 "expected a tensor message of 168 bytes, got a truncated one of 100 bytes");
  expect_damaged(SOCK_STREAM, NULL, 0, 0, 0, true,
                 "expected a tensor message, got the end of the stream");
  expect_damaged(SOCK_SEQPACKET, good.bytes, 100, 1, 256, false,
                 "expected a tensor message of 168 bytes, got a truncated one of 100 bytes");

  /* Fields that lie about the geometry: each checked against the descriptor. */
  int64_t shape0;
  memcpy(m, good.bytes, sizeof m);
  shape0 = 65; /* one element past the storage */
  memcpy(m + 24, &shape0, 8);
  expect_damaged(SOCK_STREAM, m, sizeof m, 1, 256, false,
                 "expected a view inside its storage of 256 bytes, got one reaching element 64");
  memcpy(m, good.bytes, sizeof m);
  shape0 = -3;
  memcpy(m + 24, &shape0, 8);
  expect_damaged(SOCK_STREAM, m, sizeof m, 1, 256, false,
                 "expected sizes and strides >= 0 whose product fits, got size -3");
  memcpy(m, good.bytes, sizeof m);
  m[4] = 9; /* dtype */
  expect_damaged(SOCK_STREAM, m, sizeof m, 1, 256, false, "got dtype 9");
  memcpy(m, good.bytes, sizeof m);
  int64_t stride0 = INT64_MAX / 2;
  memcpy(m + 24 + 8 * GS_MAX_DIMS, &stride0, 8);
  expect_damaged(SOCK_STREAM, m, sizeof m, 1, 256, false,
                 "expected strides whose extent fits in 64 bits");

  /* A descriptor that is no memory file (a socket). */
  int fds_before = open_fds();
  int sv[2], other[2];
  socket_pair(sv);
  socket_pair(other);
  send_raw(sv[0], good.bytes, sizeof m, &other[0], 1);
  close(other[0]);
  close(other[1]);
  gs_tensor r = {1};
  EXPECT_ERROR(r = gs_tensor_recv(sv[1]), "got one that is no memory file");
  g_assert_cmpuint(r.id, ==, 0);
  close(sv[0]);
  close(sv[1]);
  g_assert_cmpint(open_fds(), ==, fds_before);

  /* Not a socket at all. */
  int p[2];
  g_assert_cmpint(pipe(p), ==, 0);
  EXPECT_ERROR(r = gs_tensor_recv(p[0]), "expected a connected Unix socket");
  EXPECT_ERROR(gs_tensor_send(p[0], t), "cannot send on socket");
  close(p[0]);
  close(p[1]);
  gs_dispose(t);
}

/* A damaged message from another process: the receiver reports it and can still receive the
 * next, good one on the same socket. */
static void test_damaged_message_from_another_process(void) {
  int sv[2];
  socket_pair(sv);
  int fds = open_fds();
  pid_t pid = fork();
  g_assert_cmpint(pid, >=, 0);
  if (pid == 0) {
    close(sv[0]);
    gs_tensor t = gs_full(GS_F32, (int64_t[]){4}, 1, 3);
    gs_share_memory_(t);
    char junk[168];
    memset(junk, 0xab, sizeof junk);
    int fd = memfd_create("junk", MFD_CLOEXEC);
    int ok = ftruncate(fd, 4096) == 0;
    char control[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {junk, sizeof junk};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                        .msg_controllen = sizeof control};
    struct cmsghdr *h = CMSG_FIRSTHDR(&mh);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(h), &fd, sizeof fd);
    ok = ok && sendmsg(sv[1], &mh, 0) == (ssize_t)sizeof junk;
    ok = ok && gs_tensor_send(sv[1], t) == 0;
    _exit(ok ? 0 : 1);
  }
  close(sv[1]);
  gs_tensor r = {1};
  EXPECT_ERROR(r = gs_tensor_recv(sv[0]), "got bytes ab ab ab ab");
  g_assert_cmpuint(r.id, ==, 0);
  g_assert_cmpint(open_fds(), ==, fds - 1);
  r = gs_tensor_recv(sv[0]);
  g_assert_cmpfloat(gs_get(r, (int64_t[]){3}), ==, 3.0);
  assert_child_ok(pid);
  g_assert_cmpint(open_fds(), ==, fds); /* the good one's descriptor, held by r */
  gs_dispose(r);
  close(sv[0]);
  g_assert_cmpint(open_fds(), ==, fds - 2);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/shared-memory/share-memory-moves-every-view",
                  test_share_memory_moves_every_view);
  g_test_add_func("/shared-memory/bytes-seen-outside-do-not-move",
                  test_bytes_seen_outside_do_not_move);
  g_test_add_func("/shared-memory/send-to-another-process-shares-pages",
                  test_send_to_another_process_shares_pages);
  g_test_add_func("/shared-memory/memory-lives-while-any-process-holds-it",
                  test_memory_lives_while_any_process_holds_it);
  g_test_add_func("/shared-memory/damaged-messages-are-errors",
                  test_damaged_messages_are_errors);
  g_test_add_func("/shared-memory/damaged-message-from-another-process",
                  test_damaged_message_from_another_process);
  return g_test_run();
}
