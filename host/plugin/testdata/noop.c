/* A no-op C plugin for BenchmarkCallOverhead: takes its input, answers no opinion. Built with
 * and without -DPALISADE_EXTISM to compare the calling conventions. */
#include "../../../sdk/c/palisade.h"

PAL_EXPORT("evaluate") int evaluate(void) {
    size_t n;
    char *in = pal_input(&n);
    free(in);
    pal_output("{\"action\":\"none\"}", 17);
    return 0;
}
