/* Status codes, configuration from the environment, log levels, the
 * algorithm table, and auto's choice (a pure function). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/exchange/sparse_internal.h"
#include "check.h"

static void test_status(void) {
  CHECK(strcmp(wsp_err_name(WSP_OK), "WSP_OK") == 0, "name of OK");
  CHECK(strcmp(wsp_err_name(WSP_ERR_ARG), "WSP_ERR_ARG") == 0, "name");
  CHECK(strcmp(wsp_err_name(-999), "WSP_ERR_UNKNOWN") == 0, "unknown name");
  CHECK(strcmp(wsp_strerror(WSP_ERR_NOMEM), "out of memory") == 0, "text");
  CHECK(strcmp(wsp_strerror(12345), "unknown status code") == 0, "unknown text");
  /* Every code has a distinct name and a negative value except OK. */
#define XX(n, v, t) CHECK((v) == 0 || (v) < 0, #n " is negative"); \
  CHECK(strcmp(wsp_err_name(v), "WSP_" #n) == 0, "round trip " #n);
  WSP_STATUS_MAP(XX)
#undef XX
}

static void test_config(void) {
  wsp_config_t c;
  CHECK(wsp_config_init(&c) == WSP_OK, "init");
  CHECK(c.sparse_alg == WSP_SPARSE_AUTO && c.big_message == INT_MAX, "defaults");
  CHECK(wsp_config_init(NULL) == WSP_ERR_ARG, "NULL cfg");

  setenv("WSP_SPARSE_ALGORITHM", "pex", 1);
  setenv("WSP_LOG", "debug", 1);
  setenv("WSP_BIG_MESSAGE", "4K", 1);
  setenv("WSP_SPARSE_AUTO_DENSITY", "0.5", 1);
  CHECK(wsp_config_from_env(&c) == WSP_OK, "env: %s", wsp_last_error());
  CHECK(c.sparse_alg == WSP_SPARSE_PEX, "alg from env");
  CHECK(c.log_level == WSP_LOG_DEBUG, "log from env");
  CHECK(c.big_message == 4096, "size suffix");
  CHECK(c.sparse_auto_density == 0.5, "density");

  /* A bad value is an error naming the variable and changes nothing. */
  wsp_config_t before = c;
  setenv("WSP_SPARSE_ALGORITHM", "fastest", 1);
  CHECK(wsp_config_from_env(&c) == WSP_ERR_CONFIG, "bad alg");
  CHECK(strstr(wsp_last_error(), "WSP_SPARSE_ALGORITHM") &&
            strstr(wsp_last_error(), "alltoallv"),
        "message names variable and valid values: %s", wsp_last_error());
  CHECK(memcmp(&before, &c, sizeof c) == 0, "untouched on error");
  setenv("WSP_SPARSE_ALGORITHM", "nbx", 1);
  const char *bad_sizes[] = {"-1", "12x", "", "100", "99999999999"};
  for (int i = 0; i < 5; i++) {
    setenv("WSP_BIG_MESSAGE", bad_sizes[i], 1);
    int rc = wsp_config_from_env(&c);
    if (bad_sizes[i][0] == '\0')
      CHECK(rc == WSP_OK, "empty means unset");
    else
      CHECK(rc == WSP_ERR_CONFIG && strstr(wsp_last_error(), "WSP_BIG_MESSAGE"),
            "WSP_BIG_MESSAGE=%s rejected", bad_sizes[i]);
  }
  setenv("WSP_BIG_MESSAGE", "2048", 1);
  setenv("WSP_SPARSE_AUTO_DENSITY", "1.5", 1);
  CHECK(wsp_config_from_env(&c) == WSP_ERR_CONFIG, "density > 1");
  setenv("WSP_SPARSE_AUTO_DENSITY", "0.2", 1);
  setenv("WSP_LOG", "loud", 1);
  CHECK(wsp_config_from_env(&c) == WSP_ERR_CONFIG, "bad log level");
  CHECK(strstr(wsp_last_error(), "WSP_LOG") != NULL, "names WSP_LOG");
  unsetenv("WSP_LOG");
  unsetenv("WSP_SPARSE_ALGORITHM");
  unsetenv("WSP_BIG_MESSAGE");
  unsetenv("WSP_SPARSE_AUTO_DENSITY");

  CHECK(wsp__parse_log_level("TRACE") == WSP_LOG_TRACE, "case-insensitive");
  CHECK(wsp__parse_log_level("warning") == WSP_LOG_WARN, "alias");
  CHECK(wsp__parse_log_level("3") == WSP_LOG_INFO, "number");
  CHECK(wsp__parse_log_level("6") == -1, "out of range");

  wsp_config_t a, b;
  wsp_config_init(&a);
  wsp_config_init(&b);
  b.log_level = WSP_LOG_TRACE;
  CHECK(wsp__config_fingerprint(&a) == wsp__config_fingerprint(&b),
        "log level may differ between ranks");
  b.sparse_alg = WSP_SPARSE_NBX;
  CHECK(wsp__config_fingerprint(&a) != wsp__config_fingerprint(&b),
        "algorithm must agree");
}

static void test_table(void) {
  for (int i = 0; i < WSP_SPARSE_ALG_COUNT; i++) {
    const wsp_alg_info_t *in = wsp_sparse_alg_info((wsp_sparse_alg_t)i);
    CHECK(in && in->name && in->desc && in->cost, "row %d complete", i);
    wsp_sparse_alg_t back;
    CHECK(wsp_sparse_alg_from_name(in->name, &back) == WSP_OK &&
              back == (wsp_sparse_alg_t)i,
          "name round trip %s", in->name);
  }
  CHECK(wsp_sparse_alg_info(WSP_SPARSE_ALG_COUNT) == NULL, "past the end");
  wsp_sparse_alg_t x;
  CHECK(wsp_sparse_alg_from_name(NULL, &x) == WSP_ERR_ARG, "NULL name");
  CHECK(wsp_sparse_alg_from_name("nbx", NULL) == WSP_ERR_ARG, "NULL out");
}

static void test_auto(void) {
  wsp_config_t c;
  wsp_config_init(&c);
  wsp__sparse_stats_t s = {0, 0};
  CHECK(wsp__sparse_auto_choose(64, &c, 0, &s) == WSP_SPARSE_NBX,
        "no statistics: nbx");
  s.max_sends = 6; /* 10% of 63 */
  s.max_bytes = 1024;
  CHECK(wsp__sparse_auto_choose(64, &c, 1, &s) == WSP_SPARSE_NBX, "sparse: nbx");
  s.max_sends = 32;
  CHECK(wsp__sparse_auto_choose(64, &c, 1, &s) == WSP_SPARSE_ALLTOALLV,
        "dense small: alltoallv");
  s.max_bytes = c.sparse_auto_large;
  CHECK(wsp__sparse_auto_choose(64, &c, 1, &s) == WSP_SPARSE_NBX,
        "dense large: nbx");
  c.sparse_auto_density = 1.0;
  s.max_bytes = 8;
  s.max_sends = 63;
  CHECK(wsp__sparse_auto_choose(64, &c, 1, &s) == WSP_SPARSE_NBX,
        "threshold 1.0 keeps nbx");
}

int main(void) {
  test_status();
  test_config();
  test_table();
  test_auto();
  return check_summary("test_core");
}
