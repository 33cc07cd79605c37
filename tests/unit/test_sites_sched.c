/* SPDX-License-Identifier: BSD-3-Clause */
/* The multi-site layout (patterns/sites_sched.h), for every site size q up
 * to 24, every n <= q and several counts: groups and pieces must cut the
 * ranks and the message into consecutive parts, each piece inside its
 * group's block. Then the two algorithms are simulated element by element
 * on 2 and 3 sites of uneven sizes (n up to the smallest site):
 *   bcast: the root's blocks to the gateways of its site, the gateways'
 *     blocks to the same gateways of the other sites, the pieces to the
 *     groups, the ring allgather; every transfer must send only what the
 *     sender holds, and every rank must end with every element;
 *   allreduce: the ring reduce-scatter, the pieces to the gateways, the
 *     gateways' exchange, the pieces back, the ring allgather; each
 *     element is the set of ranks whose contributions it holds (a bit
 *     mask), a sum must never add a contribution twice, and every rank
 *     must end with every rank's contribution in every element. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "patterns/ring.h"
#include "patterns/sites_sched.h"

static void check_layout(int q, int n, size_t count) {
  size_t end = 0;
  int g_prev = 0;
  for (int i = 0; i < q; i++) {
    int g = wsp__ss_group(q, n, i);
    CHECK(g >= 0 && g < n, "q %d n %d: index %d in group %d", q, n, i, g);
    int gw = wsp__ss_gateway(q, n, g), gs = wsp__ss_group_size(q, n, g);
    CHECK(gw <= i && i < gw + gs, "q %d n %d: index %d outside group %d", q, n, i, g);
    CHECK(g == g_prev || g == g_prev + 1, "q %d n %d: groups not consecutive", q, n);
    CHECK(gs == q / n || gs == q / n + 1, "q %d n %d: group %d has %d ranks", q, n, g, gs);
    g_prev = g;
    size_t s, l, bs, bl;
    wsp__ss_piece(count, q, n, i, &s, &l);
    wsp__ss_block(count, n, g, &bs, &bl);
    CHECK(s == end, "q %d n %d count %zu: piece %d starts at %zu, not %zu", q, n, count, i, s,
          end);
    CHECK(s >= bs && s + l <= bs + bl, "q %d n %d count %zu: piece %d outside block %d", q, n,
          count, i, g);
    end = s + l;
  }
  CHECK(end == count, "q %d n %d: pieces end at %zu, not %zu", q, n, end, count);
  CHECK(g_prev == n - 1, "q %d n %d: the last index is in group %d", q, n, g_prev);
}

/* Ranks are numbered site by site: site s's local index i is base[s] + i. */
typedef struct {
  int sites, q[3], base[4], n;
  size_t count;
} world_t;

static int local_of(const world_t *w, int s, int i, int rot) {
  /* rot: the root's site rotates so that the root is index 0. */
  return (i + rot) % w->q[s];
}

static void sim_bcast(const world_t *w, int root_site, int root_idx) {
  int p = w->base[w->sites];
  size_t c = w->count;
  unsigned char *have = calloc((size_t)p * (c ? c : 1), 1);
#define H(r, e) have[(size_t)(r) * c + (e)]
  int root = w->base[root_site] + root_idx;
  for (size_t e = 0; e < c; e++) H(root, e) = 1;
  /* Rank of virtual index v on site s (rotated at the root's site). */
#define RANK(s, v) (w->base[s] + local_of(w, s, v, (s) == root_site ? root_idx : 0))
  for (int g = 0; g < w->n; g++) {
    size_t bs, bl;
    wsp__ss_block(c, w->n, g, &bs, &bl);
    int gw = RANK(root_site, wsp__ss_gateway(w->q[root_site], w->n, g));
    for (size_t e = bs; e < bs + bl; e++) H(gw, e) = 1;
  }
  for (int s = 0; s < w->sites; s++) {
    if (s == root_site) continue;
    for (int g = 0; g < w->n; g++) {
      size_t bs, bl;
      wsp__ss_block(c, w->n, g, &bs, &bl);
      int from = RANK(root_site, wsp__ss_gateway(w->q[root_site], w->n, g));
      int to = RANK(s, wsp__ss_gateway(w->q[s], w->n, g));
      for (size_t e = bs; e < bs + bl; e++) {
        CHECK(H(from, e), "bcast: gateway %d sends element %zu it lacks", from, e);
        H(to, e) = 1;
      }
    }
  }
  for (int s = 0; s < w->sites; s++) {
    int q = w->q[s];
    for (int v = 0; v < q; v++) {
      int g = wsp__ss_group(q, w->n, v), gw = RANK(s, wsp__ss_gateway(q, w->n, g));
      size_t ps, pl;
      wsp__ss_piece(c, q, w->n, v, &ps, &pl);
      for (size_t e = ps; e < ps + pl; e++) {
        CHECK(H(gw, e), "bcast: gateway %d scatters element %zu it lacks", gw, e);
        H(RANK(s, v), e) = 1;
      }
    }
    for (int step = 0; step < q - 1; step++)
      for (int v = 0; v < q; v++) {
        int b = wsp__ring_send_block(v, q, step), to = wsp__ring_next(v, q);
        CHECK(wsp__ring_recv_block(to, q, step) == b, "bcast: ring mismatch");
        size_t ps, pl;
        wsp__ss_piece(c, q, w->n, b, &ps, &pl);
        for (size_t e = ps; e < ps + pl; e++) {
          CHECK(H(RANK(s, v), e), "bcast: ring sends element %zu it lacks", e);
          H(RANK(s, to), e) = 1;
        }
      }
  }
  for (int r = 0; r < p; r++)
    for (size_t e = 0; e < c; e++)
      CHECK(H(r, e), "bcast sites %d n %d root %d: rank %d lacks element %zu", w->sites, w->n,
            root, r, e);
#undef H
#undef RANK
  free(have);
}

/* Adds contribution set `in` into `*acc`: no rank may be counted twice. */
static void add(uint32_t *acc, uint32_t in) {
  CHECK((*acc & in) == 0, "allreduce: a contribution is added twice");
  *acc |= in;
}

static void sim_allreduce(const world_t *w) {
  int p = w->base[w->sites];
  size_t c = w->count;
  uint32_t *v = calloc((size_t)p * (c ? c : 1), sizeof *v);
  uint32_t *tmp = calloc(c ? c : 1, sizeof *tmp);
#define V(r, e) v[(size_t)(r) * c + (e)]
  for (int r = 0; r < p; r++)
    for (size_t e = 0; e < c; e++) V(r, e) = 1u << r;
  for (int s = 0; s < w->sites; s++) {
    int q = w->q[s], b0 = w->base[s];
    /* Ring reduce-scatter: all sends of a step read the values before it. */
    for (int step = 0; step < q - 1; step++) {
      uint32_t *snap = malloc((size_t)p * (c ? c : 1) * sizeof *snap);
      memcpy(snap, v, (size_t)p * c * sizeof *v);
      for (int i = 0; i < q; i++) {
        int to = wsp__ring_next(i, q), b = wsp__ss_rs_send(i, q, step);
        CHECK(wsp__ss_rs_recv(to, q, step) == b, "allreduce: ring mismatch");
        size_t ps, pl;
        wsp__ss_piece(c, q, w->n, b, &ps, &pl);
        for (size_t e = ps; e < ps + pl; e++) add(&V(b0 + to, e), snap[(size_t)(b0 + i) * c + e]);
      }
      free(snap);
    }
    /* Each index holds the site's whole sum of its piece; to the gateway. */
    uint32_t site_all = 0;
    for (int i = 0; i < q; i++) site_all |= 1u << (b0 + i);
    for (int i = 0; i < q; i++) {
      int g = wsp__ss_group(q, w->n, i), gw = b0 + wsp__ss_gateway(q, w->n, g);
      size_t ps, pl;
      wsp__ss_piece(c, q, w->n, i, &ps, &pl);
      for (size_t e = ps; e < ps + pl; e++) {
        CHECK(V(b0 + i, e) == site_all, "allreduce: index %d's piece is not the site's sum", i);
        V(gw, e) = V(b0 + i, e);
      }
    }
  }
  /* Gateways g of all sites exchange block g and add the others' in. */
  for (int g = 0; g < w->n; g++) {
    size_t bs, bl;
    wsp__ss_block(c, w->n, g, &bs, &bl);
    for (size_t e = bs; e < bs + bl; e++) {
      uint32_t sum = 0;
      for (int s = 0; s < w->sites; s++) add(&sum, V(w->base[s] + wsp__ss_gateway(w->q[s], w->n, g), e));
      tmp[e] = sum;
    }
    for (int s = 0; s < w->sites; s++)
      for (size_t e = bs; e < bs + bl; e++) V(w->base[s] + wsp__ss_gateway(w->q[s], w->n, g), e) = tmp[e];
  }
  for (int s = 0; s < w->sites; s++) {
    int q = w->q[s], b0 = w->base[s];
    for (int i = 0; i < q; i++) {
      int g = wsp__ss_group(q, w->n, i), gw = b0 + wsp__ss_gateway(q, w->n, g);
      size_t ps, pl;
      wsp__ss_piece(c, q, w->n, i, &ps, &pl);
      for (size_t e = ps; e < ps + pl; e++) V(b0 + i, e) = V(gw, e);
    }
    for (int step = 0; step < q - 1; step++)
      for (int i = 0; i < q; i++) {
        int b = wsp__ring_send_block(i, q, step), to = wsp__ring_next(i, q);
        size_t ps, pl;
        wsp__ss_piece(c, q, w->n, b, &ps, &pl);
        for (size_t e = ps; e < ps + pl; e++) V(b0 + to, e) = V(b0 + i, e);
      }
  }
  uint32_t all = p >= 32 ? 0xffffffffu : (1u << p) - 1;
  for (int r = 0; r < p; r++)
    for (size_t e = 0; e < c; e++)
      CHECK(V(r, e) == all, "allreduce sites %d n %d: rank %d element %zu has %#x", w->sites,
            w->n, r, e, V(r, e));
#undef V
  free(v);
  free(tmp);
}

/* The chains of the pipelined broadcast: chain c starts at the root,
 * visits every rank once, and the n chains (n < the root's site, n <= the
 * others) cross between sites over n different pairs. */
static void check_chains(const world_t *w, int root_site, int root_idx, int n) {
  int p = w->base[w->sites];
  int *seen = calloc((size_t)p, sizeof *seen), *pairs = calloc((size_t)n * 2 * 3, sizeof *pairs);
  for (int c = 0; c < n; c++) {
    memset(seen, 0, (size_t)p * sizeof *seen);
    int last = -1, hops = 0;
    for (int k = 0; k < w->sites; k++) {
      int t = (root_site + k) % w->sites, q = w->q[t];
      for (int j = 0; j < q; j++) {
        int v = wsp__ss_chain_index(q, c, j, t == root_site);
        CHECK(v >= 0 && v < q, "chain %d: index %d on a site of %d", c, v, q);
        int r = w->base[t] + (v + (t == root_site ? root_idx : 0)) % q;
        if (k == 0 && j == 0) CHECK(r == w->base[root_site] + root_idx, "chain %d: starts at %d", c, r);
        CHECK(!seen[r], "chain %d visits rank %d twice", c, r);
        seen[r] = 1;
        if (j == 0 && last >= 0) {
          pairs[(c * 3 + hops) * 2] = last, pairs[(c * 3 + hops) * 2 + 1] = r;
          hops++;
        }
        last = r;
      }
    }
    for (int r = 0; r < p; r++) CHECK(seen[r], "chain %d misses rank %d", c, r);
  }
  for (int h = 0; h < w->sites - 1; h++)
    for (int c = 0; c < n; c++)
      for (int d = 0; d < c; d++)
        CHECK(pairs[(c * 3 + h) * 2] != pairs[(d * 3 + h) * 2] ||
                  pairs[(c * 3 + h) * 2 + 1] != pairs[(d * 3 + h) * 2 + 1],
              "chains %d and %d cross over the same pair", c, d);
  free(seen);
  free(pairs);
}

int main(void) {
  static const size_t counts[] = {0, 1, 2, 3, 7, 24, 25, 50, 101};
  for (int q = 1; q <= 24; q++)
    for (int n = 1; n <= q; n++)
      for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) check_layout(q, n, counts[k]);
  static const int shapes[][3] = {{1, 1, 0}, {1, 4, 0}, {4, 4, 0}, {3, 5, 0}, {6, 2, 0},
                                  {7, 8, 0}, {2, 3, 4}, {5, 1, 3}, {4, 4, 4}, {3, 7, 2}};
  for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
    world_t w = {0};
    w.sites = shapes[sh][2] ? 3 : 2;
    int minq = 1 << 30;
    for (int s = 0; s < w.sites; s++) {
      w.q[s] = shapes[sh][s];
      w.base[s + 1] = w.base[s] + w.q[s];
      if (w.q[s] < minq) minq = w.q[s];
    }
    for (w.n = 1; w.n <= minq; w.n++)
      for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        w.count = counts[k];
        for (int s = 0; s < w.sites; s++)
          for (int i = 0; i < w.q[s]; i++) sim_bcast(&w, s, i);
        sim_allreduce(&w);
      }
    for (int s = 0; s < w.sites; s++)
      for (int i = 0; i < w.q[s]; i++)
        for (int n = 1; n < minq; n++) check_chains(&w, s, i, n);
  }
  return check_summary("test_sites_sched");
}
