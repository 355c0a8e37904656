/* tensor-socket.c: tensors sent to another process over a Unix socket without copying bytes.
 *
 * A message is one fixed-size record (the geometry, the storage's size, the sender's pid) with
 * the storage's shared-memory descriptor attached by SCM_RIGHTS; the receiver maps the same
 * pages. The receiver trusts nothing in it: every field is checked against the descriptor it
 * came with, and every descriptor that arrived is closed on any error, so a damaged or hostile
 * peer costs an error, never a crash or a leaked descriptor.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "interop-impl.h"

#define WIRE_MAGIC "GSt1"

bool gs__send_with_fds(int sock, const void *buf, size_t len, const int *fds, int n_fds,
                       const char *fn) {
  size_t sent = 0;
  while (sent < len) {
    struct iovec iov = {(char *)buf + sent, len - sent};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    union {
      struct cmsghdr align;
      char buf[CMSG_SPACE(sizeof(int) * GS__MAX_SENT_FDS)];
    } control;
    if (sent == 0 && n_fds > 0) {
      memset(&control, 0, sizeof control);
      mh.msg_control = control.buf;
      mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n_fds);
      struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n_fds);
      memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)n_fds);
    }
    ssize_t n = sendmsg(sock, &mh, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      gs__error(GS_ERR_ARGUMENT, fn, "cannot send on socket %d: %s", sock,
                n < 0 ? strerror(errno) : "nothing was written");
      return false;
    }
    sent += (size_t)n;
  }
  return true;
}

bool gs__tensor_wire(gs_tensor h, gs__wire_tensor *w, int *fd, const char *fn) {
  gs__tensor *t = gs__lookup(h, fn);
  if (!t || gs_share_memory_(h) != 0)
    return false;
  memset(w, 0, sizeof *w);
  memcpy(w->magic, WIRE_MAGIC, 4);
  w->dtype = (uint32_t)t->dtype;
  w->ndim = t->ndim;
  w->offset = t->offset;
  memcpy(w->shape, t->shape, sizeof w->shape);
  memcpy(w->strides, t->strides, sizeof w->strides);
  w->nbytes = t->storage->nbytes;
  w->pid = (int64_t)gs__pid();
  gs__shared_mark_forwarded(t->storage->buffer); /* received pages sent on: not to be reused */
  *fd = t->storage->buffer->fd;
  return true;
}

int gs_tensor_send(int sock, gs_tensor h) {
  static const char fn[] = "tensor_send";
  gs__wire_tensor w;
  int fd;
  if (!gs__tensor_wire(h, &w, &fd, fn))
    return -1;
  return gs__send_with_fds(sock, &w, sizeof w, &fd, 1, fn) ? 0 : -1;
}

void gs__keep_fds(gs__received_fds *r, struct msghdr *mh) {
  if (mh->msg_flags & MSG_CTRUNC)
    r->dropped = true;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
      continue;
    size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < n; i++) {
      int fd;
      memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (r->count < GS__MAX_SENT_FDS)
        r->fd[r->count++] = fd;
      else {
        close(fd);
        r->dropped = true;
      }
    }
  }
}

void gs__close_fds(gs__received_fds *r) {
  for (int i = 0; i < r->count; i++)
    if (r->fd[i] >= 0)
      close(r->fd[i]);
  r->count = 0;
}

/* Reads one message into w; false (after reporting) if it did not all come. */
static bool recv_message(int sock, gs__wire_tensor *w, gs__received_fds *r, const char *fn) {
  int type = SOCK_STREAM;
  socklen_t type_len = sizeof type;
  if (getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &type_len) != 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a connected Unix socket, got descriptor %d: %s",
              sock, strerror(errno));
    return false;
  }
  size_t got = 0;
  while (got < sizeof *w) {
    struct iovec iov = {(char *)w + got, sizeof *w - got};
    union {
      struct cmsghdr align;
      char buf[CMSG_SPACE(sizeof(int) * GS__MAX_SENT_FDS)];
    } control;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                        .msg_controllen = sizeof control.buf};
    ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      gs__error(GS_ERR_ARGUMENT, fn, "cannot receive on socket %d: %s", sock,
                strerror(errno));
      return false;
    }
    gs__keep_fds(r, &mh);
    if (n == 0) {
      if (got == 0)
        gs__error(GS_ERR_ARGUMENT, fn, "expected a tensor message, got the end of the "
                  "stream (the peer closed socket %d)", sock);
      else
        gs__error(GS_ERR_ARGUMENT, fn, "expected a tensor message of %zu bytes, got a "
                  "truncated one of %zu bytes before the peer closed the socket", sizeof *w,
                  got);
      return false;
    }
    got += (size_t)n;
    /* A datagram or a packet is one message: what did not come now never will. */
    if (type != SOCK_STREAM && (got != sizeof *w || (mh.msg_flags & MSG_TRUNC))) {
      gs__error(GS_ERR_ARGUMENT, fn, "expected a tensor message of %zu bytes, got %s of "
                "%zu bytes", sizeof *w, got < sizeof *w ? "a truncated one" : "one", got);
      return false;
    }
  }
  return true;
}

bool gs__tensor_wire_check(const gs__wire_tensor *w, gs__tensor *t, const char *fn) {
  if (memcmp(w->magic, WIRE_MAGIC, 4) != 0) {
    const unsigned char *m = (const unsigned char *)w->magic;
    gs__error(GS_ERR_ARGUMENT, fn, "expected a tensor message starting \"" WIRE_MAGIC "\", "
              "got bytes %02x %02x %02x %02x", m[0], m[1], m[2], m[3]);
    return false;
  }
  if (w->dtype >= GS_DTYPE_COUNT || w->ndim < 0 || w->ndim > GS_MAX_DIMS || w->offset < 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a dtype below %d, 0 to %d dims and an offset "
              ">= 0, got dtype %u, %d dims, offset %lld", GS_DTYPE_COUNT, GS_MAX_DIMS,
              w->dtype, w->ndim, (long long)w->offset);
    return false;
  }
  memset(t, 0, sizeof *t);
  t->dtype = (gs_dtype)w->dtype;
  t->ndim = w->ndim;
  t->offset = w->offset;
  int64_t numel = 1, last = w->offset, step;
  for (int i = 0; i < w->ndim; i++) {
    if (w->shape[i] < 0 || w->strides[i] < 0 ||
        __builtin_mul_overflow(numel, w->shape[i], &numel)) {
      gs__error(GS_ERR_ARGUMENT, fn, "expected sizes and strides >= 0 whose product fits, "
                "got size %lld and stride %lld at dim %d", (long long)w->shape[i],
                (long long)w->strides[i], i);
      return false;
    }
    t->shape[i] = w->shape[i];
    t->strides[i] = w->strides[i];
  }
  for (int i = 0; numel > 0 && i < w->ndim; i++)
    if (__builtin_mul_overflow(w->shape[i] - 1, w->strides[i], &step) ||
        __builtin_add_overflow(last, step, &last)) {
      gs__error(GS_ERR_ARGUMENT, fn, "expected strides whose extent fits in 64 bits, got "
                "stride %lld at dim %d", (long long)w->strides[i], i);
      return false;
    }
  t->numel = numel;
  /* The last element the view reaches must lie inside the storage. */
  uint64_t elsize = gs__elsize(t->dtype);
  if (numel > 0 && ((uint64_t)last >= w->nbytes / elsize)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a view inside its storage of %llu bytes, got "
              "one reaching element %lld (of %llu bytes)", (unsigned long long)w->nbytes,
              (long long)last, (unsigned long long)elsize);
    return false;
  }
  return true;
}

bool gs__memory_file_check(int fd, uint64_t nbytes, struct stat *st, const char *fn) {
  if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a shared-memory descriptor with the message, got "
              "one that is no memory file");
    return false;
  }
  if ((uint64_t)st->st_size < gs__shared_map_bytes(nbytes)) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected shared memory of at least %llu bytes with the "
              "message, got %lld bytes",
              (unsigned long long)nbytes, (long long)st->st_size);
    return false;
  }
  return true;
}

/* The one descriptor a gs_tensor_send message brings (once its magic says it is one: a wrong
 * magic is reported by gs__tensor_wire_check, first, as before). */
static bool one_descriptor(const gs__wire_tensor *w, const gs__received_fds *r, const char *fn) {
  if (memcmp(w->magic, WIRE_MAGIC, 4) == 0 && (r->count != 1 || r->dropped)) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected one shared-memory descriptor with the message, "
              "got %d%s",
              r->count, r->dropped ? " and more the kernel dropped" : "");
    return false;
  }
  return true;
}

gs_tensor gs__tensor_over_received(gs__tensor *t, gs__buffer *b, int64_t pid, const char *fn) {
  b->peer_pid = pid;
  t->storage = gs__storage_over_buffer(b);
  if (!t->storage) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not allocate the storage record");
    return GS_NO_TENSOR;
  }
  return gs__register(t, fn);
}

gs_tensor gs_tensor_recv(int sock) {
  static const char fn[] = "tensor_recv";
  gs__wire_tensor w;
  gs__received_fds r = {.count = 0};
  if (!recv_message(sock, &w, &r, fn) || !one_descriptor(&w, &r, fn)) {
    gs__close_fds(&r);
    return GS_NO_TENSOR;
  }
  /* No cache: the message is checked and gets a mapping of its own. */
  return gs__segment_cache_take(NULL, -1, &w, r.fd[0], fn);
}
