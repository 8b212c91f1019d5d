/* libFuzzer target for the protocol (`make fuzz`): the decoder and the frame reader are the
 * first code to touch bytes from clients and from inside the jail.
 *
 * The first input byte picks the mode; the rest is the data.
 *   odd:  the data is one payload for proto_decode. A message that decodes must encode, decode
 *         again and encode to the same bytes (the encoding is canonical); an error must name a
 *         path, as DESIGN §3 promises.
 *   even: the data is a byte stream for proto_reader, fed once whole and once in chunks whose
 *         sizes come from the first byte; both must yield the same frames and end the same way.
 *         Every frame is then decoded as above.
 *
 * Built with -DFUZZ_SEEDS instead, this file is a small program that writes a seed corpus (one
 * filled message of every type, in both modes) so the fuzzer starts from valid messages. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef FUZZ_SEEDS

/* Decoder errors start with "message" (the frame as a whole, or its envelope) or with the
 * message type's name: the path of the field to blame. */
static void check_error(const struct anvil_err *err)
{
        if (err->code <= 0 || !strstr(err->msg, ": "))
                abort();
        if (strncmp(err->msg, "message", 7) == 0)
                return;
        for (unsigned t = 0; t < _PROTO_TYPE_MAX; t++) {
                size_t n = strlen(proto_schemas[t]->name);
                if (strncmp(err->msg, proto_schemas[t]->name, n) == 0 &&
                    (err->msg[n] == '.' || err->msg[n] == ':'))
                        return;
        }
        /* Out of memory is the one error with no field; libFuzzer's -rss_limit_mb makes it rare. */
        if (err->code == ENOMEM)
                return;
        fprintf(stderr, "error without a path: %s\n", err->msg);
        abort();
}

static void decode_roundtrip(const uint8_t *p, size_t n)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        struct proto_msg m, m2;
        if (proto_decode(p, n, &m, &err) < 0) {
                check_error(&err);
                char field[256];
                proto_err_field(&err, field, sizeof(field));
                if (strlen(field) >= sizeof(field) || strchr(field, ' '))
                        abort();
                return;
        }
        uint8_t *b1 = NULL, *b2 = NULL;
        size_t l1, l2;
        if (proto_encode(&m, &b1, &l1, &err) < 0) {
                /* Re-encoding writes every absent optional field as nil, so a message near the
                 * frame limit may not fit again; any other failure is a bug. */
                if (err.code != EMSGSIZE)
                        abort();
                proto_msg_free(&m);
                return;
        }
        /* What we encode we must accept, and it must come back identical. */
        if (proto_decode(b1 + 4, l1 - 4, &m2, &err) < 0) {
                fprintf(stderr, "re-decode failed: %s\n", err.msg);
                abort();
        }
        if (m2.type != m.type || proto_encode(&m2, &b2, &l2, &err) < 0)
                abort();
        if (l1 != l2 || memcmp(b1, b2, l1) != 0)
                abort();
        free(b1);
        free(b2);
        proto_msg_free(&m);
        proto_msg_free(&m2);
}

struct outcome {
        unsigned frames;
        uint64_t hash; /* FNV-1a over every frame's length and payload */
        int status;    /* 0, or what proto_reader_next failed with */
        bool partial;
};

static void hash_bytes(uint64_t *h, const void *p, size_t n)
{
        const uint8_t *b = p;
        for (size_t i = 0; i < n; i++)
                *h = (*h ^ b[i]) * 0x100000001b3ull;
}

/* Drains every whole frame, as the reader's callers must after each feed. False once the
 * stream is corrupt. */
static bool drain(struct proto_reader *r, struct outcome *o, bool decode)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        for (;;) {
                const uint8_t *p;
                size_t n;
                int k = proto_reader_next(r, &p, &n, &err);
                if (k < 0) {
                        check_error(&err);
                        o->status = k;
                        return false;
                }
                if (k == 0)
                        return true;
                if (n == 0 || n > r->max)
                        abort();
                o->frames++;
                hash_bytes(&o->hash, &n, sizeof(n));
                hash_bytes(&o->hash, p, n);
                if (decode)
                        decode_roundtrip(p, n);
        }
}

static void run_reader(const uint8_t *data, size_t size, size_t max, uint8_t seed, bool chunked,
                       struct outcome *o)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        struct proto_reader r;
        uint32_t x = 0x9e3779b9u ^ seed ^ (uint32_t)size;
        size_t span = (size_t)1 << (seed >> 1 & 7); /* chunks of 1..2^k bytes */
        memset(o, 0, sizeof(*o));
        o->hash = 0xcbf29ce484222325ull;
        proto_reader_init(&r, max);
        size_t off = 0;
        while (off < size) {
                size_t n = size - off;
                if (chunked) {
                        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
                        n = 1 + x % span;
                        if (n > size - off)
                                n = size - off;
                }
                if (proto_reader_feed(&r, data + off, n, &err) < 0)
                        abort(); /* only out of memory, and inputs are small */
                off += n;
                if (!drain(&r, o, !chunked))
                        break;
        }
        if (o->status == 0)
                o->partial = proto_reader_partial(&r);
        proto_reader_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size == 0)
                return 0;
        uint8_t mode = data[0];
        data++, size--;
        if (mode & 1) {
                decode_roundtrip(data, size);
                return 0;
        }
        /* A lowered limit now and then, so both sides of it are reachable with small inputs. */
        size_t max = mode & 0x80 ? 64 : 0;
        struct outcome whole, chunks;
        run_reader(data, size, max, mode, false, &whole);
        run_reader(data, size, max, mode, true, &chunks);
        if (whole.frames != chunks.frames || whole.hash != chunks.hash || whole.status != chunks.status ||
            whole.partial != chunks.partial)
                abort();
        return 0;
}

#else /* FUZZ_SEEDS */

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every field set, arrays of one item, so each seed reaches every branch of its schema. */
static void fill(const struct proto_schema *s, void *obj)
{
        for (size_t i = 0; i < s->n_fields; i++) {
                const struct proto_field *f = &s->fields[i];
                void *p = (uint8_t *)obj + f->offset;
                switch (f->type) {
                case PF_STR:
                        *(char **)p = proto_strdup("x\xC3\xA9");
                        break;
                case PF_BIN:
                        ((struct proto_bytes *)p)->data = (uint8_t *)proto_strdup("a\x01z");
                        ((struct proto_bytes *)p)->len = 3;
                        break;
                case PF_UINT:
                        *(uint64_t *)p = 1;
                        break;
                case PF_OPT_INT:
                        *(struct proto_opt_int *)p = (struct proto_opt_int){ true, -1 };
                        break;
                case PF_DOUBLE:
                        *(double *)p = 1.5;
                        break;
                case PF_BOOL:
                        *(bool *)p = true;
                        break;
                case PF_STRUCT:
                        fill(f->sub, p);
                        break;
                case PF_OPT_STRUCT:
                        *(void **)p = calloc(1, f->sub->size);
                        fill(f->sub, *(void **)p);
                        break;
                case PF_ARRAY:
                        fill(f->sub, proto_array_push(p, f->sub->size));
                        break;
                case PF_STRV:
                        (void)proto_strv_push(p, "y");
                        break;
                }
        }
}

static int write_seed(const char *dir, const char *kind, const char *type, uint8_t mode, const uint8_t *a,
                      size_t an, const uint8_t *b, size_t bn)
{
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s-%s", dir, kind, type);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
                perror(path);
                return -1;
        }
        int ok = write(fd, &mode, 1) == 1 && write(fd, a, an) == (ssize_t)an &&
                 (bn == 0 || write(fd, b, bn) == (ssize_t)bn);
        (void)close(fd);
        return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
        if (argc != 2) {
                fprintf(stderr, "usage: %s DIR\n", argv[0]);
                return 2;
        }
        (void)mkdir(argv[1], 0755);
        for (unsigned t = 0; t < _PROTO_TYPE_MAX; t++) {
                struct anvil_err err = ANVIL_ERR_INIT;
                struct proto_msg m = { .type = (enum proto_type)t };
                uint8_t *buf;
                size_t len;
                fill(proto_schemas[t], &m.u);
                if (proto_encode(&m, &buf, &len, &err) < 0) {
                        fprintf(stderr, "%s\n", err.msg);
                        return 1;
                }
                const char *name = proto_schemas[t]->name;
                /* Mode 1: the payload alone; 0: two whole frames, chunks of 1 byte; 6: a frame and
                 * a half, chunks of up to 8 bytes. */
                if (write_seed(argv[1], "decode", name, 1, buf + 4, len - 4, NULL, 0) < 0 ||
                    write_seed(argv[1], "stream", name, 0, buf, len, buf, len) < 0 ||
                    write_seed(argv[1], "cut", name, 6, buf, len, buf, len / 2) < 0)
                        return 1;
                free(buf);
                proto_msg_free(&m);
        }
        return 0;
}

#endif
