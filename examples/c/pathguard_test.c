/* Native unit tests of pathguard.c: cc -DPALISADE_NATIVE pathguard_test.c && ./a.out */
#include "pathguard.c"
#include <stdio.h>

static int failures;

static void expect(const char *name, const char *env, const char *want_substr) {
    pal_native_set_input(env, strlen(env));
    int rc = evaluate();
    const char *out = pal_native_out ? pal_native_out : "";
    if (rc != 0 || !strstr(out, want_substr)) {
        printf("FAIL %s: rc=%d out=%s want %s\n", name, rc, out, want_substr);
        failures++;
    } else {
        printf("ok   %s\n", name);
    }
}

static void expect_norm(const char *in, const char *cwd, const char *want) {
    char out[MAX_PATH];
    int rc = normalize(in, cwd, out, sizeof out);
    const char *got = rc == 0 ? out : "(error)";
    if (strcmp(got, want) != 0) {
        printf("FAIL normalize(%s, %s) = %s, want %s\n", in, cwd ? cwd : "NULL", got, want);
        failures++;
    }
}

int main(void) {
    expect_norm("/a/b/../c", NULL, "/a/c");
    expect_norm("/a/./b//c/", NULL, "/a/b/c");
    expect_norm("/../../etc", NULL, "/etc");
    expect_norm("x/../y", "/w", "/w/y");
    expect_norm("x", NULL, "(error)");
    expect_norm("~/.ssh", "/w", "(error)");
    expect_norm("file:///tmp/a", NULL, "/tmp/a");

    pal_native_set_config("{\"roots\":[\"/home/dev/project/\",\"/tmp\"]}");
    expect("inside", "{\"method\":\"tools/call\",\"arguments\":{\"path\":\"/tmp/x.txt\"}}", "\"action\":\"none\"");
    expect("outside", "{\"method\":\"tools/call\",\"arguments\":{\"path\":\"/etc/passwd\"}}", "\"match\":\"/etc/passwd\"");
    expect("traversal", "{\"method\":\"tools/call\",\"arguments\":{\"file\":\"/tmp/../etc/shadow\"}}", "\"deny\"");
    expect("prefix trick", "{\"method\":\"tools/call\",\"arguments\":{\"path\":\"/tmpfoo/x\"}}", "\"deny\"");
    expect("relative in cwd", "{\"method\":\"tools/call\",\"cwd\":\"/home/dev/project\",\"arguments\":{\"path\":\"src/main.go\"}}", "\"none\"");
    expect("relative escapes", "{\"method\":\"tools/call\",\"cwd\":\"/home/dev/project\",\"arguments\":{\"path\":\"../../.ssh/id_rsa\"}}", "\"deny\"");
    expect("nested array", "{\"method\":\"tools/call\",\"arguments\":{\"edits\":[{\"x\":1},{\"target\":\"/etc/hosts\"}]}}", "arguments.target");
    expect("escaped", "{\"method\":\"tools/call\",\"arguments\":{\"p\":\"\\/etc\\/passwd\"}}", "\"deny\"");
    expect("home", "{\"method\":\"tools/call\",\"arguments\":{\"cmd\":\"~/.aws/credentials\"}}", "cannot be resolved");
    expect("not a path", "{\"method\":\"tools/call\",\"arguments\":{\"message\":\"hello / world\"}}", "\"none\"");
    expect("resource", "{\"method\":\"resources/read\",\"uri\":\"file:///etc/passwd\"}", "\"deny\"");
    expect("http resource", "{\"method\":\"resources/read\",\"uri\":\"https://x/etc\"}", "\"none\"");
    expect("response", "{\"phase\":\"response\",\"method\":\"tools/call\",\"arguments\":{\"path\":\"/etc\"}}", "\"none\"");
    expect("quote in path", "{\"method\":\"tools/call\",\"arguments\":{\"path\":\"/etc/\\\"x\"}}", "\"match\":\"/etc/\\\"x\"");

    pal_native_set_input("{\"method\":", 10);
    if (evaluate() == 0) { printf("FAIL truncated envelope accepted\n"); failures++; }
    pal_native_set_input("", 0);
    if (evaluate() == 0) { printf("FAIL empty envelope accepted\n"); failures++; }

    printf("%s\n", failures ? "FAIL" : "PASS");
    return failures != 0;
}
