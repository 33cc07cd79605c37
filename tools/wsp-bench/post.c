/*
 * The step after MPI_Finalize that any subcommand may ask for: draw the
 * run's JSON lines with python/wsp_plot.py (rank 0 only).
 */
#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

/* WSP_PLOT_SCRIPT, else the installed copy, else the source tree's. */
static const char *plot_script(void) {
  const char *env = getenv("WSP_PLOT_SCRIPT");
  if (env && *env) return env;
#ifdef WSP_PLOT_SCRIPT_INSTALL
  if (access(WSP_PLOT_SCRIPT_INSTALL, R_OK) == 0) return WSP_PLOT_SCRIPT_INSTALL;
#endif
#ifdef WSP_PLOT_SCRIPT_SRC
  if (access(WSP_PLOT_SCRIPT_SRC, R_OK) == 0) return WSP_PLOT_SCRIPT_SRC;
#endif
  return NULL;
}

/* Runs argv and waits: 0 when it exited with status 0, 1 when it failed,
 * -1 when it could not start (message printed). */
static int run_and_wait(char *const argv[]) {
  pid_t pid;
  int err = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
  if (err != 0) {
    fprintf(stderr, "error: --plot: cannot run %s: %s\n", argv[0], strerror(err));
    return -1;
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

int wsp_bench_post_run(wsp_bench_post_t *post) {
  if (post->plot_png == NULL) return 0;
  const char *script = plot_script();
  if (script == NULL) {
    fprintf(stderr,
            "error: --plot: python/wsp_plot.py not found (set WSP_PLOT_SCRIPT "
            "to its path); the data is in %s\n",
            post->json_tmp);
    return 1; /* the JSON is kept for the user */
  }
  /* Debian's python3 (with python3-matplotlib) before whatever is first
   * on PATH (often a pyenv without matplotlib). */
  const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3"
                                                         : "python3";
  char *argv[] = {(char *)py, (char *)script, post->json_tmp, "--out",
                  (char *)post->plot_png, "--title", post->title, NULL};
  int rc = run_and_wait(argv);
  if (rc == 0)
    printf("# plot: %s\n", post->plot_png);
  else if (rc > 0)
    fprintf(stderr, "error: --plot: %s %s failed\n", py, script);
  remove(post->json_tmp);
  return rc == 0 ? 0 : 1;
}
