/* The model client's settings (model.h): their defaults and checks, and the key file. What
 * the broker's --model-* options and a task's overrides go through before a request is made
 * with them; nothing here talks to a server. */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/model.h"
#include "lib/cleanup.h"
#include "lib/utf8.h"

void bro_model_cfg_default(struct bro_model_cfg *cfg)
{
        memset(cfg, 0, sizeof(*cfg));
        cfg->timeout_s = BRO_MODEL_TIMEOUT_DEFAULT;
        cfg->temperature = -1;
        cfg->retries = BRO_MODEL_RETRIES_DEFAULT;
}

int bro_model_key_check(const char *key, struct anvil_err *err)
{
        if (!*key)
                return anvil_err_set(err, EINVAL, "the key is empty");
        for (size_t i = 0; key[i]; i++)
                if ((unsigned char)key[i] < 0x21 || (unsigned char)key[i] > 0x7E)
                        return anvil_err_set(err, EINVAL,
                                             "the key has a blank, a control character or a non-ASCII byte (at byte %zu)",
                                             i);
        return 0;
}

int bro_model_url_parts(const char *url, char *host, size_t host_size, char *port, size_t port_size,
                     struct anvil_err *err)
{
        CURLU *u = curl_url();
        char *scheme = NULL, *h = NULL, *p = NULL, *user = NULL, *pass = NULL, *query = NULL, *frag = NULL;
        int r = 0;
        if (!u)
                return anvil_err_set(err, ENOMEM, "model URL: out of memory");
        if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK) {
                r = anvil_err_set(err, EINVAL, "model URL: not a URL (e.g. http://127.0.0.1:11434/v1)");
                goto out;
        }
        if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
            (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)) {
                r = anvil_err_set(err, EINVAL, "model URL: only http:// and https:// are supported");
                goto out;
        }
        if (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK ||
            curl_url_get(u, CURLUPART_PASSWORD, &pass, 0) == CURLUE_OK) {
                r = anvil_err_set(err, EINVAL,
                                  "model URL: has credentials in it; give the key by ANVIL_MODEL_KEY or --model-key-file");
                goto out;
        }
        if (curl_url_get(u, CURLUPART_QUERY, &query, 0) == CURLUE_OK ||
            curl_url_get(u, CURLUPART_FRAGMENT, &frag, 0) == CURLUE_OK) {
                r = anvil_err_set(err, EINVAL, "model URL: has a query or fragment; give the API base, e.g. https://api.openai.com/v1");
                goto out;
        }
        if (curl_url_get(u, CURLUPART_HOST, &h, 0) != CURLUE_OK || !*h) {
                r = anvil_err_set(err, EINVAL, "model URL: has no host");
                goto out;
        }
        if (curl_url_get(u, CURLUPART_PORT, &p, CURLU_DEFAULT_PORT) != CURLUE_OK) {
                r = anvil_err_set(err, EINVAL, "model URL: has no port");
                goto out;
        }
        if (host)
                bro_model_printable(h, strlen(h), host, host_size, host_size - 4);
        if (port)
                snprintf(port, port_size, "%s", p);
out:
        curl_free(scheme), curl_free(h), curl_free(p), curl_free(user), curl_free(pass), curl_free(query),
                curl_free(frag);
        curl_url_cleanup(u);
        return r;
}

static bool has_controls(const char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7F)
                        return true;
        return false;
}

int bro_model_cfg_check(const struct bro_model_cfg *cfg, struct anvil_err *err)
{
        size_t ulen = strnlen(cfg->url, sizeof(cfg->url));
        if (ulen == 0)
                return anvil_err_set(err, EINVAL, "no model server is set: give --model-url");
        if (ulen == sizeof(cfg->url))
                return anvil_err_set(err, EINVAL, "model URL: longer than %zu bytes", sizeof(cfg->url) - 1);
        if (has_controls(cfg->url) || strpbrk(cfg->url, " \t"))
                return anvil_err_set(err, EINVAL, "model URL: has a blank or a control character");
        int r = bro_model_url_parts(cfg->url, NULL, 0, NULL, 0, err);
        if (r < 0)
                return r;
        size_t mlen = strnlen(cfg->model, sizeof(cfg->model));
        if (mlen == 0)
                return anvil_err_set(err, EINVAL, "no model is set: give --model");
        if (mlen == sizeof(cfg->model))
                return anvil_err_set(err, EINVAL, "model name: longer than %zu bytes", sizeof(cfg->model) - 1);
        if (has_controls(cfg->model) || !utf8_valid((const uint8_t *)cfg->model, mlen))
                return anvil_err_set(err, EINVAL, "model name: has a control character or is not UTF-8");
        size_t klen = strnlen(cfg->key, sizeof(cfg->key));
        if (klen == sizeof(cfg->key))
                return anvil_err_set(err, EINVAL, "model key: longer than %zu bytes", sizeof(cfg->key) - 1);
        if (klen && (r = bro_model_key_check(cfg->key, err)) < 0)
                return anvil_err_prefix(err, "model key");
        if (cfg->timeout_s < 1 || cfg->timeout_s > BRO_MODEL_TIMEOUT_MAX)
                return anvil_err_set(err, EINVAL, "model timeout: %u s is not within 1..%u", cfg->timeout_s,
                                     BRO_MODEL_TIMEOUT_MAX);
        if (cfg->retries > BRO_MODEL_RETRIES_MAX)
                return anvil_err_set(err, EINVAL, "model retries: %u is more than %u", cfg->retries,
                                     BRO_MODEL_RETRIES_MAX);
        if (cfg->max_tokens > BRO_MODEL_MAX_TOKENS_MAX)
                return anvil_err_set(err, EINVAL, "model max tokens: %u is more than %u", cfg->max_tokens,
                                     BRO_MODEL_MAX_TOKENS_MAX);
        if (isnan(cfg->temperature) || cfg->temperature > BRO_MODEL_TEMPERATURE_MAX)
                return anvil_err_set(err, EINVAL, "model temperature: not within 0..%g", BRO_MODEL_TEMPERATURE_MAX);
        return 0;
}

int bro_model_read_key_file(const char *path, char *key, size_t size, struct anvil_err *err)
{
        /* O_NONBLOCK: a fifo put there must not hang the broker's start; it is refused below. */
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return anvil_err_sys(err, errno, "key file %s", path);
        struct stat st;
        if (fstat(fd, &st) < 0)
                return anvil_err_sys(err, errno, "key file %s", path);
        if (!S_ISREG(st.st_mode))
                return anvil_err_set(err, EINVAL, "key file %s: not a regular file", path);
        if (st.st_uid != geteuid())
                return anvil_err_set(err, EPERM, "key file %s: owned by uid %u, not by the broker's uid %u", path,
                                     (unsigned)st.st_uid, (unsigned)geteuid());
        if (st.st_mode & 077)
                return anvil_err_set(err, EPERM, "key file %s: open to group or others (mode %04o): chmod 600 it", path,
                                     (unsigned)(st.st_mode & 07777));
        char buf[8192];
        if (size > sizeof(buf) - 2)
                size = sizeof(buf) - 2;
        size_t n = 0;
        for (;;) { /* at most size + 1 bytes: one more than a key plus its newline may hold */
                ssize_t got = read(fd, buf + n, size + 1 - n);
                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0) {
                        explicit_bzero(buf, sizeof(buf));
                        return anvil_err_sys(err, errno, "key file %s", path);
                }
                if (got == 0)
                        break;
                n += (size_t)got;
                if (n == size + 1)
                        break;
        }
        if (n && buf[n - 1] == '\n') /* one trailing newline, as an editor leaves it */
                n--;
        if (n && buf[n - 1] == '\r')
                n--;
        int r = 0;
        if (n > size - 1)
                r = anvil_err_set(err, EFBIG, "key file %s: longer than %zu bytes", path, size - 1);
        else {
                buf[n] = 0;
                if ((r = bro_model_key_check(buf, err)) < 0)
                        (void)anvil_err_prefix(err, "key file %s", path);
                else
                        memcpy(key, buf, n + 1);
        }
        explicit_bzero(buf, sizeof(buf));
        return r;
}
