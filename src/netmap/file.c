/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The network map as a file: versioned JSON, written and read with jansson.
 *
 *   {"format": "wirespeed-netmap", "version": 1,
 *    "p": 8, "nodes": 4, "node_of": [0, 0, 1, 1, ...],
 *    "hosts": ["9c3e...", ...],                  (per node, FNV-1a, hex)
 *    "probe": {"passes": 5, "seconds": 1.25},
 *    "eager_limit": {"intra_node": 4096, "inter_node": 65536},
 *    "groups": [0, 0, 1, 1],
 *    "intra": [{"node": 0, "latency_s": ..., "inv_bandwidth_s_per_byte": ...,
 *               "samples": 5, "outliers": 0}, ...],
 *    "pairs": [{"a": 0, "b": 1, "latency_s": ..., ...,
 *               "flows": {"one_bytes_per_s": ..., "k": 4, "k_bytes_per_s": ...,
 *                         "from_bytes": 1048576}}, ...]}
 *
 * "flows" (the probe's cfg.flows) is optional, absent where not measured;
 * "from_bytes" 0 says the flows did not pay. Readers that predate it
 * ignore it.
 * "intra" lists the nodes of two ranks or more; "pairs" every pair of nodes
 * a < b once. Reals are written with 17 significant digits, so that a map
 * read back is the map written, to the bit.
 *
 * Loading is collective, and every rank ends with the same status: rank 0
 * reads the file and broadcasts its bytes (or why it could not), every rank
 * parses the same bytes, so a malformed file fails alike everywhere; the
 * map must then fit the communicator (the job shape: ranks, the node of
 * every rank, the hosts), and a last reduction checks that every rank
 * parsed the same map.
 */
#include "netmap.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How a map is written: reals with 17 significant digits, so that a map
 * read back is the map written, to the bit. */
#define WSP__NETMAP_DUMP_FLAGS (JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17))

/* The largest map file loaded: far above what 1024 nodes need. */
#define WSP__NETMAP_FILE_MAX ((size_t)256 << 20)

static json_t *wsp__figures(const wsp_netmap_t *m, size_t k) {
  return json_pack("{s:f, s:f, s:i, s:i}", "latency_s", m->lat[k],
                   "inv_bandwidth_s_per_byte", m->inv_bw[k], "samples", m->samples[k],
                   "outliers", m->outliers[k]);
}

static json_t *wsp__netmap_json(const wsp_netmap_t *m) {
  int n = m->nodes;
  json_t *node_of = json_array(), *hosts = json_array(), *groups = json_array(),
         *intra = json_array(), *pairs = json_array();
  for (int r = 0; r < m->p; r++) json_array_append_new(node_of, json_integer(m->node_of[r]));
  for (int a = 0; a < n; a++) {
    char hex[17];
    snprintf(hex, sizeof hex, "%016" PRIx64, m->host[a]);
    json_array_append_new(hosts, json_string(hex));
    json_array_append_new(groups, json_integer(m->group[a]));
    size_t k = (size_t)a * (size_t)n + (size_t)a;
    if (isfinite(m->lat[k])) {
      json_t *f = wsp__figures(m, k);
      json_object_set_new(f, "node", json_integer(a));
      json_array_append_new(intra, f);
    }
    for (int b = a + 1; b < n; b++) {
      const size_t ab = (size_t)a * (size_t)n + (size_t)b;
      json_t *f = wsp__figures(m, ab);
      json_object_set_new(f, "a", json_integer(a));
      json_object_set_new(f, "b", json_integer(b));
      if (m->flows[ab] > 0)
        json_object_set_new(f, "flows",
                            json_pack("{s:f, s:i, s:f, s:I, s:f}", "one_bytes_per_s",
                                      m->rate_one[ab], "k", m->flows[ab], "k_bytes_per_s",
                                      m->rate_k[ab], "from_bytes", (json_int_t)m->flows_min[ab],
                                      "rtt_s", m->rtt[ab]));
      json_array_append_new(pairs, f);
    }
  }
  return json_pack("{s:s, s:i, s:i, s:i, s:o, s:o, s:{s:i, s:f}, s:{s:I, s:I}, s:o, s:o, s:o}",
                   "format", WSP__NETMAP_FORMAT, "version", WSP__NETMAP_VERSION, "p", m->p,
                   "nodes", n, "node_of", node_of, "hosts", hosts, "probe", "passes", m->reps,
                   "seconds", m->seconds, "eager_limit", "intra_node",
                   (json_int_t)m->eager_intra, "inter_node", (json_int_t)m->eager_inter,
                   "groups", groups, "intra", intra, "pairs", pairs);
}

int wsp_netmap_save(const wsp_netmap_t *map, const char *path) {
  const char *fn = "wsp_netmap_save";
  if (map == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "%s: map is NULL", fn);
  if (path == NULL || *path == '\0')
    return wsp__fail(NULL, WSP_ERR_ARG, "%s: path is %s", fn, path ? "empty" : "NULL");
  json_t *doc = wsp__netmap_json(map);
  if (doc == NULL) return wsp__fail(NULL, WSP_ERR_NOMEM, "%s: out of memory", fn);
  /* Written next to its place and renamed over it: a reader never sees
   * half a map. */
  size_t len = strlen(path) + 16;
  char *tmp = malloc(len);
  int rc = WSP_OK;
  if (tmp == NULL) {
    rc = wsp__fail(NULL, WSP_ERR_NOMEM, "%s: out of memory", fn);
  } else {
    snprintf(tmp, len, "%s.%ld", path, (long)getpid() % 1000000);
    if (json_dump_file(doc, tmp, WSP__NETMAP_DUMP_FLAGS) != 0 ||
        rename(tmp, path) != 0) {
      rc = wsp__fail(NULL, WSP_ERR_CONFIG, "%s: cannot write %s: %s", fn, path,
                     strerror(errno));
      remove(tmp);
    }
  }
  free(tmp);
  json_decref(doc);
  return rc;
}

/* ---- reading ---- */

/* Fields of `o`: an integer in [lo, hi]; a number > 0. -1 with `why`
 * filled when the field is missing or out of range. */
static int wsp__get_int(json_t *o, const char *key, long long lo, long long hi, long long *v,
                        char *why, size_t wl) {
  json_t *x = json_object_get(o, key);
  if (!json_is_integer(x) || json_integer_value(x) < lo || json_integer_value(x) > hi) {
    snprintf(why, wl, "\"%s\" must be an integer in [%lld, %lld]", key, lo, hi);
    return -1;
  }
  *v = json_integer_value(x);
  return 0;
}

static int wsp__get_pos(json_t *o, const char *key, double *v, char *why, size_t wl) {
  json_t *x = json_object_get(o, key);
  double d = json_is_number(x) ? json_number_value(x) : -1;
  if (!(d > 0) || !isfinite(d)) {
    snprintf(why, wl, "\"%s\" must be a number > 0", key);
    return -1;
  }
  *v = d;
  return 0;
}

/* One entry of "intra" or "pairs" into the matrices at a, b (and b, a). */
static int wsp__read_figures(wsp_netmap_t *m, json_t *f, int a, int b, char *why, size_t wl) {
  size_t ab = (size_t)a * (size_t)m->nodes + (size_t)b, ba = (size_t)b * (size_t)m->nodes + (size_t)a;
  if (isfinite(m->lat[ab])) {
    snprintf(why, wl, "nodes %d and %d appear twice", a, b);
    return -1;
  }
  long long s, o;
  if (wsp__get_pos(f, "latency_s", &m->lat[ab], why, wl) ||
      wsp__get_pos(f, "inv_bandwidth_s_per_byte", &m->inv_bw[ab], why, wl) ||
      wsp__get_int(f, "samples", 0, INT32_MAX, &s, why, wl) ||
      wsp__get_int(f, "outliers", 0, INT32_MAX, &o, why, wl))
    return -1;
  m->lat[ba] = m->lat[ab];
  m->inv_bw[ba] = m->inv_bw[ab];
  m->samples[ab] = m->samples[ba] = (int)s;
  m->outliers[ab] = m->outliers[ba] = (int)o;
  json_t *fl = json_object_get(f, "flows");
  if (fl == NULL) return 0;
  long long k, from;
  if (a == b) {
    snprintf(why, wl, "node %d's own figures have \"flows\" (only pairs of nodes do)", a);
    return -1;
  }
  if (!json_is_object(fl) || wsp__get_pos(fl, "one_bytes_per_s", &m->rate_one[ab], why, wl) ||
      wsp__get_pos(fl, "k_bytes_per_s", &m->rate_k[ab], why, wl) ||
      wsp__get_int(fl, "k", 1, WSP_STRIPED_LANES_MAX, &k, why, wl) ||
      wsp__get_int(fl, "from_bytes", 0, INT64_MAX, &from, why, wl)) {
    if (!json_is_object(fl)) snprintf(why, wl, "\"flows\" must be an object");
    return -1;
  }
  /* The round trip came with the flows after them: optional, 0 (not
   * measured) up to a minute. */
  json_t *rt = json_object_get(fl, "rtt_s");
  if (rt) {
    double r = json_is_number(rt) ? json_number_value(rt) : -1;
    if (!(r >= 0 && r <= 60)) {
      snprintf(why, wl, "\"rtt_s\" must be a number of seconds in [0, 60]");
      return -1;
    }
    m->rtt[ab] = m->rtt[ba] = r;
  }
  m->rate_one[ba] = m->rate_one[ab];
  m->rate_k[ba] = m->rate_k[ab];
  m->flows[ab] = m->flows[ba] = (int)k;
  m->flows_min[ab] = m->flows_min[ba] = (size_t)from;
  return 0;
}

/* The map that the document describes, or NULL with `why` filled. */
static wsp_netmap_t *wsp__netmap_parse(json_t *doc, char *why, size_t wl) {
  wsp_netmap_t *m = NULL;
  long long v, p, nodes;
  const char *fmt = json_string_value(json_object_get(doc, "format"));
  if (!json_is_object(doc) || fmt == NULL || strcmp(fmt, WSP__NETMAP_FORMAT) != 0) {
    snprintf(why, wl, "not a network map (no \"format\": \"%s\")", WSP__NETMAP_FORMAT);
    return NULL;
  }
  if (wsp__get_int(doc, "version", 0, INT32_MAX, &v, why, wl)) return NULL;
  if (v != WSP__NETMAP_VERSION) {
    snprintf(why, wl, "version %lld; this wirespeed reads version %d", v, WSP__NETMAP_VERSION);
    return NULL;
  }
  if (wsp__get_int(doc, "p", 1, 1 << 24, &p, why, wl) ||
      wsp__get_int(doc, "nodes", 1, p, &nodes, why, wl))
    return NULL;
  json_t *node_of = json_object_get(doc, "node_of"), *hosts = json_object_get(doc, "hosts"),
         *groups = json_object_get(doc, "groups"), *intra = json_object_get(doc, "intra"),
         *pairs = json_object_get(doc, "pairs"), *probe = json_object_get(doc, "probe"),
         *eager = json_object_get(doc, "eager_limit");
  if (json_array_size(node_of) != (size_t)p || json_array_size(hosts) != (size_t)nodes ||
      json_array_size(groups) != (size_t)nodes || !json_is_array(intra) ||
      json_array_size(pairs) != (size_t)(nodes * (nodes - 1) / 2) || !json_is_object(probe) ||
      !json_is_object(eager)) {
    snprintf(why, wl, "\"node_of\" (p entries), \"hosts\" and \"groups\" (one per node), "
                      "\"intra\", \"pairs\" (one per pair of nodes), \"probe\" and "
                      "\"eager_limit\" are missing or of the wrong size");
    return NULL;
  }
  if ((m = wsp__netmap_new((int)p, (int)nodes)) == NULL) {
    snprintf(why, wl, "out of memory");
    return NULL;
  }
  long long x;
  for (size_t r = 0; r < (size_t)p; r++) {
    json_t *e = json_array_get(node_of, r);
    if (!json_is_integer(e) || json_integer_value(e) < 0 || json_integer_value(e) >= nodes) {
      snprintf(why, wl, "node_of[%zu] is not a node in [0, %lld)", r, nodes);
      goto bad;
    }
    m->node_of[r] = (int)json_integer_value(e);
  }
  for (size_t a = 0; a < (size_t)nodes; a++) {
    const char *h = json_string_value(json_array_get(hosts, a));
    json_t *g = json_array_get(groups, a);
    char *end = NULL;
    if (h == NULL || strlen(h) != 16 || (m->host[a] = strtoull(h, &end, 16), *end != '\0')) {
      snprintf(why, wl, "hosts[%zu] is not 16 hex digits", a);
      goto bad;
    }
    if (!json_is_integer(g) || json_integer_value(g) < 0 || json_integer_value(g) >= nodes) {
      snprintf(why, wl, "groups[%zu] is not a group in [0, %lld)", a, nodes);
      goto bad;
    }
    m->group[a] = (int)json_integer_value(g);
    if (m->group[a] + 1 > m->groups) m->groups = m->group[a] + 1;
  }
  for (size_t i = 0; i < json_array_size(intra); i++) {
    json_t *f = json_array_get(intra, i);
    char inner[300];
    if (wsp__get_int(f, "node", 0, nodes - 1, &x, inner, sizeof inner) ||
        wsp__read_figures(m, f, (int)x, (int)x, inner, sizeof inner)) {
      snprintf(why, wl, "intra[%zu]: %s", i, inner);
      goto bad;
    }
  }
  for (size_t i = 0; i < json_array_size(pairs); i++) {
    json_t *f = json_array_get(pairs, i);
    long long a, b;
    char inner[300];
    if (wsp__get_int(f, "a", 0, nodes - 1, &a, inner, sizeof inner) ||
        wsp__get_int(f, "b", a + 1, nodes - 1, &b, inner, sizeof inner) ||
        wsp__read_figures(m, f, (int)a, (int)b, inner, sizeof inner)) {
      snprintf(why, wl, "pairs[%zu]: %s", i, inner);
      goto bad;
    }
  }
  long long ei, ee, passes;
  if (wsp__get_int(eager, "intra_node", 0, INT64_MAX, &ei, why, wl) ||
      wsp__get_int(eager, "inter_node", 0, INT64_MAX, &ee, why, wl) ||
      wsp__get_int(probe, "passes", 0, INT32_MAX, &passes, why, wl))
    goto bad;
  json_t *sec = json_object_get(probe, "seconds");
  if (!json_is_number(sec) || !(json_number_value(sec) >= 0)) {
    snprintf(why, wl, "\"probe\".\"seconds\" must be a number >= 0");
    goto bad;
  }
  m->eager_intra = (size_t)ei;
  m->eager_inter = (size_t)ee;
  m->reps = (int)passes;
  m->seconds = json_number_value(sec);
  return m;
bad:
  wsp_netmap_free(&m);
  return NULL;
}

wsp_netmap_t *wsp__netmap_from_bytes(const char *bytes, size_t len, char *why, size_t wl) {
  json_error_t jerr;
  json_t *doc = json_loadb(bytes, len, 0, &jerr);
  if (doc == NULL) {
    snprintf(why, wl, "line %d, column %d: %s", jerr.line, jerr.column, jerr.text);
    return NULL;
  }
  wsp_netmap_t *m = wsp__netmap_parse(doc, why, wl);
  json_decref(doc);
  return m;
}

char *wsp__netmap_to_text(const wsp_netmap_t *m) {
  json_t *doc = wsp__netmap_json(m);
  char *text = doc ? json_dumps(doc, WSP__NETMAP_DUMP_FLAGS) : NULL;
  json_decref(doc);
  return text;
}

/* Rank 0: the file's bytes, or a reason it has none. */
static char *wsp__read_file(const char *path, size_t *len, char *why, size_t wl) {
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  if (f == NULL) {
    snprintf(why, wl, "cannot open it: %s", strerror(errno));
    return NULL;
  }
  if (fseek(f, 0, SEEK_END) != 0 || ftell(f) < 0) {
    snprintf(why, wl, "cannot read it: %s", strerror(errno));
  } else if ((size_t)ftell(f) > WSP__NETMAP_FILE_MAX) {
    snprintf(why, wl, "it is larger than %zu bytes", WSP__NETMAP_FILE_MAX);
  } else {
    *len = (size_t)ftell(f);
    rewind(f);
    buf = malloc(*len ? *len : 1);
    if (buf == NULL) snprintf(why, wl, "out of memory for %zu bytes", *len);
    else if (fread(buf, 1, *len, f) != *len) {
      snprintf(why, wl, "cannot read it: %s", ferror(f) ? strerror(errno) : "short read");
      free(buf);
      buf = NULL;
    }
  }
  fclose(f);
  return buf;
}

int wsp_netmap_load(wsp_comm_t *comm, const char *path, wsp_netmap_t **out) {
  const char *fn = "wsp_netmap_load";
  if (comm == NULL) return wsp__fail(NULL, WSP_ERR_ARG, "%s: comm is NULL", fn);
  if (wsp__usable(comm, fn) != WSP_OK) return WSP_ERR_TIMEOUT;
  if (path == NULL || out == NULL)
    return wsp__fail(comm, WSP_ERR_ARG, "%s: %s is NULL", fn, path == NULL ? "path" : "out");
  *out = NULL;
  /* Rank 0's news: [0] the length or UINT64_MAX for none, then the reason. */
  struct {
    uint64_t len;
    char why[400];
  } head = {0, ""};
  char *bytes = NULL;
  int rc = WSP_OK;
  wsp_netmap_t *m = NULL;
  if (comm->rank == 0) {
    size_t len = 0;
    bytes = wsp__read_file(path, &len, head.why, sizeof head.why);
    head.len = bytes ? (uint64_t)len : UINT64_MAX;
  }
  WSP__MPI_COLL_GOTO(comm, rc, out, Bcast, &head, (int)sizeof head, MPI_BYTE, 0, comm->mpi);
  if (head.len == UINT64_MAX) {
    rc = wsp__fail(comm, WSP_ERR_CONFIG, "%s: map file %s: %s", fn, path, head.why);
    goto out;
  }
  if (comm->rank != 0) bytes = malloc(head.len ? (size_t)head.len : 1);
  if ((rc = wsp__agree_alloc(comm, bytes == NULL, fn)) != WSP_OK) goto out;
  for (uint64_t off = 0; off < head.len;) { /* in pieces below INT_MAX */
    int n = head.len - off > (1u << 30) ? 1 << 30 : (int)(head.len - off);
    WSP__MPI_COLL_GOTO(comm, rc, out, Bcast, bytes + off, n, MPI_BYTE, 0, comm->mpi);
    off += (uint64_t)n;
  }
  /* The same bytes everywhere: the same verdict everywhere. */
  char why[400] = "";
  m = wsp__netmap_from_bytes(bytes, (size_t)head.len, why, sizeof why);
  int nomem = m == NULL && strcmp(why, "out of memory") == 0;
  if ((rc = wsp__agree_alloc(comm, nomem, fn)) != WSP_OK) goto out;
  if (m == NULL) {
    rc = wsp__fail(comm, WSP_ERR_CONFIG, "%s: map file %s: %s", fn, path, why);
    goto out;
  }
  /* It must be a map of this job's shape; every rank parsed the same
   * bytes, and the check makes sure they made the same map of them. */
  char what[300];
  snprintf(what, sizeof what, "map file %s", path);
  if ((rc = wsp__netmap_fits(comm, m, fn, what, WSP_ERR_CONFIG, 0)) != WSP_OK) goto out;
  *out = m;
  m = NULL;
out:
  free(bytes);
  wsp_netmap_free(&m);
  return rc;
}
