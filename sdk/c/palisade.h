/*
 * palisade.h: the Palisade plugin ABI v1 for C, in one header. No dependencies beyond a C11
 * compiler; wasi-libc only for malloc/string.h.
 *
 *   clang-14 --target=wasm32-wasi -O2 -mexec-model=reactor -o plugin.wasm plugin.c
 *
 * What it gives you:
 *   - the direct calling convention (sdk/ABI.md): the header defines the exports
 *     palisade_alloc, evaluate and describe, which call your int evaluate(void) and (if you
 *     define it) int describe(void); the host functions come from module "palisade";
 *   - pal_input / pal_output / pal_error / pal_config: bytes in and out of the host;
 *   - a read-only JSON scanner over spans (pal_json_get, pal_iter_next, pal_json_string) that
 *     never allocates and never recurses;
 *   - pal_buf, a growable buffer with JSON string escaping, to write verdicts.
 *
 * Define PALISADE_NATIVE before including it to build the same code for the machine you are on
 * (unit tests): the host imports become a tiny in-process fake fed by pal_native_set_input.
 *
 * ABI: sdk/ABI.md. Licence: Apache-2.0.
 */
#ifndef PALISADE_H
#define PALISADE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The envelope schema version the header's plugins read and write, for "abi" in describe. */
#define PALISADE_ABI "1.1"

/* Every helper is static and may go unused. */
#define PAL_FN static __attribute__((unused))

/* PAL_EXPORT(name) expands to nothing: the header defines the exports. It is kept so that
 * plugins written for earlier headers, which marked evaluate and describe with it, still build. */
#define PAL_EXPORT(name)

/* ---- Host imports ------------------------------------------------------------------------ */

#if defined(PALISADE_NATIVE)
/* Native fake: one input buffer, one config value, output captured for the test. */
PAL_FN const char *pal_native_in;
PAL_FN size_t pal_native_in_len;
PAL_FN const char *pal_native_cfg; /* value of key "config", or NULL */
PAL_FN char *pal_native_out;
PAL_FN size_t pal_native_out_len;
PAL_FN void pal_native_set_input(const char *in, size_t n) { pal_native_in = in; pal_native_in_len = n; }
PAL_FN void pal_native_set_config(const char *cfg) { pal_native_cfg = cfg; }
#else
/* The direct convention: host functions of module "palisade"; the exports are defined below. */
#define PAL_DIRECT 1
#define PAL_HOST(name) __attribute__((import_module("palisade"), import_name(name)))
PAL_HOST("config_get") int32_t pal_x_config_get(const char *key, int32_t n);
PAL_HOST("result_read") void pal_x_result_read(void *dst);
PAL_HOST("log") void pal_x_log(int32_t level, const char *msg, int32_t n);
PAL_HOST("sample") int32_t pal_x_sample(const char *req, int32_t n);
PAL_HOST("infer") int32_t pal_x_infer(const char *req, int32_t n);
PAL_HOST("kv") int32_t pal_x_kv(const char *req, int32_t n);
static char *pal_d_in;      /* this call's input (the buffer palisade_alloc returned) */
static size_t pal_d_in_len, pal_d_in_cap;
static char *pal_d_out;     /* this call's output, read by the host after the export returns */
static size_t pal_d_out_len;
static int pal_d_failed;    /* the output is an error message */
static void pal_d_set(const char *s, size_t n, int failed) {
    char *b = (char *)malloc(n ? n : 1);
    if (!b) { n = 0; }
    else if (n) memcpy(b, s, n);
    free(pal_d_out);
    pal_d_out = b, pal_d_out_len = n, pal_d_failed = failed;
}
#endif

/* ---- Bytes in and out -------------------------------------------------------------------- */

/* pal_input returns the envelope as a NUL-terminated malloc'd copy (NULL if out of memory). */
PAL_FN char *pal_input(size_t *len) {
#if defined(PAL_DIRECT)
    size_t n = pal_d_in_len;
    char *b = (char *)malloc(n + 1);
    if (!b) return NULL;
    memcpy(b, pal_d_in, n);
#else
    size_t n = pal_native_in_len;
    char *b = (char *)malloc(n + 1);
    if (!b) return NULL;
    memcpy(b, pal_native_in, n);
#endif
    b[n] = 0;
    if (len) *len = n;
    return b;
}

/* pal_output sets the plugin's output (the verdict or describe JSON). */
PAL_FN void pal_output(const char *s, size_t n) {
#if defined(PAL_DIRECT)
    pal_d_set(s, n, 0);
#else
    free(pal_native_out);
    pal_native_out = (char *)malloc(n + 1);
    memcpy(pal_native_out, s, n);
    pal_native_out[n] = 0;
    pal_native_out_len = n;
#endif
}

/* pal_error records msg as the plugin error; return non-zero from the export after it. */
PAL_FN void pal_error(const char *msg) {
#if defined(PAL_DIRECT)
    pal_d_set(msg, strlen(msg), 1);
#else
    (void)msg;
#endif
}

/* pal_log writes msg to the host log at info level. */
PAL_FN void pal_log(const char *msg) {
#if defined(PAL_DIRECT)
    pal_x_log(1, msg, (int32_t)strlen(msg));
#else
    (void)msg;
#endif
}

/* pal_config returns the config value for key as a malloc'd string, or NULL when absent.
 * Key "config" holds the stage's config JSON. */
PAL_FN char *pal_config(const char *key, size_t *len) {
#if defined(PAL_DIRECT)
    int32_t n = pal_x_config_get(key, (int32_t)strlen(key));
    if (n < 0) return NULL;
    char *b = (char *)malloc((size_t)n + 1);
    if (!b) return NULL;
    if (n > 0) pal_x_result_read(b);
    b[n] = 0;
    if (len) *len = (size_t)n;
    return b;
#else
    if (strcmp(key, "config") != 0 || !pal_native_cfg) return NULL;
    size_t n = strlen(pal_native_cfg);
    char *b = (char *)malloc(n + 1);
    memcpy(b, pal_native_cfg, n + 1);
    if (len) *len = n;
    return b;
#endif
}

/* Host functions: the request is JSON, the response JSON is returned malloc'd (NULL when the
 * host returned nothing). Errors come back as {"error":"..."}. */
#if defined(PAL_DIRECT)
PAL_FN char *pal_host_call(int32_t (*fn)(const char *, int32_t), const char *req, size_t n, size_t *len) {
    int32_t m = fn(req, (int32_t)n);
    char *r = (char *)malloc((size_t)m + 1);
    if (!r) return NULL;
    if (m > 0) pal_x_result_read(r);
    r[m] = 0;
    if (len) *len = (size_t)m;
    return r;
}
PAL_FN char *pal_kv(const char *req, size_t n, size_t *len) { return pal_host_call(pal_x_kv, req, n, len); }
PAL_FN char *pal_sample(const char *req, size_t n, size_t *len) { return pal_host_call(pal_x_sample, req, n, len); }
PAL_FN char *pal_infer(const char *req, size_t n, size_t *len) { return pal_host_call(pal_x_infer, req, n, len); }

/* The exports of the direct convention. The plugin defines int evaluate(void) and, optionally,
 * int describe(void). */
int evaluate(void);
__attribute__((weak)) int describe(void);
__attribute__((export_name("palisade_alloc"))) int32_t pal_d_alloc(int32_t n) {
    if ((size_t)n > pal_d_in_cap || !pal_d_in) {
        char *b = (char *)realloc(pal_d_in, (size_t)n ? (size_t)n : 1);
        if (!b) __builtin_trap();
        pal_d_in = b, pal_d_in_cap = (size_t)n;
    }
    pal_d_in_len = (size_t)n;
    return (int32_t)(uintptr_t)pal_d_in;
}
static int64_t pal_d_run(int (*fn)(void), int32_t n) {
    pal_d_in_len = (size_t)n;
    pal_d_set(NULL, 0, 0);
    if (fn() != 0 && !pal_d_failed) pal_d_set("plugin error", 12, 1);
    int64_t packed = (int64_t)(uintptr_t)pal_d_out << 32 | (int64_t)pal_d_out_len;
    if (pal_d_failed) packed |= (int64_t)1 << 31;
    return packed;
}
__attribute__((export_name("evaluate"))) int64_t pal_d_evaluate(int32_t n) { return pal_d_run(evaluate, n); }
__attribute__((export_name("describe"))) int64_t pal_d_describe(int32_t n) {
    if (!describe) return 0; /* zero bytes: no describe (sdk/ABI.md) */
    return pal_d_run(describe, n);
}
#endif

/* ---- JSON scanning ----------------------------------------------------------------------- */

/* pal_str is a span of bytes; for JSON values it covers the raw value (quotes included). */
typedef struct {
    const char *p;
    size_t n;
} pal_str;

PAL_FN pal_str pal_span(const char *s) { pal_str r = {s, s ? strlen(s) : 0}; return r; }

PAL_FN const char *pal_ws(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

/* pal_json_skip returns the end of the JSON value starting at p (after leading whitespace), or
 * NULL if it is malformed or truncated. Iterative: nesting depth costs no stack. */
PAL_FN const char *pal_json_skip(const char *p, const char *end) {
    size_t depth = 0;
    p = pal_ws(p, end);
    if (p >= end) return NULL;
    do {
        p = pal_ws(p, end);
        if (p >= end) return NULL;
        char c = *p;
        if (c == '"') {
            for (p++;; p++) {
                if (p >= end) return NULL;
                if (*p == '\\') { p++; continue; }
                if (*p == '"') { p++; break; }
            }
        } else if (c == '{' || c == '[') {
            depth++;
            p++;
        } else if (c == '}' || c == ']') {
            if (depth == 0) return NULL;
            depth--;
            p++;
        } else if (c == ',' || c == ':') {
            if (depth == 0) return NULL;
            p++;
        } else {
            const char *s = p;
            while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ':' && *p != ' ' &&
                   *p != '\n' && *p != '\r' && *p != '\t' && *p != '"' && *p != '{' && *p != '[')
                p++;
            if (p == s) return NULL;
        }
    } while (depth > 0);
    return p;
}

/* pal_iter walks an object's members or an array's elements:
 *
 *   pal_iter it = pal_iter_of(obj);
 *   pal_str k, v;
 *   while (pal_iter_next(&it, &k, &v)) { ... }   // k is the raw quoted key; empty for arrays
 *
 * It stops at the end or at malformed input (it.bad is then set). */
typedef struct {
    const char *p, *end;
    int obj, started, bad;
} pal_iter;

PAL_FN pal_iter pal_iter_of(pal_str c) {
    pal_iter it = {c.p, c.p + c.n, 0, 0, 0};
    it.p = pal_ws(it.p, it.end);
    if (it.p >= it.end || (*it.p != '{' && *it.p != '[')) { it.bad = 1; return it; }
    it.obj = *it.p == '{';
    it.p++;
    return it;
}

PAL_FN int pal_iter_next(pal_iter *it, pal_str *key, pal_str *val) {
    if (it->bad) return 0;
    const char *p = pal_ws(it->p, it->end);
    if (p >= it->end) { it->bad = 1; return 0; }
    if (*p == (it->obj ? '}' : ']')) { it->p = p; return 0; }
    if (it->started) {
        if (*p != ',') { it->bad = 1; return 0; }
        p = pal_ws(p + 1, it->end);
    }
    it->started = 1;
    key->p = p; key->n = 0;
    if (it->obj) {
        if (p >= it->end || *p != '"') { it->bad = 1; return 0; }
        const char *k = p;
        p = pal_json_skip(p, it->end);
        if (!p) { it->bad = 1; return 0; }
        key->p = k; key->n = (size_t)(p - k);
        p = pal_ws(p, it->end);
        if (p >= it->end || *p != ':') { it->bad = 1; return 0; }
        p++;
    }
    const char *v = pal_ws(p, it->end);
    p = pal_json_skip(v, it->end);
    if (!p) { it->bad = 1; return 0; }
    val->p = v; val->n = (size_t)(p - v);
    it->p = p;
    return 1;
}

/* pal_json_key_is reports whether the raw quoted key equals name (no escapes in name). */
PAL_FN int pal_json_key_is(pal_str key, const char *name) {
    size_t n = strlen(name);
    return key.n == n + 2 && memcmp(key.p + 1, name, n) == 0;
}

/* pal_json_get finds member name of the object obj and stores its raw value. 1 = found. */
PAL_FN int pal_json_get(pal_str obj, const char *name, pal_str *val) {
    pal_iter it = pal_iter_of(obj);
    pal_str k, v;
    if (!it.obj) return 0;
    while (pal_iter_next(&it, &k, &v))
        if (pal_json_key_is(k, name)) { *val = v; return 1; }
    return 0;
}

/* pal_json_string decodes the JSON string value v into out (cap bytes, NUL-terminated) and
 * returns its length, or -1 when v is not a string, malformed, or too long. \u escapes are
 * decoded to UTF-8 (surrogate pairs included); a decoded NUL is refused. */
PAL_FN long pal_json_string(pal_str v, char *out, size_t cap) {
    if (v.n < 2 || v.p[0] != '"' || v.p[v.n - 1] != '"' || cap == 0) return -1;
    size_t o = 0;
    for (size_t i = 1; i + 1 < v.n; i++) {
        unsigned char c = (unsigned char)v.p[i];
        unsigned long cp;
        if (c < 0x20) return -1;
        if (c != '\\') {
            if (o + 1 >= cap) return -1;
            out[o++] = (char)c;
            continue;
        }
        if (++i + 1 >= v.n) return -1;
        switch (v.p[i]) {
        case '"': cp = '"'; break;
        case '\\': cp = '\\'; break;
        case '/': cp = '/'; break;
        case 'b': cp = 8; break;
        case 'f': cp = 12; break;
        case 'n': cp = 10; break;
        case 'r': cp = 13; break;
        case 't': cp = 9; break;
        case 'u': {
            if (i + 4 > v.n - 2) return -1;
            cp = 0;
            for (int k = 1; k <= 4; k++) {
                char h = v.p[i + k];
                cp <<= 4;
                if (h >= '0' && h <= '9') cp |= (unsigned long)(h - '0');
                else if (h >= 'a' && h <= 'f') cp |= (unsigned long)(h - 'a' + 10);
                else if (h >= 'A' && h <= 'F') cp |= (unsigned long)(h - 'A' + 10);
                else return -1;
            }
            i += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) { /* high surrogate: needs \uDC00-\uDFFF */
                if (i + 6 > v.n - 2 || v.p[i + 1] != '\\' || v.p[i + 2] != 'u') return -1;
                unsigned long lo = 0;
                for (int k = 3; k <= 6; k++) {
                    char h = v.p[i + k];
                    lo <<= 4;
                    if (h >= '0' && h <= '9') lo |= (unsigned long)(h - '0');
                    else if (h >= 'a' && h <= 'f') lo |= (unsigned long)(h - 'a' + 10);
                    else if (h >= 'A' && h <= 'F') lo |= (unsigned long)(h - 'A' + 10);
                    else return -1;
                }
                if (lo < 0xDC00 || lo > 0xDFFF) return -1;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                i += 6;
            }
            break;
        }
        default: return -1;
        }
        if (cp == 0) return -1;
        unsigned char u[4];
        size_t un;
        if (cp < 0x80) { u[0] = (unsigned char)cp; un = 1; }
        else if (cp < 0x800) { u[0] = (unsigned char)(0xC0 | (cp >> 6)); u[1] = (unsigned char)(0x80 | (cp & 0x3F)); un = 2; }
        else if (cp < 0x10000) { u[0] = (unsigned char)(0xE0 | (cp >> 12)); u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F)); u[2] = (unsigned char)(0x80 | (cp & 0x3F)); un = 3; }
        else { u[0] = (unsigned char)(0xF0 | (cp >> 18)); u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F)); u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F)); u[3] = (unsigned char)(0x80 | (cp & 0x3F)); un = 4; }
        if (o + un >= cap) return -1;
        memcpy(out + o, u, un);
        o += un;
    }
    out[o] = 0;
    return (long)o;
}

/* ---- Writing JSON ------------------------------------------------------------------------ */

/* pal_buf is a growable byte buffer. Zero value is empty; free buf when done. */
typedef struct {
    char *buf;
    size_t len, cap;
    int oom; /* set when an allocation failed; the content is then truncated */
} pal_buf;

PAL_FN void pal_buf_put(pal_buf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 128;
        while (c < b->len + n + 1) c *= 2;
        char *nb = (char *)realloc(b->buf, c);
        if (!nb) { b->oom = 1; return; }
        b->buf = nb;
        b->cap = c;
    }
    memcpy(b->buf + b->len, s, n);
    b->len += n;
    b->buf[b->len] = 0;
}

PAL_FN void pal_buf_s(pal_buf *b, const char *s) { pal_buf_put(b, s, strlen(s)); }

/* pal_buf_jstr appends s (n bytes) as a quoted, escaped JSON string. */
PAL_FN void pal_buf_jstr(pal_buf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    pal_buf_put(b, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        pal_buf_put(b, s + run, i - run);
        run = i + 1;
        if (c == '"') pal_buf_put(b, "\\\"", 2);
        else if (c == '\\') pal_buf_put(b, "\\\\", 2);
        else if (c == '\n') pal_buf_put(b, "\\n", 2);
        else { char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]}; pal_buf_put(b, e, 6); }
    }
    pal_buf_put(b, s + run, n - run);
    pal_buf_put(b, "\"", 1);
}

/* pal_verdict writes {"action":..,"rule":..,"reason":..} (rule/reason omitted when NULL) plus
 * the raw JSON members in extra (e.g. "\"score\":1" or NULL) as the output, and returns 0. */
PAL_FN int pal_verdict(const char *action, const char *rule, const char *reason, const char *extra) {
    pal_buf b = {0};
    pal_buf_s(&b, "{\"action\":");
    pal_buf_jstr(&b, action, strlen(action));
    if (rule) { pal_buf_s(&b, ",\"rule\":"); pal_buf_jstr(&b, rule, strlen(rule)); }
    if (reason) { pal_buf_s(&b, ",\"reason\":"); pal_buf_jstr(&b, reason, strlen(reason)); }
    if (extra && *extra) { pal_buf_s(&b, ","); pal_buf_s(&b, extra); }
    pal_buf_s(&b, "}");
    if (b.oom) { free(b.buf); pal_error("out of memory"); return 1; }
    pal_output(b.buf, b.len);
    free(b.buf);
    return 0;
}

#endif /* PALISADE_H */
