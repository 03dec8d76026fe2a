/* A no-op C plugin for BenchmarkCallOverhead: takes its input, answers no opinion. */
#include "../../../sdk/c/palisade.h"

int evaluate(void) {
    size_t n;
    char *in = pal_input(&n);
    free(in);
    pal_output("{\"action\":\"none\"}", 17);
    return 0;
}
