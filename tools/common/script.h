/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Running the project's Python scripts from the tools (the plots drawn
 * after a run): where a script is, which python runs it, and running it.
 * Nothing here calls MPI; the tools call it on rank 0 after MPI_Finalize.
 */
#ifndef WSP_SCRIPT_H
#define WSP_SCRIPT_H

/* The path of python/<name>: the environment variable `env` when set,
 * else the installed copy, else the source tree's; NULL when none is
 * readable. */
const char *wsp_script_path(const char *name, const char *env);
/* Debian's python3 (which has python3-matplotlib) before whatever python3
 * is first on PATH (often one without matplotlib). */
const char *wsp_script_python(void);
/* Runs argv and waits: 0 when it exited with status 0, 1 when it failed,
 * -1 when it could not start (a message naming `what` is printed). */
int wsp_script_run(const char *what, char *const argv[]);

#endif
