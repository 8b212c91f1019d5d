/* Framing: a 4-byte big-endian length, then the payload. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fd.h"
#include "proto/proto.h"

void proto_reader_init(struct proto_reader *r, size_t max)
{
        memset(r, 0, sizeof(*r));
        r->max = max ? max : PROTO_FRAME_MAX;
}

void proto_reader_free(struct proto_reader *r)
{
        free(r->buf);
        memset(r, 0, sizeof(*r));
}

static uint32_t frame_len(const struct proto_reader *r)
{
        uint32_t be;
        memcpy(&be, r->buf, 4);
        return ntohl(be);
}

/* A buffer larger than this is given back once it is empty: a connection that sent one large
 * frame does not keep its memory while it sits idle. */
#define READER_KEEP (64u * 1024)

/* Drops the frame handed out by the previous proto_reader_next call. */
static void reader_consume(struct proto_reader *r)
{
        if (!r->pending)
                return;
        memmove(r->buf, r->buf + r->pending, r->len - r->pending);
        r->len -= r->pending;
        r->pending = 0;
        if (r->len == 0 && r->cap > READER_KEEP) {
                free(r->buf);
                r->buf = NULL;
                r->cap = 0;
        }
}

/* The length the next frame's header declares, once its 4 bytes are in buf + data. */
static bool next_len(const struct proto_reader *r, const uint8_t *data, size_t n, uint32_t *fl)
{
        if (r->len + n < 4)
                return false;
        uint8_t h[4];
        for (size_t i = 0; i < 4; i++)
                h[i] = i < r->len ? r->buf[i] : data[i - r->len];
        uint32_t be;
        memcpy(&be, h, 4);
        *fl = ntohl(be);
        return true;
}

/* Callers drain every whole frame after each feed, so the buffer never holds more than one
 * unfinished frame (at most max + 4 bytes, checked by proto_reader_next) and the last read.
 * It grows by doubling but never past the frame its header declares (unless the same read
 * brought more): a frame of 16 MiB + 4 takes 16 MiB + 4, not 32 MiB. */
int proto_reader_feed(struct proto_reader *r, const void *data, size_t n, struct anvil_err *err)
{
        reader_consume(r);
        if (n == 0)
                return 0;
        size_t need = r->len + n;
        if (need > r->cap) {
                size_t cap = r->cap ? r->cap : 4096;
                while (cap < need)
                        cap *= 2;
                uint32_t fl;
                if (next_len(r, data, n, &fl) && fl <= r->max && need <= (size_t)fl + 4 && cap > (size_t)fl + 4)
                        cap = (size_t)fl + 4;
                uint8_t *nb = realloc(r->buf, cap);
                if (!nb)
                        return anvil_err_set(err, ENOMEM, "Out of memory buffering a frame");
                r->buf = nb;
                r->cap = cap;
        }
        memcpy(r->buf + r->len, data, n);
        r->len += n;
        return 0;
}

int proto_reader_next(struct proto_reader *r, const uint8_t **payload, size_t *len, struct anvil_err *err)
{
        reader_consume(r);
        if (r->len < 4)
                return 0;
        uint32_t fl = frame_len(r);
        if (fl == 0)
                return anvil_err_set(err, EBADMSG, "message: empty frame");
        if (fl > r->max)
                return anvil_err_set(err, EMSGSIZE, "message: frame of %u bytes is over the limit of %zu",
                                     fl, r->max);
        if (r->len - 4 < fl)
                return 0;
        *payload = r->buf + 4;
        *len = fl;
        r->pending = (size_t)fl + 4;
        return 1;
}

bool proto_reader_partial(const struct proto_reader *r)
{
        return r->len > r->pending;
}

int proto_write_msg(int fd, const struct proto_msg *m, struct anvil_err *err)
{
        _cleanup_free_ uint8_t *buf = NULL;
        size_t n;
        int r = proto_encode(m, &buf, &n, err);
        if (r < 0)
                return r;
        return fd_write_all(fd, buf, n, err);
}

int proto_read_msg(int fd, struct proto_reader *r, struct proto_msg *m, struct anvil_err *err)
{
        for (;;) {
                const uint8_t *p;
                size_t n;
                int k = proto_reader_next(r, &p, &n, err);
                if (k < 0)
                        return k;
                if (k == 1) {
                        int d = proto_decode(p, n, m, err);
                        return d < 0 ? d : 1;
                }
                uint8_t chunk[65536];
                ssize_t got = read(fd, chunk, sizeof(chunk));
                if (got < 0) {
                        if (errno == EINTR)
                                continue;
                        return anvil_err_sys(err, errno, "Failed to read a frame");
                }
                if (got == 0) {
                        if (proto_reader_partial(r))
                                return anvil_err_set(err, EBADMSG, "message: truncated frame at end of stream");
                        return 0;
                }
                k = proto_reader_feed(r, chunk, (size_t)got, err);
                if (k < 0)
                        return k;
        }
}
