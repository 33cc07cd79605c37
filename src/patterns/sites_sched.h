/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The layout of the multi-site collectives (bcast and allreduce "sites";
 * docs/sites.md): the pure part, no MPI.
 *
 * Between every two sites, n connections carry the data at once. The
 * message (count elements) is cut into n nearly equal blocks; connection
 * g carries block g. Each site's q ranks (n <= q) are cut into n nearly
 * equal groups of consecutive site-local indices: group g's first rank is
 * its gateway, the one rank of the group that talks to other sites, and
 * block g is cut again into as many pieces as group g has ranks. Piece i,
 * the piece of the site's local index i, is then a byte range of the
 * message; the q pieces, in local-index order, cut the message into
 * consecutive ranges, so a ring allgather (or reduce-scatter) over the
 * site's ranks moves them as it moves any q blocks (ring.h). At the root's
 * site of a bcast the local indices are rotated so that the root is index
 * 0, the gateway of group 0.
 *
 * Why groups: the gateways are the only ranks with a connection to other
 * sites, so no more than n connections share the link between two sites
 * (more would only congest it: the source's "other nodes forward messages
 * to the selected nodes"), and the other ranks of a group hand their
 * pieces to their gateway, or get them from it, inside the site.
 */
#ifndef WSP_PATTERNS_SITES_SCHED_H
#define WSP_PATTERNS_SITES_SCHED_H

#include <stddef.h>

/* Start of part i when `count` items are cut into `parts` nearly equal
 * parts (the first count % parts have one more). */
static inline size_t wsp__ss_part(size_t count, int parts, int i) {
  size_t q = count / (size_t)parts, r = count % (size_t)parts, ui = (size_t)i;
  return ui * q + (ui < r ? ui : r);
}

/* The group of local index i among q ranks in n groups. */
static inline int wsp__ss_group(int q, int n, int i) {
  /* part(q, n, g) <= i < part(q, n, g + 1): the first q % n groups have
   * one rank more. */
  int big = q / n + 1, nbig = q % n;
  if (i < nbig * big) return i / big;
  return nbig + (i - nbig * big) / (q / n);
}
/* The first local index (the gateway) and the size of group g. */
static inline int wsp__ss_gateway(int q, int n, int g) {
  return (int)wsp__ss_part((size_t)q, n, g);
}
static inline int wsp__ss_group_size(int q, int n, int g) {
  return (int)(wsp__ss_part((size_t)q, n, g + 1) - wsp__ss_part((size_t)q, n, g));
}

/* Block g of count elements cut into n. */
static inline void wsp__ss_block(size_t count, int n, int g, size_t *start, size_t *len) {
  *start = wsp__ss_part(count, n, g);
  *len = wsp__ss_part(count, n, g + 1) - *start;
}

/* The piece of local index i on a site of q ranks with n groups. */
static inline void wsp__ss_piece(size_t count, int q, int n, int i, size_t *start,
                                 size_t *len) {
  int g = wsp__ss_group(q, n, i), k = i - wsp__ss_gateway(q, n, g);
  int gs = wsp__ss_group_size(q, n, g);
  size_t bs, bl;
  wsp__ss_block(count, n, g, &bs, &bl);
  size_t a = wsp__ss_part(bl, gs, k), b = wsp__ss_part(bl, gs, k + 1);
  *start = bs + a;
  *len = b - a;
}

/* The j-th site-local index of chain c (j = 0 .. q-1) on a site of q ranks
 * (the multi-site pipelined broadcast, "sites_chain"): at the root's site
 * the root (index 0) first, then the others rotated by c; elsewhere all q
 * rotated by c. Chains c < q - 1 leave the root's site from different
 * ranks, and chains c < q enter and leave any other site at different
 * ranks. */
static inline int wsp__ss_chain_index(int q, int c, int j, int root_site) {
  if (!root_site) return (c + j) % q;
  return j == 0 ? 0 : 1 + (c + j - 1) % (q - 1);
}

/* Ring reduce-scatter over q ranks: at step i (0 <= i < q-1) local index r
 * sends its partial sum of piece (r - i - 1) mod q to r + 1, and receives
 * piece (r - i - 2) mod q from r - 1 and adds its own into it; after q-1
 * steps it holds the whole sum of piece r. (The allgather's steps are
 * ring.h's.) */
static inline int wsp__ss_rs_send(int r, int q, int i) { return ((r - i - 1) % q + q) % q; }
static inline int wsp__ss_rs_recv(int r, int q, int i) { return ((r - i - 2) % q + q) % q; }

#endif
