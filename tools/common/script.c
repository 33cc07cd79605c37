/* SPDX-License-Identifier: BSD-3-Clause */
/* Running the project's Python scripts (script.h). */
#include "script.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

const char *wsp_script_path(const char *name, const char *env) {
  static char path[4096];
  const char *e = env ? getenv(env) : NULL;
  if (e && *e) return e;
#ifdef WSP_SCRIPT_DIR_INSTALL
  snprintf(path, sizeof path, "%s/%s", WSP_SCRIPT_DIR_INSTALL, name);
  if (access(path, R_OK) == 0) return path;
#endif
#ifdef WSP_SCRIPT_DIR_SRC
  snprintf(path, sizeof path, "%s/%s", WSP_SCRIPT_DIR_SRC, name);
  if (access(path, R_OK) == 0) return path;
#endif
  return NULL;
}

const char *wsp_script_python(void) {
  return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

int wsp_script_run(const char *what, char *const argv[]) {
  pid_t pid;
  int err = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
  if (err != 0) {
    fprintf(stderr, "error: %s: cannot run %s: %s\n", what, argv[0], strerror(err));
    return -1;
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
