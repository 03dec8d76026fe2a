/* Native unit tests: cc -DPALISADE_NATIVE plugin_test.c && ./a.out */
#include "plugin.c"
#include <stdio.h>

static int run(const char *env) {
    pal_native_set_input(env, strlen(env));
    return evaluate();
}

int main(void) {
    int bad = 0;
    pal_native_set_config("{\"deny\":[\"delete_repo\"]}");
    if (run("{\"phase\":\"request\",\"method\":\"tools/call\",\"tool\":\"delete_repo\"}") != 0 || !strstr(pal_native_out, "\"deny\"")) { puts("FAIL deny"); bad++; }
    if (run("{\"phase\":\"request\",\"method\":\"tools/call\",\"tool\":\"echo\"}") != 0 || !strstr(pal_native_out, "\"none\"")) { puts("FAIL none"); bad++; }
    if (run("{\"method\":") == 0) { puts("FAIL malformed accepted"); bad++; }
    puts(bad ? "FAIL" : "PASS");
    return bad != 0;
}
