/*
 * pathguard: a Palisade plugin in C. Denies tool calls and resource reads that touch a file
 * path outside the roots configured for the stage:
 *
 *   config: {"roots": ["/home/dev/project", "/tmp"]}
 *
 * Every string argument (at any depth) that looks like a path is checked: values under a
 * path-like key (path, file, dir, source, destination...), and values that start with "/",
 * "~", "./", "../" or "file://" or contain "/../". Relative paths resolve against the
 * envelope's cwd; "." and ".." are resolved lexically; "~" cannot be resolved and is denied.
 * resources/read URIs with the file:// scheme are checked too. No roots = every path denied.
 */
#include "../../sdk/c/palisade.h"

#define MAX_PATH 4096
#define MAX_KEY 256
#define MAX_DEPTH 32
#define MAX_ROOTS 64

static char *roots[MAX_ROOTS];
static int nroots = -1; /* -1 = config not read yet */

/* normalize resolves in (against cwd when relative) into out. 0 = ok, -1 = cannot resolve. */
static int normalize(const char *in, const char *cwd, char *out, size_t cap) {
    char tmp[MAX_PATH * 2 + 2];
    if (strncmp(in, "file://", 7) == 0) in += 7;
    if (in[0] == '~') return -1;
    if (in[0] == '/') {
        if (strlen(in) >= sizeof tmp) return -1;
        strcpy(tmp, in);
    } else {
        if (!cwd || cwd[0] != '/') return -1;
        if (strlen(cwd) + 1 + strlen(in) >= sizeof tmp) return -1;
        strcpy(tmp, cwd);
        strcat(tmp, "/");
        strcat(tmp, in);
    }
    size_t o = 0;
    char *seg = tmp;
    while (*seg) {
        while (*seg == '/') seg++;
        if (!*seg) break;
        char *e = seg;
        while (*e && *e != '/') e++;
        size_t n = (size_t)(e - seg);
        if (n == 1 && seg[0] == '.') {
            /* skip */
        } else if (n == 2 && seg[0] == '.' && seg[1] == '.') {
            while (o > 0 && out[o - 1] != '/') o--;
            if (o > 0) o--; /* drop the slash too */
        } else {
            if (o + 1 + n + 1 > cap) return -1;
            out[o++] = '/';
            memcpy(out + o, seg, n);
            o += n;
        }
        seg = e;
    }
    if (o == 0) out[o++] = '/';
    out[o] = 0;
    return 0;
}

static int under_root(const char *p) {
    for (int i = 0; i < nroots; i++) {
        size_t n = strlen(roots[i]);
        if (n == 1 && roots[i][0] == '/') return 1;
        if (strncmp(p, roots[i], n) == 0 && (p[n] == 0 || p[n] == '/')) return 1;
    }
    return 0;
}

static void load_config(void) {
    nroots = 0;
    size_t n;
    char *cfg = pal_config("config", &n);
    if (!cfg) return;
    pal_str list;
    if (pal_json_get((pal_str){cfg, n}, "roots", &list)) {
        pal_iter it = pal_iter_of(list);
        pal_str k, v;
        char raw[MAX_PATH], norm[MAX_PATH];
        while (nroots < MAX_ROOTS && pal_iter_next(&it, &k, &v)) {
            if (pal_json_string(v, raw, sizeof raw) <= 0 || raw[0] != '/') continue;
            if (normalize(raw, NULL, norm, sizeof norm) != 0) continue;
            roots[nroots] = (char *)malloc(strlen(norm) + 1);
            if (!roots[nroots]) break;
            strcpy(roots[nroots++], norm);
        }
    }
    free(cfg);
}

static int pathish_key(const char *k) {
    static const char *keys[] = {"path", "paths", "file", "files", "filename", "filepath", "file_path",
                                 "dir", "directory", "folder", "source", "destination", "target",
                                 "src", "dst", "dest", "root", "cwd", "location", NULL};
    for (int i = 0; keys[i]; i++)
        if (strcmp(k, keys[i]) == 0) return 1;
    return 0;
}

static int pathish_value(const char *s) {
    return s[0] == '/' || s[0] == '~' || strncmp(s, "./", 2) == 0 || strncmp(s, "../", 3) == 0 ||
           strncmp(s, "file://", 7) == 0 || strstr(s, "/../") != NULL;
}

/* A violation found by walk. */
typedef struct {
    char key[MAX_KEY];
    char path[MAX_PATH];
    const char *why;
} violation;

/* check_string checks one string value. It is kept out of walk (noinline) so the path buffers
 * live only in the leaf's frame, not in every level of the recursion. */
__attribute__((noinline)) static int check_string(pal_str v, const char *key, const char *cwd, violation *out) {
    if (v.n == 0 || v.p[0] != '"') return 0;
    char *s = (char *)malloc(v.n + 1);
    if (!s) return 0;
    int bad = 0;
    if (pal_json_string(v, s, v.n + 1) > 0 && (pathish_key(key) || pathish_value(s))) {
        char norm[MAX_PATH];
        if (normalize(s, cwd, norm, sizeof norm) != 0) {
            bad = 1;
            out->why = "path cannot be resolved";
            strncpy(out->path, s, MAX_PATH - 1);
            out->path[MAX_PATH - 1] = 0;
        } else if (!under_root(norm)) {
            bad = 1;
            out->why = nroots ? "path outside the allowed roots" : "no roots configured";
            strcpy(out->path, norm);
        }
        if (bad) {
            strncpy(out->key, key, MAX_KEY - 1);
            out->key[MAX_KEY - 1] = 0;
        }
    }
    free(s);
    return bad;
}

/* walk checks every string under v; returns 1 and fills out at the first violation. */
static int walk(pal_str v, const char *key, const char *cwd, int depth, violation *out) {
    if (depth > MAX_DEPTH) {
        strcpy(out->key, key);
        strcpy(out->path, "");
        out->why = "arguments nested too deeply to check";
        return 1;
    }
    if (v.n > 0 && (v.p[0] == '{' || v.p[0] == '[')) {
        pal_iter it = pal_iter_of(v);
        pal_str k, e;
        char kb[MAX_KEY];
        while (pal_iter_next(&it, &k, &e)) {
            const char *ck = key;
            if (it.obj) {
                if (pal_json_string(k, kb, sizeof kb) < 0) strcpy(kb, "?");
                ck = kb;
            }
            if (walk(e, ck, cwd, depth + 1, out)) return 1;
        }
        return 0;
    }
    return check_string(v, key, cwd, out);
}

static int deny(const violation *vi, const char *prefix) {
    pal_buf ev = {0};
    pal_buf_s(&ev, "\"score\":1,\"labels\":[\"path\"],\"evidence\":[{\"label\":\"path\",\"path\":");
    char where[MAX_KEY + 16];
    strcpy(where, prefix);
    if (vi->key[0]) {
        strcat(where, ".");
        strcat(where, vi->key);
    }
    pal_buf_jstr(&ev, where, strlen(where));
    pal_buf_s(&ev, ",\"match\":");
    pal_buf_jstr(&ev, vi->path, strlen(vi->path));
    pal_buf_s(&ev, "}]");
    int rc = pal_verdict("deny", "outside-roots", vi->why, ev.oom ? NULL : ev.buf);
    free(ev.buf);
    return rc;
}

static int is(pal_str v, const char *quoted) {
    size_t n = strlen(quoted);
    return v.n == n && memcmp(v.p, quoted, n) == 0;
}

int evaluate(void) {
    if (nroots < 0) load_config();
    size_t n;
    char *in = pal_input(&n);
    if (!in) { pal_error("out of memory"); return 1; }
    pal_str env = {in, n}, method, phase, v;
    int rc;
    if (!pal_json_get(env, "method", &method)) {
        free(in);
        pal_error("envelope has no method");
        return 1;
    }
    if (pal_json_get(env, "phase", &phase) && is(phase, "\"response\"")) {
        rc = pal_verdict("none", NULL, NULL, NULL);
        free(in);
        return rc;
    }
    char cwd[MAX_PATH];
    const char *cwdp = NULL;
    if (pal_json_get(env, "cwd", &v) && pal_json_string(v, cwd, sizeof cwd) > 0) cwdp = cwd;

    violation vi = {{0}, {0}, NULL};
    int bad = 0;
    const char *prefix = "arguments";
    if (is(method, "\"tools/call\"") && pal_json_get(env, "arguments", &v)) {
        bad = walk(v, "", cwdp, 0, &vi);
    } else if (is(method, "\"resources/read\"") && pal_json_get(env, "uri", &v)) {
        prefix = "uri";
        char uri[MAX_PATH];
        if (pal_json_string(v, uri, sizeof uri) > 0 && strncmp(uri, "file://", 7) == 0)
            bad = walk(v, "", cwdp, 0, &vi);
    }
    rc = bad ? deny(&vi, prefix) : pal_verdict("none", NULL, NULL, NULL);
    free(in);
    return rc;
}

int describe(void) {
    static const char d[] = "{\"name\":\"pathguard\",\"version\":\"0.1.0\",\"abi\":\"" PALISADE_ABI
                            "\",\"phases\":[\"request\"],\"capabilities\":[]}";
    pal_output(d, sizeof d - 1);
    return 0;
}
