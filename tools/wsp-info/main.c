/*
 * wsp-info: what this wirespeed is and what it would do here: version, the
 * MPI library it runs on, build options, the configuration taken from the
 * WSP_* environment, and the algorithms with their descriptions and costs.
 */
#include <stdio.h>
#include <string.h>

#include "wirespeed.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: wsp-info [--help]\n\n"
          "Prints wirespeed's version, MPI library, build options, the\n"
          "configuration read from WSP_* environment variables and the\n"
          "available algorithms. Runs as a single process (no mpirun needed).\n");
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    }
    fprintf(stderr, "error: unknown option %s\n", argv[i]);
    usage(stderr);
    return 2;
  }
  MPI_Init(&argc, &argv);
  char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1];
  int len = 0, major = 0, minor = 0;
  MPI_Get_library_version(lib, &len);
  lib[len] = '\0';
  char *nl = strchr(lib, '\n');
  if (nl) *nl = '\0';
  MPI_Get_version(&major, &minor);

  printf("wirespeed %s\n", wsp_version_string());
  printf("MPI library:   %s (MPI %d.%d)\n", lib, major, minor);
  printf("build:         %s\n", wsp_build_info());

  wsp_config_t cfg;
  wsp_config_init(&cfg);
  int rc = wsp_config_from_env(&cfg);
  printf("\nconfiguration (defaults + WSP_* environment):\n");
  if (rc != WSP_OK) {
    printf("  ERROR: %s\n", wsp_last_error());
  } else {
    static const char *levels[] = {"off", "error", "warn", "info", "debug", "trace"};
    printf("  WSP_LOG                  %s\n", levels[cfg.log_level]);
    printf("  WSP_SPARSE_ALGORITHM     %s\n", wsp_sparse_alg_info(cfg.sparse_alg)->name);
    printf("  WSP_SPARSE_AUTO_INTERVAL %llu\n",
           (unsigned long long)cfg.sparse_auto_interval);
    printf("  WSP_POLL_MAX_SLEEP_US    %u\n", cfg.poll_max_sleep_us);
    printf("  WSP_BIG_MESSAGE          %zu\n", cfg.big_message);
  }

  printf("\nsparse exchange algorithms (wsp_sparse_exchange, WSP_SPARSE_ALGORITHM):\n");
  for (int a = 0; a < WSP_SPARSE_ALG_COUNT; a++) {
    const wsp_alg_info_t *in = wsp_sparse_alg_info((wsp_sparse_alg_t)a);
    printf("  %-10s %s\n", in->name, in->desc);
    printf("  %-10s cost: %s\n", "", in->cost);
  }
  MPI_Finalize();
  return rc == WSP_OK ? 0 : 1;
}
