/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The step after MPI_Finalize that any subcommand may ask for: draw the
 * run's JSON lines with python/wsp_report's plot (rank 0 only).
 */
#include <stdio.h>

#include "bench.h"
#include "script.h"

int wsp_bench_post_run(wsp_bench_post_t *post) {
  if (post->plot_png == NULL) return 0;
  const char *script = wsp_script_path("wsp_report", "WSP_PLOT_SCRIPT");
  if (script == NULL) {
    fprintf(stderr,
            "error: --plot: python/wsp_report not found (set WSP_PLOT_SCRIPT "
            "to its directory); the data is in %s\n",
            post->json_tmp);
    return 1; /* the JSON is kept for the user */
  }
  const char *py = wsp_script_python();
  char *argv[] = {(char *)py,     (char *)script, "plot",
                  post->json_tmp, "--out",        (char *)post->plot_png,
                  "--title",      post->title,    NULL};
  int rc = wsp_script_run("--plot", argv);
  if (rc == 0)
    printf("# plot: %s\n", post->plot_png);
  else if (rc > 0)
    fprintf(stderr, "error: --plot: %s %s failed\n", py, script);
  remove(post->json_tmp);
  return rc == 0 ? 0 : 1;
}
