/* SPDX-License-Identifier: BSD-3-Clause */
/* Trees from a measured map of pairs; see aware_tree.h for the model, the
 * constructions and their cost.
 *
 * Everything is built in the downward view: an upward tree (reduce,
 * gather) is the broadcast tree of the transposed map with its child lists
 * reversed (aware_tree.h says why the two are the same problem), so the
 * builders price an edge v -> c with wsp__aware_down_cost, which reads the
 * map transposed when the problem is upward, and reverse the lists at the
 * very end. The evaluator, wsp__aware_time, does not take that shortcut: it
 * runs an upward tree upwards, which is what lets the unit test check the
 * equivalence instead of assuming it.
 *
 * Inside, a tree is its parent[] array; wsp__aware_order makes its child
 * lists (in Jackson's order) and its time from that, which is all the
 * improvement step and the exact search need to produce. */
#include "aware_tree.h"

#include <math.h>
#include <string.h>

#include "tree.h"

/* ---- the work area ---------------------------------------------------- */

/* The work area, carved into fixed pieces: doubles first, so that they are
 * aligned when the area is. The pieces of different purposes never
 * overlap, so the builder can call the evaluator on a candidate held in
 * the same area. */
typedef struct wsp__aware_work {
  double *when;    /* p: per rank, a time (free time; T) */
  double *key;     /* p: a sort key per rank; ready times */
  double *evtime;  /* p: the evaluator's times */
  double *dpf;     /* K 2^K: the exact search's f(v, S) */
  double *dpcost;  /* K^3: its edge costs */
  int *rows;       /* p*p: per sender, receivers cheapest first */
  int *ptr;        /* p: per sender, its first receiver perhaps unreached */
  int *mark;       /* p: flags (holds the message; in a subtree) */
  int *seq;        /* p: ranks in an order (greedy: reached; tree: top down) */
  int *fill;       /* p: CSR fill positions; a queue */
  int *tmp;        /* p: merge sort buffer */
  int *size;       /* p: subtree sizes */
  int *cands;      /* p: the improvement's candidates */
  int *best;       /* p: the improvement's best parent[] */
  int *evorder;    /* p: the evaluator's top-down order */
  int *evsize;     /* p: the evaluator's subtree sizes */
  int *evmark;     /* p: the evaluator's flags */
  int *cand[2][3]; /* two trees: parent p, child_start p + 1, children p */
  int *dparg;      /* K 2^K: the exact search's choices */
  int *dpstack;    /* 2K + 2: its pending pairs */
  int *dpnodes;    /* K: the ranks it works on */
} wsp__aware_work_t;

enum { WSP__AWARE_NDOUBLE = 3, WSP__AWARE_NINT = 11 + 2 * 3 };

/* The exact search's share is for K = min(p, WSP__AWARE_EXACT_MAX_P)
 * ranks. Its choices pack a subset of K ranks and a rank below 16 into an
 * int. */
_Static_assert(WSP__AWARE_EXACT_MAX_P <= 15, "the exact search packs a rank into 4 bits");
static size_t wsp__aware_exact_k(int p) {
  return (size_t)(p < WSP__AWARE_EXACT_MAX_P ? p : WSP__AWARE_EXACT_MAX_P);
}

size_t wsp__aware_work_size(int p) {
  if (p < 1) return 0;
  size_t up = (size_t)p, k = wsp__aware_exact_k(p), k2 = k << k;
  return (WSP__AWARE_NDOUBLE * up + k2 + k * k * (k + 1)) * sizeof(double) +
         (up * up + WSP__AWARE_NINT * (up + 1) + k2 + 3 * k + 2) * sizeof(int);
}

static void wsp__aware_carve(void *work, int p, wsp__aware_work_t *w) {
  size_t up = (size_t)p, k = wsp__aware_exact_k(p), k2 = k << k;
  double *d = work;
  w->when = d, w->key = d + up, w->evtime = d + 2 * up;
  w->dpf = d + WSP__AWARE_NDOUBLE * up, w->dpcost = w->dpf + k2;
  int *i = (int *)(w->dpcost + k * k * (k + 1));
  w->rows = i, i += up * up;
  int **one[] = {&w->ptr,   &w->mark,  &w->seq,     &w->fill,   &w->tmp,   &w->size,
                 &w->cands, &w->best, &w->evorder, &w->evsize, &w->evmark};
  for (size_t j = 0; j < sizeof one / sizeof one[0]; j++) *one[j] = i, i += up + 1;
  for (int c = 0; c < 2; c++)
    for (int a = 0; a < 3; a++) w->cand[c][a] = i, i += up + 1;
  w->dparg = i, i += k2;
  w->dpstack = i, i += 2 * k + 2;
  w->dpnodes = i;
}

/* ---- costs ------------------------------------------------------------ */

double wsp__aware_msg_cost(const wsp__aware_problem_t *pb, int from, int to,
                           size_t bytes) {
  size_t p = (size_t)pb->p, ij = (size_t)from * p + (size_t)to;
  double c = pb->alpha[ij] + (double)bytes * pb->beta[ij];
  /* Rendezvous: the request goes out and the answer comes back before the
   * data does. The sum is written out in this order on purpose: every rank
   * must round it the same way. */
  if (pb->proto == WSP__AWARE_RNDV || (pb->eager > 0 && bytes > pb->eager))
    c = (pb->alpha[ij] + pb->alpha[(size_t)to * p + (size_t)from]) + c;
  return c;
}

/* The cost of the downward edge v -> c of the tree being built: the
 * message v sends to c, or for an upward problem the one c sends to v. */
static double wsp__aware_down_cost(const wsp__aware_problem_t *pb, int v, int c,
                                   size_t bytes) {
  return pb->dir == WSP__AWARE_UP ? wsp__aware_msg_cost(pb, c, v, bytes)
                                  : wsp__aware_msg_cost(pb, v, c, bytes);
}

/* Bytes on the edge into c, whose subtree holds size ranks. */
static size_t wsp__aware_edge_bytes(const wsp__aware_problem_t *pb, int size) {
  return pb->load == WSP__AWARE_BLOCKS ? pb->n * (size_t)size : pb->n;
}

/* A problem the functions can work on: pointers set, p and root in range,
 * enums known, every cost finite and not negative (a NaN would make the
 * comparisons that build the tree meaningless), and n times the largest
 * subtree (p - 1 blocks) not overflowing. */
static int wsp__aware_check(const wsp__aware_problem_t *pb) {
  if (pb == NULL || pb->p < 1 || pb->root < 0 || pb->root >= pb->p) return -1;
  if (pb->alpha == NULL || pb->beta == NULL) return -1;
  if ((unsigned)pb->proto > WSP__AWARE_RNDV || (unsigned)pb->dir > WSP__AWARE_UP ||
      (unsigned)pb->load > WSP__AWARE_BLOCKS)
    return -1;
  if (pb->load == WSP__AWARE_BLOCKS && pb->p > 1 &&
      pb->n > (size_t)-1 / (size_t)(pb->p - 1))
    return -1;
  size_t pp = (size_t)pb->p * (size_t)pb->p;
  for (size_t k = 0; k < pp; k++)
    if (!(isfinite(pb->alpha[k]) && pb->alpha[k] >= 0 && isfinite(pb->beta[k]) &&
          pb->beta[k] >= 0))
      return -1;
  return 0;
}

/* ---- sorting ---------------------------------------------------------- */

/* Whether rank x goes before rank y: by key (descending or ascending), then
 * by the lower rank, so the order is total and does not depend on the
 * sorting algorithm. */
static int wsp__aware_before(const double *key, int desc, int x, int y) {
  if (key[x] != key[y]) return desc ? key[x] > key[y] : key[x] < key[y];
  return x < y;
}

/* Sorts the m ranks in a[] by wsp__aware_before: a bottom-up merge sort,
 * O(m log m), with tmp[] (m entries) as the buffer. */
static void wsp__aware_sort(int *a, int m, const double *key, int desc, int *tmp) {
  int *src = a, *dst = tmp;
  for (int width = 1; width < m; width *= 2) {
    for (int lo = 0; lo < m; lo += 2 * width) {
      int mid = lo + width < m ? lo + width : m;
      int hi = lo + 2 * width < m ? lo + 2 * width : m;
      int x = lo, y = mid, k = lo;
      while (x < mid && y < hi)
        dst[k++] = wsp__aware_before(key, desc, src[y], src[x]) ? src[y++] : src[x++];
      while (x < mid) dst[k++] = src[x++];
      while (y < hi) dst[k++] = src[y++];
    }
    int *s = src;
    src = dst, dst = s;
  }
  if (src != a) memcpy(a, src, (size_t)m * sizeof *a);
}

/* ---- evaluation ------------------------------------------------------- */

/* Checks *t against the problem and writes a top-down order of the ranks
 * (the root first, every parent before its children) to order[]. Returns 0
 * or -1. */
static int wsp__aware_check_tree(const wsp__aware_problem_t *pb,
                                 const wsp__aware_tree_t *t, int *order, int *seen) {
  int p = pb->p, root = pb->root;
  if (t == NULL || t->parent == NULL || t->child_start == NULL) return -1;
  if (p > 1 && t->children == NULL) return -1;
  if (t->child_start[0] != 0 || t->child_start[p] != p - 1) return -1;
  for (int v = 0; v < p; v++) {
    if (t->child_start[v + 1] < t->child_start[v]) return -1;
    int par = t->parent[v];
    if (v == root ? par != -1 : (par < 0 || par >= p)) return -1;
    seen[v] = 0;
  }
  for (int v = 0; v < p; v++)
    for (int k = t->child_start[v]; k < t->child_start[v + 1]; k++) {
      int c = t->children[k];
      if (c < 0 || c >= p || t->parent[c] != v || seen[c]) return -1;
      seen[c] = 1;
    }
  /* Now every child list entry is a distinct non-root rank that names its
   * list's owner as parent, and there are p - 1 of them: each non-root
   * rank has exactly one parent. What is left is a cycle cut off from the
   * root, which the walk from the root below would not reach. */
  int head = 0, tail = 0;
  order[tail++] = root;
  while (head < tail) {
    int v = order[head++];
    for (int k = t->child_start[v]; k < t->child_start[v + 1]; k++) order[tail++] = t->children[k];
  }
  return tail == p ? 0 : -1;
}

/* wsp__aware_time for a problem already checked. */
static int wsp__aware_eval(const wsp__aware_problem_t *pb, const wsp__aware_tree_t *t,
                           wsp__aware_work_t *w, double *time) {
  int p = pb->p, *order = w->evorder, *size = w->evsize;
  double *at = w->evtime;
  if (wsp__aware_check_tree(pb, t, order, w->evmark) != 0) return -1;
  /* Subtree sizes, children before parents. */
  for (int v = 0; v < p; v++) size[v] = 1;
  for (int k = p - 1; k > 0; k--) size[t->parent[order[k]]] += size[order[k]];

  double done = 0;
  if (pb->dir == WSP__AWARE_DOWN) {
    /* at[v]: when v holds the message; its sends follow one another. */
    at[pb->root] = 0;
    for (int k = 0; k < p; k++) {
      int v = order[k];
      double busy = at[v];
      if (busy > done) done = busy;
      for (int e = t->child_start[v]; e < t->child_start[v + 1]; e++) {
        int c = t->children[e];
        busy += wsp__aware_msg_cost(pb, v, c, wsp__aware_edge_bytes(pb, size[c]));
        at[c] = busy;
      }
    }
  } else {
    /* at[v]: when v has received from all its children and can send to its
     * parent. Receives follow one another in list order, each starting
     * when its child is ready and the previous receive has ended. */
    for (int k = p - 1; k >= 0; k--) {
      int v = order[k];
      double busy = 0;
      for (int e = t->child_start[v]; e < t->child_start[v + 1]; e++) {
        int c = t->children[e];
        if (at[c] > busy) busy = at[c];
        busy += wsp__aware_msg_cost(pb, c, v, wsp__aware_edge_bytes(pb, size[c]));
      }
      at[v] = busy;
    }
    done = at[pb->root];
  }
  *time = done;
  return 0;
}

int wsp__aware_time(const wsp__aware_problem_t *pb, const wsp__aware_tree_t *t,
                    void *work, double *time) {
  if (wsp__aware_check(pb) != 0 || work == NULL || time == NULL) return -1;
  wsp__aware_work_t w;
  wsp__aware_carve(work, pb->p, &w);
  return wsp__aware_eval(pb, t, &w, time);
}

/* ---- trees from parents, with the best child orders -------------------- */

/* Builds the CSR lists of the tree given by parent[] (downward view) with
 * every child list in Jackson's order: the child whose subtree takes
 * longest after it has the message first (ties: lowest rank). Returns the
 * downward time of the whole tree, T(root). parent[] must be a tree rooted
 * at pb->root. Uses w->when (T), w->seq, w->size, w->tmp. */
static double wsp__aware_order(const wsp__aware_problem_t *pb, wsp__aware_work_t *w,
                               const int *parent, int *start, int *children) {
  int p = pb->p;
  /* Child lists in rank order first: counts, then positions. */
  for (int v = 0; v <= p; v++) start[v] = 0;
  for (int v = 0; v < p; v++)
    if (parent[v] >= 0) start[parent[v] + 1]++;
  for (int v = 0; v < p; v++) start[v + 1] += start[v];
  for (int v = 0; v < p; v++) w->fill[v] = start[v];
  for (int v = 0; v < p; v++)
    if (parent[v] >= 0) children[w->fill[parent[v]]++] = v;
  /* A top-down order, then T and sizes bottom-up. */
  int head = 0, tail = 0;
  w->seq[tail++] = pb->root;
  while (head < tail) {
    int v = w->seq[head++];
    for (int k = start[v]; k < start[v + 1]; k++) w->seq[tail++] = children[k];
  }
  double *T = w->when;
  for (int k = p - 1; k >= 0; k--) {
    int v = w->seq[k], lo = start[v], m = start[v + 1] - lo;
    w->size[v] = 1;
    for (int e = lo; e < lo + m; e++) w->size[v] += w->size[children[e]];
    wsp__aware_sort(children + lo, m, T, 1, w->tmp);
    double busy = 0, end = 0;
    for (int e = lo; e < lo + m; e++) {
      int c = children[e];
      busy += wsp__aware_down_cost(pb, v, c, wsp__aware_edge_bytes(pb, w->size[c]));
      if (busy + T[c] > end) end = busy + T[c];
    }
    T[v] = end;
  }
  return T[pb->root];
}

/* Upward trees list children in receive order: the reverse of the
 * downward send order they were built in. */
static void wsp__aware_finish(const wsp__aware_problem_t *pb, wsp__aware_tree_t *t) {
  if (pb->dir != WSP__AWARE_UP) return;
  for (int v = 0; v < pb->p; v++)
    for (int a = t->child_start[v], b = t->child_start[v + 1] - 1; a < b; a++, b--) {
      int x = t->children[a];
      t->children[a] = t->children[b], t->children[b] = x;
    }
}

/* ---- the binomial tree ------------------------------------------------ */

int wsp__aware_binomial(const wsp__aware_problem_t *pb, wsp__aware_tree_t *out) {
  if (pb == NULL || pb->p < 1 || pb->root < 0 || pb->root >= pb->p || out == NULL ||
      out->parent == NULL || out->child_start == NULL || (pb->p > 1 && out->children == NULL))
    return -1;
  int p = pb->p, root = pb->root, next = 0;
  for (int v = 0; v < p; v++) {
    int r = wsp__tree_rel(v, root, p), par = wsp__binomial_parent(r, p);
    out->parent[v] = par < 0 ? -1 : wsp__tree_abs(par, root, p);
    out->child_start[v] = next;
    /* tree.h lists children largest subtree first; a rank has fewer than
     * 32 of them for any int p. */
    int ch[32], m = wsp__binomial_children(r, p, ch, 32);
    for (int k = 0; k < m; k++)
      out->children[next + (pb->dir == WSP__AWARE_UP ? m - 1 - k : k)] =
          wsp__tree_abs(ch[k], root, p);
    next += m;
  }
  out->child_start[p] = next;
  return 0;
}

/* ---- the greedy ------------------------------------------------------- */

/* Earliest completion first, downward view; writes parent[] and the CSR
 * lists in the order the edges were added (each sender's sends in time
 * order). */
static void wsp__aware_ecf(const wsp__aware_problem_t *pb, wsp__aware_work_t *w,
                           int *parent, int *start, int *children) {
  int p = pb->p, root = pb->root;
  size_t up = (size_t)p;
  /* Each sender's receivers, cheapest edge first (ties: lowest rank). The
   * cheapest receiver of s not yet holding the message is also the one
   * whose send from s would end first, whatever s's free time, so one
   * pointer per sender finds each sender's best candidate. */
  for (int s = 0; s < p; s++) {
    int *row = w->rows + (size_t)s * up, m = 0;
    for (int r = 0; r < p; r++) {
      if (r == s) continue;
      w->key[r] = wsp__aware_down_cost(pb, s, r, pb->n);
      row[m++] = r;
    }
    wsp__aware_sort(row, m, w->key, 0, w->tmp);
    w->ptr[s] = 0;
    w->mark[s] = 0;
  }
  double *free_at = w->when;
  free_at[root] = 0;
  w->mark[root] = 1;
  parent[root] = -1;
  for (int step = 0; step < p - 1; step++) {
    int bs = -1, br = -1;
    double bend = 0;
    for (int s = 0; s < p; s++) {
      if (!w->mark[s]) continue;
      /* Some rank still lacks the message, so the row has one left. */
      const int *row = w->rows + (size_t)s * up;
      while (w->mark[row[w->ptr[s]]]) w->ptr[s]++;
      int r = row[w->ptr[s]];
      double end = free_at[s] + wsp__aware_down_cost(pb, s, r, pb->n);
      if (bs < 0 || end < bend) bs = s, br = r, bend = end;
    }
    parent[br] = bs;
    free_at[bs] = free_at[br] = bend;
    w->mark[br] = 1;
    w->seq[step] = br;
  }
  for (int v = 0; v <= p; v++) start[v] = 0;
  for (int v = 0; v < p; v++)
    if (parent[v] >= 0) start[parent[v] + 1]++;
  for (int v = 0; v < p; v++) start[v + 1] += start[v], w->fill[v] = start[v];
  for (int step = 0; step < p - 1; step++) {
    int r = w->seq[step];
    children[w->fill[parent[r]]++] = r;
  }
}

static int wsp__aware_out_ok(const wsp__aware_problem_t *pb, void *work,
                             const wsp__aware_tree_t *out, const double *time) {
  return work != NULL && out != NULL && time != NULL && out->parent != NULL &&
         out->child_start != NULL && (pb->p == 1 || out->children != NULL);
}

/* A finished candidate: its lists turned into the problem's direction and
 * its time by the evaluator (so that all candidates are judged alike). */
static double wsp__aware_judge(const wsp__aware_problem_t *pb, wsp__aware_work_t *w,
                               wsp__aware_tree_t *t) {
  double time = 0;
  wsp__aware_finish(pb, t);
  wsp__aware_eval(pb, t, w, &time);
  return time;
}

int wsp__aware_greedy(const wsp__aware_problem_t *pb, void *work,
                      wsp__aware_tree_t *out, double *time) {
  if (wsp__aware_check(pb) != 0 || !wsp__aware_out_ok(pb, work, out, time)) return -1;
  wsp__aware_work_t w;
  wsp__aware_carve(work, pb->p, &w);
  wsp__aware_ecf(pb, &w, out->parent, out->child_start, out->children);
  *time = wsp__aware_judge(pb, &w, out);
  return 0;
}

/* ---- the exact search ------------------------------------------------- */

static int wsp__aware_bits(unsigned x) {
  int n = 0;
  for (; x; x &= x - 1) n++;
  return n;
}

/* The best tree by which nodes[0] (holding the message at time 0) reaches
 * nodes[1..k-1], k <= WSP__AWARE_EXACT_MAX_P, over all trees and child
 * orders (aware_tree.h, construction 4). Sets are bit masks over the
 * indices into nodes[]; A and the rest are proper subsets of S, so filling
 * the table in increasing order of S finds them done. Writes
 * parent[nodes[i]] for i >= 1. O(k^2 3^k). */
static void wsp__aware_exact_set(const wsp__aware_problem_t *pb, wsp__aware_work_t *w,
                                 const int *nodes, int k, int *parent) {
  unsigned full = (1u << k) - 1;
  double *f = w->dpf, *cost = w->dpcost;
  int *arg = w->dparg, blocks = pb->load == WSP__AWARE_BLOCKS;
  /* cost[(m * k + v) * k + c]: the edge v -> c carrying m ranks' blocks
   * (only m = 1, the whole message, without blocks). */
  for (int m = 1; m <= (blocks ? k : 1); m++)
    for (int v = 0; v < k; v++)
      for (int c = 0; c < k; c++)
        cost[((size_t)m * k + v) * k + c] =
            v == c ? 0 : wsp__aware_down_cost(pb, nodes[v], nodes[c], wsp__aware_edge_bytes(pb, m));
  for (unsigned S = 0; S <= full; S++)
    for (int v = 0; v < k; v++) {
      if (S & (1u << v)) continue;
      double best = 0;
      int barg = -1;
      for (int c = 0; c < k; c++) {
        if (!(S & (1u << c))) continue;
        unsigned rest = S & ~(1u << c);
        for (unsigned A = rest;; A = (A - 1) & rest) {
          int m = blocks ? 1 + wsp__aware_bits(A) : 1;
          double theirs = f[(size_t)A * k + c], mine = f[(size_t)(rest & ~A) * k + v];
          double t = cost[((size_t)m * k + v) * k + c] + (theirs > mine ? theirs : mine);
          /* Strictly better only: the first of equals (lowest c, then the
           * largest A) stays, the same on every rank. */
          if (barg < 0 || t < best) best = t, barg = (int)(A << 4) | c;
          if (A == 0) break;
        }
      }
      f[(size_t)S * k + v] = barg < 0 ? 0 : best;
      arg[(size_t)S * k + v] = barg;
    }
  /* Unfold the choices from (nodes[0], everyone else): a stack of pairs
   * (v, S) still to reach. Their owners v are distinct, so at most k are
   * pending. */
  int top = 0;
  w->dpstack[top++] = (int)((full & ~1u) << 4);
  while (top > 0) {
    int e = w->dpstack[--top], v = e & 15;
    unsigned S = (unsigned)e >> 4;
    if (S == 0) continue;
    int a = arg[(size_t)S * k + v], c = a & 15;
    unsigned A = (unsigned)a >> 4;
    parent[nodes[c]] = nodes[v];
    w->dpstack[top++] = (int)(A << 4) | c;
    w->dpstack[top++] = (int)((S & ~(1u << c) & ~A) << 4) | v;
  }
}

/* wsp__aware_exact for a problem already checked; returns the time. */
static double wsp__aware_exact_in(const wsp__aware_problem_t *pb, wsp__aware_work_t *w,
                                  wsp__aware_tree_t *out) {
  int p = pb->p, k = 0;
  w->dpnodes[k++] = pb->root;
  for (int v = 0; v < p; v++)
    if (v != pb->root) w->dpnodes[k++] = v;
  out->parent[pb->root] = -1;
  wsp__aware_exact_set(pb, w, w->dpnodes, p, out->parent);
  wsp__aware_order(pb, w, out->parent, out->child_start, out->children);
  return wsp__aware_judge(pb, w, out);
}

int wsp__aware_exact(const wsp__aware_problem_t *pb, void *work,
                     wsp__aware_tree_t *out, double *time) {
  if (wsp__aware_check(pb) != 0 || !wsp__aware_out_ok(pb, work, out, time) ||
      pb->p > WSP__AWARE_EXACT_MAX_P)
    return -1;
  wsp__aware_work_t w;
  wsp__aware_carve(work, pb->p, &w);
  *time = wsp__aware_exact_in(pb, &w, out);
  return 0;
}

/* ---- improvement on the critical path ---------------------------------- */

/* Construction 3 of aware_tree.h on the tree in parent[] with its lists in
 * start[], children[] (from wsp__aware_order, whose w->seq and w->size are
 * still current) and downward time cur; leaves the improved tree there and
 * returns its time. The second candidate's arrays are the scratch trees. */
static double wsp__aware_improve(const wsp__aware_problem_t *pb, wsp__aware_work_t *w,
                                 int *parent, int *start, int *children, double cur) {
  int p = pb->p, root = pb->root;
  int *trial = w->cand[1][0], *tstart = w->cand[1][1], *tchildren = w->cand[1][2];
  double *ready = w->key;
  for (int round = 0; round < p; round++) {
    /* When each rank has the message, and the last one (lowest rank among
     * equals). */
    int last = root;
    ready[root] = 0;
    for (int k = 0; k < p; k++) {
      int v = w->seq[k];
      double busy = ready[v];
      for (int e = start[v]; e < start[v + 1]; e++) {
        int c = children[e];
        busy += wsp__aware_down_cost(pb, v, c, wsp__aware_edge_bytes(pb, w->size[c]));
        ready[c] = busy;
      }
    }
    for (int v = 0; v < p; v++)
      if (ready[v] > ready[last]) last = v;
    /* The candidates: the ranks on the root's path to it, and for each the
     * siblings its parent sends to first. Each rank is one of these at
     * most once (path ranks have distinct parents). */
    int nc = 0;
    for (int x = last; x != root; x = parent[x]) {
      w->cands[nc++] = x;
      for (int e = start[parent[x]]; children[e] != x; e++) w->cands[nc++] = children[e];
    }
    double best = cur;
    int found = 0;
    for (int q = 0; q < nc; q++) {
      int v = w->cands[q], head = 0, tail = 0;
      /* v's subtree, which cannot take v with it. */
      for (int u = 0; u < p; u++) w->mark[u] = 0;
      w->fill[tail++] = v, w->mark[v] = 1;
      while (head < tail) {
        int x = w->fill[head++];
        for (int e = start[x]; e < start[x + 1]; e++) w->mark[children[e]] = 1, w->fill[tail++] = children[e];
      }
      for (int u = 0; u < p; u++) {
        if (u == v) continue;
        for (int kind = 0; kind < 2; kind++) {
          if (kind == 0) { /* move v and its subtree under u */
            if (w->mark[u] || u == parent[v]) continue;
            memcpy(trial, parent, (size_t)p * sizeof *trial);
          } else { /* splice: v's children go to its parent, v under u */
            if (u == parent[v] && start[v] == start[v + 1]) continue; /* no change */
            for (int b = 0; b < p; b++) trial[b] = parent[b] == v ? parent[v] : parent[b];
          }
          trial[v] = u;
          double t = wsp__aware_order(pb, w, trial, tstart, tchildren);
          /* Only a real gain counts, so that rounding cannot make changes
           * go round in circles; the first of equals stays. */
          if (t < best * (1 - 1e-12)) {
            best = t, found = 1;
            memcpy(w->best, trial, (size_t)p * sizeof *trial);
          }
        }
      }
    }
    if (!found) break;
    memcpy(parent, w->best, (size_t)p * sizeof *parent);
    cur = wsp__aware_order(pb, w, parent, start, children);
  }
  return cur;
}

/* wsp__aware_heuristic for a problem already checked; returns the time. */
static double wsp__aware_heuristic_in(const wsp__aware_problem_t *pb, wsp__aware_work_t *w,
                                      wsp__aware_tree_t *out) {
  int *par = out->parent, *start = out->child_start, *children = out->children;
  wsp__aware_ecf(pb, w, par, start, children);
  double down = wsp__aware_order(pb, w, par, start, children);
  if (pb->p <= WSP__AWARE_IMPROVE_MAX_P) wsp__aware_improve(pb, w, par, start, children, down);
  return wsp__aware_judge(pb, w, out);
}

int wsp__aware_heuristic(const wsp__aware_problem_t *pb, void *work,
                         wsp__aware_tree_t *out, double *time) {
  if (wsp__aware_check(pb) != 0 || !wsp__aware_out_ok(pb, work, out, time)) return -1;
  wsp__aware_work_t w;
  wsp__aware_carve(work, pb->p, &w);
  *time = wsp__aware_heuristic_in(pb, &w, out);
  return 0;
}

/* ---- the pipelined path ----------------------------------------------- */

/* The predicted time of the path order[0..p) (aware_tree.h). */
static double wsp__aware_path_time(const wsp__aware_problem_t *pb, const int *order,
                                   size_t seg, double segs) {
  double fill = 0, worst = 0;
  for (int k = 1; k < pb->p; k++) {
    double c = wsp__aware_down_cost(pb, order[k - 1], order[k], seg);
    fill += c;
    if (c > worst) worst = c;
  }
  return fill + (segs - 1) * worst;
}

/* Reverses order[i..j]. */
static void wsp__aware_reverse(int *order, int i, int j) {
  for (; i < j; i++, j--) {
    int x = order[i];
    order[i] = order[j], order[j] = x;
  }
}

int wsp__aware_path(const wsp__aware_problem_t *pb, size_t seg, void *work,
                    wsp__aware_tree_t *out, double *time, double *chain_time) {
  if (wsp__aware_check(pb) != 0 || !wsp__aware_out_ok(pb, work, out, time) || seg == 0 ||
      pb->load != WSP__AWARE_WHOLE)
    return -1;
  wsp__aware_work_t w;
  wsp__aware_carve(work, pb->p, &w);
  int p = pb->p, *walk = w.seq, *chain = w.tmp;
  size_t s = pb->n / seg + (pb->n % seg != 0);
  double segs = s ? (double)s : 1;
  /* The nearest-neighbour walk. */
  for (int v = 0; v < p; v++) w.mark[v] = 0;
  walk[0] = pb->root, w.mark[pb->root] = 1;
  for (int k = 1; k < p; k++) {
    int best = -1;
    double bc = 0;
    for (int r = 0; r < p; r++) {
      if (w.mark[r]) continue;
      double c = wsp__aware_down_cost(pb, walk[k - 1], r, seg);
      if (best < 0 || c < bc) best = r, bc = c;
    }
    walk[k] = best, w.mark[best] = 1;
  }
  /* The chain's order; it stays on a tie. */
  for (int k = 0; k < p; k++) chain[k] = (pb->root + k) % p;
  double tw = wsp__aware_path_time(pb, walk, seg, segs);
  double t = wsp__aware_path_time(pb, chain, seg, segs);
  if (chain_time) *chain_time = t;
  int *order = chain;
  if (tw < t) order = walk, t = tw;
  /* Reversals of a stretch (2-opt), the first that helps, while one does. */
  for (int pass = 0; p <= WSP__AWARE_IMPROVE_MAX_P && pass < WSP__AWARE_PATH_PASSES; pass++) {
    int better = 0;
    for (int i = 1; i + 1 < p; i++)
      for (int j = i + 1; j < p; j++) {
        wsp__aware_reverse(order, i, j);
        double x = wsp__aware_path_time(pb, order, seg, segs);
        if (x < t) {
          t = x, better = 1;
        } else {
          wsp__aware_reverse(order, i, j);
        }
      }
    if (!better) break;
  }
  /* As a tree: one child per rank but the last; the lists are one long,
   * so the up and down orders are the same. */
  out->parent[order[0]] = -1;
  for (int k = 1; k < p; k++) out->parent[order[k]] = order[k - 1];
  for (int v = 0; v < p; v++) w.mark[v] = -1;
  for (int k = 0; k + 1 < p; k++) w.mark[order[k]] = order[k + 1];
  int next = 0;
  for (int v = 0; v < p; v++) {
    out->child_start[v] = next;
    if (w.mark[v] >= 0) out->children[next++] = w.mark[v];
  }
  out->child_start[p] = next;
  *time = t;
  return 0;
}

/* ---- the builder ------------------------------------------------------ */

int wsp__aware_build(const wsp__aware_problem_t *pb, void *work,
                     wsp__aware_tree_t *out, double *time,
                     wsp__aware_source_t *source) {
  if (wsp__aware_check(pb) != 0 || !wsp__aware_out_ok(pb, work, out, time)) return -1;
  wsp__aware_work_t w;
  wsp__aware_carve(work, pb->p, &w);
  int p = pb->p, **g = w.cand[0], **b = w.cand[1];
  wsp__aware_tree_t gt = {g[0], g[1], g[2]}, bt = {b[0], b[1], b[2]};
  double tg, tb, tbo;

  /* The constructed tree. */
  wsp__aware_source_t made = p <= WSP__AWARE_EXACT_MAX_P ? WSP__AWARE_FROM_EXACT
                                                         : WSP__AWARE_FROM_HEURISTIC;
  tg = made == WSP__AWARE_FROM_EXACT ? wsp__aware_exact_in(pb, &w, &gt)
                                     : wsp__aware_heuristic_in(pb, &w, &gt);

  /* The binomial tree as it is, written straight to out, and with its
   * children re-sorted (from its parents, in the downward view). */
  wsp__aware_binomial(pb, out);
  wsp__aware_eval(pb, out, &w, &tb);
  memcpy(b[0], out->parent, (size_t)p * sizeof(int));
  wsp__aware_order(pb, &w, b[0], b[1], b[2]);
  tbo = wsp__aware_judge(pb, &w, &bt);

  /* Strictly better only: on a tie the plain binomial tree stays. */
  wsp__aware_source_t src = WSP__AWARE_FROM_BINOMIAL;
  double best = tb;
  if (tbo < best) best = tbo, src = WSP__AWARE_FROM_BINOMIAL_ORDERED;
  if (tg < best) best = tg, src = made;
  const wsp__aware_tree_t *from = src == made ? &gt : src == WSP__AWARE_FROM_BINOMIAL_ORDERED ? &bt : NULL;
  if (from != NULL) {
    memcpy(out->parent, from->parent, (size_t)p * sizeof(int));
    memcpy(out->child_start, from->child_start, (size_t)(p + 1) * sizeof(int));
    if (p > 1) memcpy(out->children, from->children, (size_t)(p - 1) * sizeof(int));
  }
  *time = best;
  if (source) *source = src;
  return 0;
}
