/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The algorithm tables, built from the rows of registry.h, and the public
 * calls that read them: names, descriptions, preconditions and costs of
 * every algorithm (what wsp-info and docs/coll.md print).
 */
#include "coll_internal.h"

#include <stdio.h>
#include <string.h>

/* Row 0: the MPI library's own collective, on the private communicator. */
#define WSP__NATIVE_ROW(C, mpi)                                                \
  [WSP__##C##_NATIVE] = {.info = {.name = "native",                            \
                                  .desc = "the MPI library's " mpi,            \
                                  .cost = "unknown (the MPI library's choice)"}, \
                         .fallback = WSP__##C##_NATIVE,                        \
                         .run = wsp__coll_native},
#define WSP__ALG_ROW(C, c, ID, name_, pre_, fb, desc_)                         \
  [WSP__##C##_##ID] = {.info = {.name = #name_, .desc = desc_,                 \
                                .cost = wsp__##c##_##name_##_formula},         \
                       .pre = (pre_),                                          \
                       .fallback = WSP__##C##_##fb,                            \
                       .cost = wsp__##c##_##name_##_cost,                      \
                       .run = wsp__##c##_##name_},
#define WSP__ALGS_ARRAY(C, c, mpi)                                             \
  static const wsp__coll_alg_t wsp__##c##_algs[WSP__##C##_COUNT] = {           \
      WSP__NATIVE_ROW(C, mpi) WSP__##C##_ALGS(WSP__ALG_ROW, C, c)};
WSP__COLLS(WSP__ALGS_ARRAY)

#define WSP__TABLE(C, c, mpi)                                                  \
  [WSP_COLL_##C] = {.coll = WSP_COLL_##C, .name = #c,                          \
                    .count = WSP__##C##_COUNT, .algs = wsp__##c##_algs},
static const wsp__coll_table_t wsp__tables[WSP_COLL_COUNT] = {WSP__COLLS(WSP__TABLE)};

#define WSP__ONE(C, c, mpi) +1
_Static_assert(0 WSP__COLLS(WSP__ONE) == WSP_COLL_COUNT,
               "WSP__COLLS lists every wsp_coll_t once");

const wsp__coll_table_t *wsp__coll_table(wsp_coll_t coll) {
  if ((int)coll < 0 || coll >= WSP_COLL_COUNT) return NULL;
  return &wsp__tables[coll];
}

const char *wsp_coll_name(wsp_coll_t coll) {
  const wsp__coll_table_t *t = wsp__coll_table(coll);
  return t ? t->name : NULL;
}

int wsp_coll_from_name(const char *name, wsp_coll_t *coll) {
  if (name == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_coll_from_name: name is NULL");
  if (coll == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_coll_from_name: coll is NULL");
  char valid[128] = "";
  size_t used = 0;
  for (int c = 0; c < WSP_COLL_COUNT; c++) {
    if (strcmp(name, wsp__tables[c].name) == 0) {
      *coll = (wsp_coll_t)c;
      return WSP_OK;
    }
    int n = snprintf(valid + used, sizeof valid - used, "%s%s", c ? ", " : "",
                     wsp__tables[c].name);
    if (n > 0 && (size_t)n < sizeof valid - used) used += (size_t)n;
  }
  return wsp__fail(NULL, WSP_ERR_ARG, "unknown collective \"%s\" (valid: %s)", name,
                   valid);
}

int wsp_coll_alg_count(wsp_coll_t coll) {
  const wsp__coll_table_t *t = wsp__coll_table(coll);
  return t ? t->count : 0;
}

/* auto is no row of a table, but it has a name and a description like the
 * rows (the same for every collective), for wsp-info, the tools and the
 * docs. */
static const wsp_alg_info_t wsp__coll_auto_info = {
    .name = "auto",
    .desc = "the rules file, then the cost model, choose the algorithm of each "
            "call from p, the size and the network",
    .cost = "that of the algorithm chosen"};

const wsp_alg_info_t *wsp_coll_alg_info(wsp_coll_t coll, int alg) {
  const wsp__coll_table_t *t = wsp__coll_table(coll);
  if (t != NULL && alg == WSP_ALG_AUTO) return &wsp__coll_auto_info;
  if (t == NULL || alg < 0 || alg >= t->count) return NULL;
  return &t->algs[alg].info;
}

void wsp__pre_text(unsigned pre, char *buf, size_t len) {
  static const struct {
    unsigned flag;
    const char *text;
  } names[] = {
#define WSP__PRE_NAME(flag, bit, text) {WSP__PRE_##flag, text},
      WSP__PRE_MAP(WSP__PRE_NAME)
#undef WSP__PRE_NAME
  };
  size_t used = 0;
  if (len) buf[0] = '\0';
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (pre & names[i].flag) {
      int n = snprintf(buf + used, len - used, "%s%s", used ? "; " : "", names[i].text);
      if (n < 0 || (size_t)n >= len - used) break;
      used += (size_t)n;
    }
}

const char *wsp_coll_alg_preconditions(wsp_coll_t coll, int alg) {
  static _Thread_local char buf[256];
  const wsp__coll_table_t *t = wsp__coll_table(coll);
  if (t == NULL || alg < 0 || alg >= t->count) return NULL;
  const wsp__coll_alg_t *r = &t->algs[alg];
  wsp__pre_text(r->pre, buf, sizeof buf);
  if (r->pre) { /* and what runs when they do not hold */
    size_t used = strlen(buf);
    snprintf(buf + used, sizeof buf - used, " (else %s)", t->algs[r->fallback].info.name);
  }
  return buf;
}

int wsp_coll_alg_from_name(wsp_coll_t coll, const char *name, int *alg) {
  const wsp__coll_table_t *t = wsp__coll_table(coll);
  if (t == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "wsp_coll_alg_from_name: coll = %d is not a wsp_coll_t",
                     (int)coll);
  if (name == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_coll_alg_from_name: name is NULL");
  if (alg == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_coll_alg_from_name: alg is NULL");
  if (strcmp(name, "auto") == 0) {
    *alg = WSP_ALG_AUTO;
    return WSP_OK;
  }
  char valid[512] = "auto";
  size_t used = strlen(valid);
  for (int i = 0; i < t->count; i++) {
    if (strcmp(name, t->algs[i].info.name) == 0) {
      *alg = i;
      return WSP_OK;
    }
    int n = snprintf(valid + used, sizeof valid - used, ", %s", t->algs[i].info.name);
    if (n > 0 && (size_t)n < sizeof valid - used) used += (size_t)n;
  }
  return wsp__fail(NULL, WSP_ERR_ARG, "unknown %s algorithm \"%s\" (valid: %s)", t->name,
                   name, valid);
}
