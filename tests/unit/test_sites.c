/* SPDX-License-Identifier: BSD-3-Clause */
/* The WSP_SITES parsers (src/core/sites.c) against hand-written cases:
 * what the syntax check accepts and refuses, the site of every rank of a
 * "ranks:" list (and its refusals: a rank out of range, listed twice or
 * on no site), and which "hosts:" patterns match which host names. And
 * the crossings of the folded exchange schedules (wsp__sites_cross) and of
 * Bruck's shifts (wsp__sites_shift)
 * against a count of every message of the schedule, written here from its
 * description, for every p up to 80 and several layouts of sites. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "patterns/bruck.h"
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

/* The most messages that leave one site in one step, counted from the
 * schedule's description: q = 2^floor(lg p), r = p - q; ranks 2i and 2i+1
 * (i < r) are a pair, whose odd member goes on as new rank i, and ranks
 * from 2r on are new rank rank - r; step k swaps new ranks nr and nr ^ 2^k;
 * the fold (d = 0) sends from each member of a pair to the other. */
static int cross_ref(const int *site_of, int p, int nsites, int d) {
  int q = 1, *old = malloc(sizeof *old * (size_t)p), *out = calloc((size_t)nsites, sizeof *out);
  while (2 * q <= p) q *= 2;
  int r = p - q;
  for (int i = 0; i < r; i++) old[i] = 2 * i + 1;
  for (int nr = r; nr < q; nr++) old[nr] = nr + r;
  if (d == 0) {
    for (int i = 0; i < 2 * r; i++)
      if (site_of[i] != site_of[i ^ 1]) out[site_of[i]]++;
  } else {
    for (int nr = 0; nr < q; nr++)
      if ((nr ^ d) < q && site_of[old[nr]] != site_of[old[nr ^ d]]) out[site_of[old[nr]]]++;
  }
  int most = 0;
  for (int s = 0; s < nsites; s++)
    if (out[s] > most) most = out[s];
  free(old);
  free(out);
  return most;
}

/* A wsp__sites_t for a layout, its arrays built here by their definition. */
static void cross_case(const int *site_of, int p, int nsites, const char *layout) {
  int *start = calloc((size_t)nsites + 1, sizeof *start), *rank = malloc(sizeof *rank * (size_t)p);
  for (int s = 0, n = 0; s < nsites; s++) {
    start[s] = n;
    for (int i = 0; i < p; i++)
      if (site_of[i] == s) rank[n++] = i;
    start[s + 1] = n;
  }
  wsp__sites_t st = {.count = nsites, .site_of = (int *)site_of, .start = start, .rank = rank};
  for (int d = 0; d < p; d = d ? 2 * d : 1) {
    int got = wsp__sites_cross(&st, p, d), want = cross_ref(site_of, p, nsites, d);
    CHECK(got == want, "%s, p %d, d %d: %d crossing, want %d", layout, p, d, got, want);
  }
  /* Bruck's allgather steps, as its schedule (src/patterns/bruck.h) sends. */
  for (int k = 0, d = 1; d < p; k++, d *= 2) {
    int *out = calloc((size_t)nsites, sizeof *out), want = 0;
    for (int r = 0; r < p; r++)
      if (site_of[r] != site_of[wsp__bruck_ag_step(r, p, k).send_peer]) out[site_of[r]]++;
    for (int s = 0; s < nsites; s++)
      if (out[s] > want) want = out[s];
    free(out);
    int got = wsp__sites_shift(&st, p, d);
    CHECK(got == want, "%s, p %d, shift %d: %d crossing, want %d", layout, p, d, got, want);
  }
  free(start);
  free(rank);
}

static void cross_cases(void) {
  int site_of[80];
  unsigned seed = 12345;
  for (int p = 2; p <= 80; p++) {
    for (int i = 0; i < p; i++) site_of[i] = i >= p / 2;
    cross_case(site_of, p, 2, "two halves");
    for (int i = 0; i < p; i++) site_of[i] = 3 * i / p;
    if (p >= 3) cross_case(site_of, p, 3, "three blocks");
    for (int i = 0; i < p; i++) site_of[i] = i % 2;
    cross_case(site_of, p, 2, "alternating");
    for (int t = 0; t < 4; t++) {
      int nsites = 2 + t % 3;
      for (int i = 0; i < p; i++) {
        seed = seed * 1103515245u + 12345u;
        site_of[i] = i < nsites ? i : (int)((seed >> 16) % (unsigned)nsites);
      }
      if (p >= nsites) cross_case(site_of, p, nsites, "random");
    }
  }
  /* Two sites of 64: only the step across half the ranks crosses, with all
   * 64 ranks of a site at once. */
  int start[3] = {0, 64, 128}, rank[128], so[128];
  for (int i = 0; i < 128; i++) rank[i] = i, so[i] = i >= 64;
  wsp__sites_t st = {.count = 2, .site_of = so, .start = start, .rank = rank};
  for (int d = 1; d < 64; d *= 2) CHECK(wsp__sites_cross(&st, 128, d) == 0, "d %d crosses", d);
  CHECK(wsp__sites_cross(&st, 128, 64) == 64, "d 64: %d", wsp__sites_cross(&st, 128, 64));
}

int main(void) {
  cross_cases();
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
