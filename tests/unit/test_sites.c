/* SPDX-License-Identifier: BSD-3-Clause */
/* The WSP_SITES parsers (src/core/sites.c) against hand-written cases:
 * what the syntax check accepts and refuses, the site of every rank of a
 * "ranks:" list (and its refusals: a rank out of range, listed twice or
 * on no site), and which "hosts:" patterns match which host names. */
#include <string.h>

#include "check.h"
#include "wsp_internal.h"

static void ranks_ok(const char *list, int p, int nsites, const int *want) {
  int got[16];
  int n = wsp__sites_parse_ranks(list, p, got);
  CHECK(n == nsites, "\"%s\" p %d: %d sites, want %d (%s)", list, p, n, nsites,
        n < 0 ? wsp_last_error() : "");
  for (int r = 0; r < p && n == nsites; r++)
    CHECK(got[r] == want[r], "\"%s\": rank %d on site %d, want %d", list, r, got[r], want[r]);
}

static void ranks_bad(const char *list, int p, const char *words) {
  int got[16];
  CHECK(wsp__sites_parse_ranks(list, p, got) == -1, "\"%s\" p %d accepted", list, p);
  CHECK(strstr(wsp_last_error(), words) != NULL, "\"%s\": message \"%s\" lacks \"%s\"", list,
        wsp_last_error(), words);
}

int main(void) {
  static const char *good[] = {NULL, "auto", "none", "map", "ranks:0", "ranks:0-3;4-7",
                               "ranks:0,2,4;1,3,5", "hosts:a*", "hosts:node[0-3],gw;node[4-7]"};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
    CHECK(wsp__sites_syntax(good[i]) == WSP_OK, "\"%s\" refused: %s", good[i] ? good[i] : "NULL",
          wsp_last_error());
  static const char *bad[] = {"", "rank:0", "ranks:", "ranks:a", "ranks:0;", "ranks:0;;1",
                              "ranks:3-1", "ranks:0-", "ranks:0 1", "ranks:-1", "hosts:",
                              "hosts:a;", "hosts:a,,b", "hosts:a b", "sites", "Auto"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK(wsp__sites_syntax(bad[i]) == WSP_ERR_CONFIG, "\"%s\" accepted", bad[i]);
    CHECK(strstr(wsp_last_error(), "WSP_SITES") != NULL, "\"%s\": message \"%s\" lacks WSP_SITES",
          bad[i], wsp_last_error());
  }
  ranks_ok("0-3;4-7", 8, 2, (const int[]){0, 0, 0, 0, 1, 1, 1, 1});
  ranks_ok("4-7;0-3", 8, 2, (const int[]){1, 1, 1, 1, 0, 0, 0, 0});
  ranks_ok("0,3;1,4,6;2,5", 7, 3, (const int[]){0, 1, 2, 0, 1, 2, 1});
  ranks_ok("0", 1, 1, (const int[]){0});
  ranks_ok("0;1;2", 3, 3, (const int[]){0, 1, 2});
  ranks_bad("0-3;4-8", 8, "rank 8 is not in this communicator of 8");
  ranks_bad("0-3;3-7", 8, "rank 3 is listed twice");
  ranks_bad("0-2;4-7", 8, "rank 3 of this communicator of 8 ranks is on no site");
  ranks_bad("0-1;x", 8, "expected a rank");
  CHECK(wsp__sites_match_host("a*;b*", "alpha") == 0, "a*");
  CHECK(wsp__sites_match_host("a*;b*", "beta") == 1, "b*");
  CHECK(wsp__sites_match_host("a*;b*", "gamma") == -1, "no match");
  CHECK(wsp__sites_match_host("n[0-3],gw;n[4-7]", "gw") == 0, "second pattern of site 0");
  CHECK(wsp__sites_match_host("n[0-3],gw;n[4-7]", "n5") == 1, "class");
  CHECK(wsp__sites_match_host("n*;n1", "n1") == 0, "the first site that matches");
  return check_summary("test_sites");
}
