/* SPDX-License-Identifier: BSD-3-Clause */
/* Status codes, configuration from the environment, log levels, the
 * algorithm table, and auto's choice (a pure function). */
#include <limits.h>
#include <stdlib.h>
#include <math.h>
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
  setenv("WSP_SPARSE_AUTO_INTERVAL", "500", 1);
  CHECK(wsp_config_from_env(&c) == WSP_OK, "env: %s", wsp_last_error());
  CHECK(c.sparse_alg == WSP_SPARSE_PEX, "alg from env");
  CHECK(c.log_level == WSP_LOG_DEBUG, "log from env");
  CHECK(c.big_message == 4096, "size suffix");
  CHECK(c.sparse_auto_interval == 500, "interval");

  /* A bad value is an error naming the variable and changes nothing. */
  wsp_config_t before = c;
  setenv("WSP_SPARSE_ALGORITHM", "fastest", 1);
  CHECK(wsp_config_from_env(&c) == WSP_ERR_CONFIG, "bad alg");
  CHECK(strstr(wsp_last_error(), "WSP_SPARSE_ALGORITHM") &&
            strstr(wsp_last_error(), "alltoallv"),
        "message names variable and valid values: %s", wsp_last_error());
  CHECK(memcmp(&before, &c, sizeof c) == 0, "untouched on error");
  setenv("WSP_SPARSE_ALGORITHM", "nbx", 1);
  /* "18014398509481985K" is (2^54 + 1) KiB: shifted into 64 bits it wraps
   * around to 1 KiB, which would be in range; " 4096" and "+4096" strtoull
   * would take; "K" is a bare suffix. */
  const char *bad_sizes[] = {"-1", "12x", "", "100", "99999999999", "18014398509481985K",
                             " -1", " 4096", "+4096", "K"};
  for (int i = 0; i < 10; i++) {
    setenv("WSP_BIG_MESSAGE", bad_sizes[i], 1);
    int rc = wsp_config_from_env(&c);
    if (bad_sizes[i][0] == '\0')
      CHECK(rc == WSP_OK, "empty means unset");
    else
      CHECK(rc == WSP_ERR_CONFIG && strstr(wsp_last_error(), "WSP_BIG_MESSAGE"),
            "WSP_BIG_MESSAGE=%s rejected", bad_sizes[i]);
  }
  setenv("WSP_BIG_MESSAGE", "2048", 1);
  setenv("WSP_SPARSE_AUTO_INTERVAL", "0", 1);
  CHECK(wsp_config_from_env(&c) == WSP_ERR_CONFIG, "interval 0");
  /* Counts, flags and times are whole numbers, not sizes: no suffix. */
  const char *counts[] = {"WSP_SPARSE_AUTO_INTERVAL", "WSP_P2P_LANES", "WSP_P2P_PROBE_MS",
                          "WSP_POLL_MAX_SLEEP_US", "WSP_WAN_CONNECTIONS"};
  const char *not_counts[] = {"1K", "2k", "0x10", "1e3", "+5", " 5"};
  for (int i = 0; i < 5; i++) {
    for (int j = 0; j < 6; j++) {
      setenv(counts[i], not_counts[j], 1);
      CHECK(wsp_config_from_env(&c) == WSP_ERR_CONFIG && strstr(wsp_last_error(), counts[i]),
            "%s=%s refused naming it", counts[i], not_counts[j]);
    }
    unsetenv(counts[i]);
  }
  setenv("WSP_P2P_PROBE_MS", "250", 1);
  CHECK(wsp_config_from_env(&c) == WSP_OK && c.p2p_probe_ms == 250, "WSP_P2P_PROBE_MS=250: %s",
        wsp_last_error());
  unsetenv("WSP_P2P_PROBE_MS");
  setenv("WSP_P2P_MIN", "1K", 1); /* a size still takes its suffix */
  CHECK(wsp_config_from_env(&c) == WSP_OK && c.p2p_min == 1024, "WSP_P2P_MIN=1K: %s",
        wsp_last_error());
  /* 0 is the default, automatic, and may be written; a sign or junk is refused by name. */
  setenv("WSP_P2P_MIN", "0", 1);
  CHECK(wsp_config_from_env(&c) == WSP_OK && c.p2p_min == 0, "WSP_P2P_MIN=0: %s", wsp_last_error());
  const char *bad_mins[] = {"-1", "4Q", "x"};
  for (int i = 0; i < 3; i++) {
    setenv("WSP_P2P_MIN", bad_mins[i], 1);
    CHECK(wsp_config_from_env(&c) == WSP_ERR_CONFIG && strstr(wsp_last_error(), "WSP_P2P_MIN"),
          "WSP_P2P_MIN=%s refused naming it", bad_mins[i]);
  }
  unsetenv("WSP_P2P_MIN");
  wsp_config_t d;
  wsp_config_init(&d);
  CHECK(d.p2p_min == 0, "p2p_min is 0 (automatic) by default, not %zu", d.p2p_min);
  setenv("WSP_SPARSE_AUTO_INTERVAL", "10", 1);
  setenv("WSP_LOG", "loud", 1);
  CHECK(wsp_config_from_env(&c) == WSP_ERR_CONFIG, "bad log level");
  CHECK(strstr(wsp_last_error(), "WSP_LOG") != NULL, "names WSP_LOG");
  unsetenv("WSP_LOG");
  /* WSP_CHECK: 0 or 1, nothing else. */
  CHECK(c.check == 0, "WSP_CHECK off by default");
  setenv("WSP_CHECK", "1", 1);
  CHECK(wsp_config_from_env(&c) == WSP_OK && c.check == 1, "WSP_CHECK=1: %s", wsp_last_error());
  const char *bad_checks[] = {"2", "-1", "yes", "1x"};
  for (int i = 0; i < 4; i++) {
    setenv("WSP_CHECK", bad_checks[i], 1);
    CHECK(wsp_config_from_env(&c) == WSP_ERR_CONFIG && strstr(wsp_last_error(), "WSP_CHECK"),
          "WSP_CHECK=%s rejected naming it", bad_checks[i]);
  }
  unsetenv("WSP_CHECK");
  /* WSP_P2P_ENCRYPT: 0 or 1, nothing else; the config field likewise. */
  CHECK(c.p2p_encrypt == 0, "WSP_P2P_ENCRYPT off by default");
  setenv("WSP_P2P_ENCRYPT", "1", 1);
  CHECK(wsp_config_from_env(&c) == WSP_OK && c.p2p_encrypt == 1, "WSP_P2P_ENCRYPT=1: %s",
        wsp_last_error());
  for (int i = 0; i < 4; i++) {
    setenv("WSP_P2P_ENCRYPT", bad_checks[i], 1);
    CHECK(wsp_config_from_env(&c) == WSP_ERR_CONFIG && strstr(wsp_last_error(), "WSP_P2P_ENCRYPT"),
          "WSP_P2P_ENCRYPT=%s rejected naming it", bad_checks[i]);
  }
  unsetenv("WSP_P2P_ENCRYPT");
  c.p2p_encrypt = 2;
  CHECK(wsp__config_check(&c) == WSP_ERR_ARG && strstr(wsp_last_error(), "cfg->p2p_encrypt"),
        "cfg.p2p_encrypt = 2 refused naming it");
  c.p2p_encrypt = -1;
  CHECK(wsp__config_check(&c) == WSP_ERR_ARG && strstr(wsp_last_error(), "cfg->p2p_encrypt"),
        "cfg.p2p_encrypt = -1 refused naming it");
  c.p2p_encrypt = 0;
  /* WSP_TRANSPORT: auto (the default), mpi or lanes; the field likewise. */
  CHECK(c.transport == WSP_TRANSPORT_AUTO, "WSP_TRANSPORT auto by default");
  const struct {
    const char *text;
    wsp_transport_t t;
  } transports[] = {
      {"mpi", WSP_TRANSPORT_MPI}, {"lanes", WSP_TRANSPORT_LANES}, {"auto", WSP_TRANSPORT_AUTO}};
  for (int i = 0; i < 3; i++) {
    setenv("WSP_TRANSPORT", transports[i].text, 1);
    CHECK(wsp_config_from_env(&c) == WSP_OK && c.transport == transports[i].t,
          "WSP_TRANSPORT=%s: %s", transports[i].text, wsp_last_error());
  }
  const char *bad_transports[] = {"LANES", "tcp", "1", "lanes "};
  for (int i = 0; i < 4; i++) {
    setenv("WSP_TRANSPORT", bad_transports[i], 1);
    CHECK(wsp_config_from_env(&c) == WSP_ERR_CONFIG && strstr(wsp_last_error(), "WSP_TRANSPORT"),
          "WSP_TRANSPORT=%s rejected naming it", bad_transports[i]);
  }
  unsetenv("WSP_TRANSPORT");
  c.transport = (wsp_transport_t)2;
  CHECK(wsp__config_check(&c) == WSP_ERR_ARG && strstr(wsp_last_error(), "cfg->transport"),
        "cfg.transport = 2 refused naming it");
  c.transport = WSP_TRANSPORT_AUTO;
  /* WSP_EAGER_LIMIT: auto (the default, 0), none, or a size. */
  CHECK(c.eager_limit == WSP_EAGER_LIMIT_AUTO, "WSP_EAGER_LIMIT auto by default");
  const struct {
    const char *text;
    size_t v;
  } eagers[] = {{"none", WSP_EAGER_LIMIT_NONE}, {"48K", 49152}, {"1", 1}, {"auto", 0}};
  for (int i = 0; i < 4; i++) {
    setenv("WSP_EAGER_LIMIT", eagers[i].text, 1);
    CHECK(wsp_config_from_env(&c) == WSP_OK && c.eager_limit == eagers[i].v,
          "WSP_EAGER_LIMIT=%s gave %zu: %s", eagers[i].text, c.eager_limit, wsp_last_error());
  }
  const char *bad_eagers[] = {"0", "AUTO", "-1", "4k4", "18446744073709551615"};
  for (int i = 0; i < 5; i++) {
    setenv("WSP_EAGER_LIMIT", bad_eagers[i], 1);
    CHECK(wsp_config_from_env(&c) == WSP_ERR_CONFIG &&
              strstr(wsp_last_error(), "WSP_EAGER_LIMIT") && c.eager_limit == 0,
          "WSP_EAGER_LIMIT=%s refused naming it, leaving the field", bad_eagers[i]);
  }
  unsetenv("WSP_EAGER_LIMIT");
  /* Where a limit came from, by name; any other value is "unknown". */
  CHECK(!strcmp(wsp_eager_from_name(WSP_EAGER_FROM_NONE), "none") &&
            !strcmp(wsp_eager_from_name(WSP_EAGER_FROM_MEASURED), "measured") &&
            !strcmp(wsp_eager_from_name(WSP_EAGER_FROM_CONFIG), "config") &&
            !strcmp(wsp_eager_from_name(WSP_EAGER_FROM_MAP), "map") &&
            !strcmp(wsp_eager_from_name(-1), "unknown") &&
            !strcmp(wsp_eager_from_name(4), "unknown"),
        "wsp_eager_from_name");
  /* The striped engine's testing aids: read where they act, refused here
   * when bad, naming the variable. */
  const struct {
    const char *var, *good, *bad;
  } aids[] = {{"WSP_P2P_FAULT_RESET", "300000", "zz"},
              {"WSP_P2P_FAULT_POLL", "1M", "-1"},
              {"WSP_P2P_FAULT_SETUP_MS", "200", "700000"},
              {"WSP_P2P_ENDGAME", "always", "sometimes"},
              {"WSP_P2P_PROBE_FIGURES", "1e6,5e6,0.0001", "1e6,0,0.1"}};
  for (int i = 0; i < 5; i++) {
    setenv(aids[i].var, aids[i].good, 1);
    CHECK(wsp_config_from_env(&c) == WSP_OK, "%s=%s: %s", aids[i].var, aids[i].good,
          wsp_last_error());
    setenv(aids[i].var, aids[i].bad, 1);
    CHECK(wsp_config_from_env(&c) == WSP_ERR_CONFIG && strstr(wsp_last_error(), aids[i].var),
          "%s=%s rejected naming it", aids[i].var, aids[i].bad);
    unsetenv(aids[i].var);
  }
  /* The probe's figures take a loss and a slow-start flag after the round
   * trip, each within its bound, and nothing after them. */
  const struct {
    const char *text;
    int ok;
  } figures[] = {{"1e6,5e6,0.02,0.001", 1},
                 {"1e6,5e6,0.02,0.001,1", 1},
                 {"1e6,5e6,0.02,0,0", 1},
                 {"1e6,5e6,0.02,1", 0},
                 {"1e6,5e6,0.02,-0.1", 0},
                 {"1e6,5e6,0.02,0,2", 0},
                 {"1e6,5e6,0.02,0,1,1", 0},
                 {"1e6,5e6,0.02,", 0},
                 {"1e6,5e6", 0},
                 {"1e6,5e6,0.02x", 0},
                 {"inf,inf,0", 0},
                 {"1e6,nan,0", 0}};
  for (size_t i = 0; i < sizeof figures / sizeof *figures; i++) {
    setenv("WSP_P2P_PROBE_FIGURES", figures[i].text, 1);
    int rc = wsp_config_from_env(&c);
    CHECK(figures[i].ok ? rc == WSP_OK
                        : rc == WSP_ERR_CONFIG && strstr(wsp_last_error(), "WSP_P2P_PROBE_FIGURES"),
          "WSP_P2P_PROBE_FIGURES=%s %s", figures[i].text,
          figures[i].ok ? "accepted" : "refused naming it");
  }
  unsetenv("WSP_P2P_PROBE_FIGURES");
  /* WSP_TIMEOUT: seconds with an optional unit, 0 to 1e6. */
  CHECK(c.timeout == 0, "WSP_TIMEOUT off by default");
  const struct {
    const char *text;
    double seconds;
  } timeouts[] = {{"30", 30}, {"2.5", 2.5}, {"500ms", 0.5}, {"2min", 120}, {"0", 0}, {"3s", 3}};
  for (int i = 0; i < 6; i++) {
    setenv("WSP_TIMEOUT", timeouts[i].text, 1);
    CHECK(wsp_config_from_env(&c) == WSP_OK && c.timeout == timeouts[i].seconds,
          "WSP_TIMEOUT=%s is %g s (got %g: %s)", timeouts[i].text, timeouts[i].seconds,
          c.timeout, wsp_last_error());
  }
  const char *bad_timeouts[] = {"-1", "soon", "5h", "1e7", "nan", "2 s", "inf"};
  for (int i = 0; i < 7; i++) {
    setenv("WSP_TIMEOUT", bad_timeouts[i], 1);
    CHECK(wsp_config_from_env(&c) == WSP_ERR_CONFIG && strstr(wsp_last_error(), "WSP_TIMEOUT"),
          "WSP_TIMEOUT=%s rejected naming it", bad_timeouts[i]);
  }
  unsetenv("WSP_TIMEOUT");
  c.timeout = -1;
  CHECK(wsp__config_check(&c) == WSP_ERR_ARG && strstr(wsp_last_error(), "cfg->timeout"),
        "cfg.timeout < 0 refused naming it");
  c.timeout = 0;
  unsetenv("WSP_SPARSE_ALGORITHM");
  unsetenv("WSP_BIG_MESSAGE");
  unsetenv("WSP_SPARSE_AUTO_INTERVAL");

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
  CHECK(wsp_sparse_alg_info((wsp_sparse_alg_t)-2) == NULL, "before auto");
  /* wsp_recvset_free: a status, NULL and an empty (already freed) set accepted. */
  wsp_recvset_t empty;
  memset(&empty, 0, sizeof empty);
  CHECK(wsp_recvset_free(NULL) == WSP_OK && wsp_recvset_free(&empty) == WSP_OK &&
            wsp_recvset_free(&empty) == WSP_OK,
        "wsp_recvset_free of NULL and of an empty set");
  /* The renamed probe configuration: NULL refused naming the argument. */
  CHECK(wsp_netmap_probe_config_init(NULL) == WSP_ERR_ARG && strstr(wsp_last_error(), "cfg"),
        "wsp_netmap_probe_config_init(NULL): %s", wsp_last_error());
  wsp_sparse_alg_t x;
  CHECK(wsp_sparse_alg_from_name(NULL, &x) == WSP_ERR_ARG, "NULL name");
  CHECK(wsp_sparse_alg_from_name("nbx", NULL) == WSP_ERR_ARG, "NULL out");
  /* The public values, as documented: auto is WSP_ALG_AUTO (-1) as for the
   * collectives, the algorithms are numbered from 0. */
  static const char *const names[] = {"nbx", "pex", "alltoallv"};
  CHECK(WSP_SPARSE_ALG_COUNT == 3 && WSP_SPARSE_AUTO == WSP_ALG_AUTO && WSP_SPARSE_AUTO == -1 &&
            WSP_SPARSE_NBX == 0 && WSP_SPARSE_PEX == 1 && WSP_SPARSE_ALLTOALLV == 2,
        "enum values");
  for (int i = 0; i < 3; i++)
    CHECK(strcmp(wsp_sparse_alg_info((wsp_sparse_alg_t)i)->name, names[i]) == 0,
          "row %d is %s", i, names[i]);
  const wsp_alg_info_t *au = wsp_sparse_alg_info(WSP_SPARSE_AUTO);
  CHECK(au && strcmp(au->name, "auto") == 0 && au->desc && au->cost, "auto's row");
  CHECK(wsp_sparse_alg_from_name("auto", &x) == WSP_OK && x == WSP_SPARSE_AUTO,
        "\"auto\" is WSP_SPARSE_AUTO");
  CHECK(wsp_sparse_alg_from_name("nbX", &x) == WSP_ERR_ARG &&
            strstr(wsp_last_error(), "\"nbX\"") &&
            strstr(wsp_last_error(), "auto, nbx, pex, alltoallv"),
        "bad name lists the valid ones: %s", wsp_last_error());
  /* auto's first exploration measures every algorithm three times; its
   * plan fits WSP__AUTO_PLAN_MAX and holds only table rows. */
  wsp__sparse_auto_t a;
  wsp__sparse_auto_init(&a, 64);
  int seen[WSP_SPARSE_ALG_COUNT] = {0};
  CHECK(a.nplan <= WSP__AUTO_PLAN_MAX, "plan of %d rounds", a.nplan);
  for (int i = 0; i < a.nplan; i++) {
    CHECK(a.plan[i] >= 0 && a.plan[i] < WSP_SPARSE_ALG_COUNT, "auto plans itself");
    if (a.plan[i] >= 0 && a.plan[i] < WSP_SPARSE_ALG_COUNT) seen[a.plan[i]]++;
  }
  for (int c = 0; c < WSP_SPARSE_ALG_COUNT; c++)
    CHECK(seen[c] >= 3, "%s planned %d times", names[c], seen[c]);
}

/* Drives the auto state machine through one exploration with the given
 * per-algorithm round times (ns) and returns the committed choice; *rounds
 * gets the exploration's length. The time of each exploring round arrives
 * with the next round, as in the library. */
static wsp_sparse_alg_t explore(wsp__sparse_auto_t *a, const uint64_t t[WSP_SPARSE_ALG_COUNT],
                                const wsp__sparse_stats_t *st, int *rounds) {
  uint64_t prev = 0;
  *rounds = 0;
  for (;;) {
    int report;
    wsp_sparse_alg_t alg = wsp__sparse_auto_next(a, 64, &report);
    if (!report) return alg;
    CHECK(alg != WSP_SPARSE_AUTO, "exploring runs a real algorithm");
    wsp__sparse_auto_update(a, 64, st, &prev);
    prev = t[alg];
    if (++*rounds > 100) return WSP_SPARSE_AUTO;
  }
}

/* Runs committed rounds until auto starts exploring; returns how many. */
static int hold(wsp__sparse_auto_t *a, const wsp__sparse_stats_t *st,
                wsp_sparse_alg_t expect) {
  int held = 0, report;
  for (;;) {
    wsp_sparse_alg_t alg = wsp__sparse_auto_next(a, 64, &report);
    if (report || held > 100000) return held;
    CHECK(alg == expect, "committed to %d, ran %d", expect, alg);
    wsp__sparse_auto_update(a, 64, st, NULL);
    held++;
  }
}

static void test_auto(void) {
  wsp__sparse_auto_t a;
  wsp__sparse_stats_t st = {.sends = 640, .bytes = 640 * 1024};
  int n, report;
  wsp__sparse_auto_init(&a, 64);
  CHECK(wsp__sparse_auto_next(&a, 1, &report) == WSP_SPARSE_NBX && !report,
        "one rank: nbx, no exploring");

  /* Each candidate wins when it is the fastest; the first exploration
   * measures each three times (10 rounds). */
  for (int w = 0; w < WSP_SPARSE_ALG_COUNT; w++) {
    uint64_t t[WSP_SPARSE_ALG_COUNT] = {150, 150, 150};
    t[w] = 100;
    wsp__sparse_auto_init(&a, 64);
    CHECK(explore(&a, t, &st, &n) == (wsp_sparse_alg_t)w, "winner %d", w);
    CHECK(n == 10, "first exploration takes %d rounds", n);
  }

  /* The choice holds for `interval` rounds; re-exploring measures each
   * candidate twice (7 rounds); the same winner doubles the interval. */
  uint64_t t[WSP_SPARSE_ALG_COUNT] = {100, 140, 145}; /* no clear loser */
  wsp__sparse_auto_init(&a, 64);
  explore(&a, t, &st, &n);
  CHECK(hold(&a, &st, WSP_SPARSE_NBX) == 64, "held 64 rounds");
  CHECK(explore(&a, t, &st, &n) == WSP_SPARSE_NBX && n == 7,
        "re-exploration: %d rounds", n);
  CHECK(a.interval == 128, "same winner doubles the interval");
  CHECK(hold(&a, &st, WSP_SPARSE_NBX) == 128, "held 128 rounds");

  /* A new winner resets the interval. */
  uint64_t t2[WSP_SPARSE_ALG_COUNT] = {150, 100, 180};
  explore(&a, t2, &st, &n);
  CHECK(a.choice == WSP_SPARSE_PEX && a.interval == 64, "new winner resets");

  /* Clear losers (1.5x or worse) sit out the next exploration, and longer
   * while they keep losing; they come back eventually. */
  uint64_t t3[WSP_SPARSE_ALG_COUNT] = {100, 300, 250};
  wsp__sparse_auto_init(&a, 64);
  explore(&a, t3, &st, &n);
  hold(&a, &st, WSP_SPARSE_NBX);
  explore(&a, t3, &st, &n);
  CHECK(n == 3, "losers skipped: %d rounds", n);
  int saw_full = 0;
  for (int i = 0; i < 40 && !saw_full; i++) {
    hold(&a, &st, WSP_SPARSE_NBX);
    explore(&a, t3, &st, &n);
    saw_full = n == 7;
  }
  CHECK(saw_full, "losers are measured again later");

  /* A candidate 4x slower than the fastest or more runs only once in an
   * exploration: here alltoallv (measured in round 3, reported in round 4)
   * loses its rounds 6 and 9; the winner is unchanged. Counting what ran
   * checks that nothing else was dropped. */
  uint64_t t4[WSP_SPARSE_ALG_COUNT] = {100, 120, 2000};
  wsp__sparse_auto_init(&a, 64);
  int ran[WSP_SPARSE_ALG_COUNT] = {0};
  for (n = 0; n < 100; n++) {
    uint64_t prev = n ? t4[a.plan[a.step - 1]] : 0;
    wsp_sparse_alg_t alg = wsp__sparse_auto_next(&a, 64, &report);
    if (!report) break;
    ran[alg]++;
    wsp__sparse_auto_update(&a, 64, &st, &prev);
  }
  CHECK(n == 8 && ran[WSP_SPARSE_ALLTOALLV] == 1 && ran[WSP_SPARSE_NBX] == 4 &&
            ran[WSP_SPARSE_PEX] == 3,
        "pruned exploration: %d rounds, nbx %d pex %d alltoallv %d", n,
        ran[WSP_SPARSE_NBX], ran[WSP_SPARSE_PEX], ran[WSP_SPARSE_ALLTOALLV]);
  CHECK(a.choice == WSP_SPARSE_NBX, "winner kept");
  /* 3.9x is not pruned. */
  uint64_t t5[WSP_SPARSE_ALG_COUNT] = {100, 120, 390};
  wsp__sparse_auto_init(&a, 64);
  CHECK(explore(&a, t5, &st, &n) == WSP_SPARSE_NBX && n == 10, "3.9x: %d rounds", n);

  /* A changed pattern (4x more messages) makes auto start over at once;
   * small changes do not. */
  wsp__sparse_auto_init(&a, 64);
  explore(&a, t, &st, &n);
  wsp__sparse_stats_t same = {.sends = 700, .bytes = 700 * 1024};
  wsp__sparse_auto_update(&a, 64, &same, NULL);
  CHECK(!a.exploring, "small change ignored");
  wsp__sparse_stats_t dense = {.sends = 4000, .bytes = 4000 * 1024};
  wsp__sparse_auto_update(&a, 64, &dense, NULL);
  CHECK(a.exploring && a.nplan == 10, "pattern change: full exploration");

  /* The cap on the interval. */
  wsp__sparse_auto_init(&a, 1);
  for (int i = 0; i < 20; i++) {
    explore(&a, t, &st, &n);
    hold(&a, &st, WSP_SPARSE_NBX);
  }
  CHECK(a.interval == 64, "interval capped at 64x the first: %llu",
        (unsigned long long)a.interval);
}

/* The back-off's caps: 50 us for ordinary waits, up to 1/8 of a bulk
 * transfer's expected time (never beyond cfg.poll_max_sleep_us), and the
 * doubling that reaches them after the spinning and yielding passes. */
static void test_backoff(void) {
  wsp_comm_t c;
  memset(&c, 0, sizeof c);
  wsp_config_init(&c.cfg);
  wsp__backoff_t b;
  wsp__backoff_init(&b, &c);
  CHECK(b.cap_us == 50, "ordinary cap %u", b.cap_us);
  wsp__backoff_init_bulk(&b, &c, 0.004); /* 4 ms: 500 us */
  CHECK(b.cap_us == 500, "bulk cap %u", b.cap_us);
  wsp__backoff_init_bulk(&b, &c, 1e-5); /* short: the ordinary cap */
  CHECK(b.cap_us == 50, "short bulk cap %u", b.cap_us);
  wsp__backoff_init_bulk(&b, &c, 10.0);
  CHECK(b.cap_us == 1000, "bulk cap clamped to the maximum: %u", b.cap_us);
  c.cfg.poll_max_sleep_us = 20;
  wsp__backoff_init_bulk(&b, &c, 10.0);
  CHECK(b.cap_us == 20, "a lower maximum bounds both: %u", b.cap_us);
  c.cfg.poll_max_sleep_us = 0;
  wsp__backoff_init(&b, &c);
  CHECK(b.cap_us == 0, "0: yield only");
  /* Sleeps double from 1 us to the cap (0.8 ms of sleeping in all). */
  c.cfg.poll_max_sleep_us = 1000;
  wsp__backoff_init_bulk(&b, &c, 0.002); /* cap 250 */
  unsigned seen[16] = {0};
  int n = 0;
  for (int i = 0; i < 300 && n < 16; i++) {
    unsigned before = b.sleep_us;
    wsp__backoff_idle(&b);
    if (b.sleep_us != before || (before == b.cap_us && i >= 256)) seen[n++] = b.sleep_us;
  }
  CHECK(seen[0] == 2 && seen[1] == 4 && seen[6] == 128 && seen[7] == 250 &&
            seen[8] == 250,
        "doubling to the cap: %u %u ... %u %u %u", seen[0], seen[1], seen[6], seen[7],
        seen[8]);
  wsp__backoff_reset(&b);
  CHECK(b.idle == 0 && b.sleep_us == 1, "reset");
  /* A short expected wait polls (yields) until 1.25x its length, past the
   * spinning and yielding passes; a long one and an ordinary wait do not. */
  wsp__backoff_init(&b, &c);
  CHECK(b.poll_until == 0, "an ordinary wait has no time to poll to");
  wsp__backoff_init_bulk(&b, &c, 0.004);
  CHECK(b.poll_until == 0, "a 4 ms wait sleeps after the passes");
  double t0 = wsp__now();
  wsp__backoff_init_bulk(&b, &c, 4e-4);
  CHECK(b.poll_until >= t0 + 4.9e-4 && b.poll_until <= wsp__now() + 5.1e-4,
        "a 0.4 ms wait polls until 1.25x: %g s after the start", b.poll_until - t0);
  b.poll_until = wsp__now() + 600; /* a limit that cannot pass during the loop */
  for (int i = 0; i < 400; i++) wsp__backoff_idle(&b);
  CHECK(b.sleep_us == 1, "slept before the time limit (next sleep %u us)", b.sleep_us);
  b.poll_until = wsp__now() - 1; /* passed: the next idle pass sleeps */
  wsp__backoff_idle(&b);
  CHECK(b.sleep_us == 2, "no sleep after the time limit (next sleep %u us)", b.sleep_us);
  /* End to end on the real clock: the first sleep comes no earlier than the
   * limit (a lower bound only, so a loaded machine cannot make it fail). */
  t0 = wsp__now();
  wsp__backoff_init_bulk(&b, &c, 4e-4);
  while (b.sleep_us == 1 && wsp__now() - t0 < 10.0) wsp__backoff_idle(&b);
  double waited = wsp__now() - t0;
  CHECK(b.sleep_us == 2 && waited >= 5e-4, "first sleep after %g s (limit 5e-4)", waited);
  /* Beyond 1 ms the wait sleeps as soon as the passes are over. */
  wsp__backoff_init_bulk(&b, &c, 2e-3);
  CHECK(b.poll_until == 0, "a 2 ms wait has no time to poll to");
}

/* Rates against values worked out by hand: 25 Mbit/s is 25e6 / 8 bytes/s. */
static void test_parse_rate(void) {
  static const struct {
    const char *s;
    double want;
  } ok[] = {{"100", 100},          {"3MB", 3e6},          {"3mb", 3e6},
            {"2.5KB", 2500},       {"1gb", 1e9},          {"7B", 7},
            {"25mbit", 3125000},   {"1.5GBIT", 1.875e8},  {"800bit", 100},
            {"64kbit", 8000}};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    double v = -1;
    CHECK(wsp_parse_rate(ok[i].s, &v) == WSP_OK && fabs(v - ok[i].want) < 1e-9 * ok[i].want,
          "rate \"%s\": %g, want %g", ok[i].s, v, ok[i].want);
  }
  const char *bad[] = {"", "fast", "-5mbit", "0", "0mbit", "3 mb", "5mbits",
                       "mbit", "inf", "nan", "1e999", "1e308gbit",
                       "1e-320bit"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    double v = 42;
    CHECK(wsp_parse_rate(bad[i], &v) == WSP_ERR_ARG && v == 42,
          "bad rate \"%s\" accepted or *out written (%g)", bad[i], v);
    CHECK(strstr(wsp_last_error(), "wsp_parse_rate") != NULL,
          "bad rate: message names the function: %s", wsp_last_error());
  }
  double v = 42;
  CHECK(wsp_parse_rate(NULL, &v) == WSP_ERR_ARG && v == 42, "NULL text");
  CHECK(wsp_parse_rate("1mbit", NULL) == WSP_ERR_ARG &&
            strstr(wsp_last_error(), "bytes_per_s"),
        "NULL out: %s", wsp_last_error());
}

/* wsp_parse_size against values written out by hand. */
static void test_parse_size(void) {
  static const struct {
    const char *s;
    size_t want;
  } ok[] = {{"0", 0},           {"4096", 4096},      {"4K", 4096},
            {"4k", 4096},       {"4KB", 4096},       {"4KiB", 4096},
            {"4kib", 4096},     {"7B", 7},           {"1M", 1048576},
            {"3MiB", 3145728},  {"2G", 2147483648u}, {"1gb", 1073741824}};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    size_t v = 1;
    CHECK(wsp_parse_size(ok[i].s, &v) == WSP_OK && v == ok[i].want,
          "size \"%s\" = %zu (want %zu)", ok[i].s, v, ok[i].want);
  }
  /* Signs, blanks, fractions, bare or unknown or doubled units, and values
   * that a unit would shift past 64 bits ((2^54 + 1) KiB wraps to 1 KiB). */
  const char *bad[] = {"-1", "+4", " 4", "4 ", "1.5K", "K", "", "4BB", "4KiBB", "4T",
                       "4Kb/s", "18014398509481985K", "99999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    size_t v = 42;
    CHECK(wsp_parse_size(bad[i], &v) == WSP_ERR_ARG && v == 42,
          "size \"%s\" refused, output untouched", bad[i]);
    CHECK(strstr(wsp_last_error(), "wsp_parse_size") != NULL, "message: %s",
          wsp_last_error());
  }
  size_t v = 42;
  CHECK(wsp_parse_size(NULL, &v) == WSP_ERR_ARG && v == 42, "NULL text");
  CHECK(wsp_parse_size("1K", NULL) == WSP_ERR_ARG, "NULL output");
}

int main(void) {
  test_status();
  test_backoff();
  test_config();
  test_parse_rate();
  test_parse_size();
  test_table();
  test_auto();
  return check_summary("test_core");
}
