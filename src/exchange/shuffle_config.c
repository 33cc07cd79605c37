/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Configuration of the all-pairs shuffle: defaults, WSP_SHUFFLE_* variables
 * (docs/env.md; keep it in step with this file), the checks wsp_shuffle_open
 * applies, and the memory shares derived from cfg.mem_limit (see
 * shuffle_internal.h for what each share holds and why the shares bound the
 * engine's memory).
 */
#include "shuffle_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Defaults. A batch of about 64 KiB (requests plus responses) is what
 * G-thinker found safe per batch (~100 kB) with room for headers; 2 ms
 * lets small requests gather without adding noticeable latency on a LAN. */
#define WSP__SHUFFLE_DEF_BATCH ((size_t)64 << 10)
#define WSP__SHUFFLE_DEF_DELAY 0.002
#define WSP__SHUFFLE_DEF_PEER_WINDOW ((size_t)1 << 20)
#define WSP__SHUFFLE_DEF_WINDOW ((size_t)16 << 20)
#define WSP__SHUFFLE_DEF_MEM ((size_t)64 << 20)
/* Ranges accepted (also from the environment). */
#define WSP__SHUFFLE_MIN_BATCH ((size_t)256)
#define WSP__SHUFFLE_MAX_BATCH ((size_t)1 << 30)
#define WSP__SHUFFLE_MIN_WINDOW ((size_t)1 << 10)
#define WSP__SHUFFLE_MAX_SIZE ((size_t)1 << 44)
#define WSP__SHUFFLE_MAX_DELAY 10.0 /* seconds */

int wsp_shuffle_config_init(wsp_shuffle_config_t *cfg) {
  if (cfg == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG, "wsp_shuffle_config_init: cfg is NULL");
  memset(cfg, 0, sizeof *cfg);
  cfg->batch_bytes = WSP__SHUFFLE_DEF_BATCH;
  cfg->batch_delay = WSP__SHUFFLE_DEF_DELAY;
  cfg->peer_window = WSP__SHUFFLE_DEF_PEER_WINDOW;
  cfg->window = WSP__SHUFFLE_DEF_WINDOW;
  cfg->mem_limit = WSP__SHUFFLE_DEF_MEM;
  cfg->mode = WSP_SHUFFLE_ADAPTIVE;
  cfg->rate = 0;
  cfg->progress_thread = 0;
  return WSP_OK;
}

int wsp_shuffle_config_from_env(wsp_shuffle_config_t *cfg) {
  if (cfg == NULL)
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "wsp_shuffle_config_from_env: cfg is NULL");
  wsp_shuffle_config_t c = *cfg; /* a bad variable leaves *cfg untouched */
  int rc;
  if ((rc = wsp__env_size("WSP_SHUFFLE_BATCH", WSP__SHUFFLE_MIN_BATCH,
                          WSP__SHUFFLE_MAX_BATCH, &c.batch_bytes)))
    return rc;
  size_t us = (size_t)llround(c.batch_delay * 1e6);
  if ((rc = wsp__env_count("WSP_SHUFFLE_BATCH_DELAY_US", 0, (size_t)(WSP__SHUFFLE_MAX_DELAY * 1e6),
                           &us)))
    return rc;
  c.batch_delay = (double)us * 1e-6;
  if ((rc = wsp__env_size("WSP_SHUFFLE_PEER_WINDOW", WSP__SHUFFLE_MIN_WINDOW,
                          WSP__SHUFFLE_MAX_SIZE, &c.peer_window)))
    return rc;
  if ((rc = wsp__env_size("WSP_SHUFFLE_WINDOW", WSP__SHUFFLE_MIN_WINDOW,
                          WSP__SHUFFLE_MAX_SIZE, &c.window)))
    return rc;
  if ((rc = wsp__env_size("WSP_SHUFFLE_MEMORY", WSP__SHUFFLE_MIN_MEM,
                          WSP__SHUFFLE_MAX_SIZE, &c.mem_limit)))
    return rc;
  const char *s, *mode = getenv("WSP_SHUFFLE_MODE");
  int mode_set = mode && *mode;
  if (mode_set) {
    if (strcasecmp(mode, "adaptive") == 0)
      c.mode = WSP_SHUFFLE_ADAPTIVE;
    else if (strcasecmp(mode, "fixed") == 0)
      c.mode = WSP_SHUFFLE_FIXED;
    else
      return wsp__fail(NULL, WSP_ERR_CONFIG,
                       "WSP_SHUFFLE_MODE=\"%s\": expected adaptive or fixed",
                       mode);
  }
  const char *rate = getenv("WSP_SHUFFLE_RATE");
  if (rate && *rate) {
    if (wsp_parse_rate(rate, &c.rate) != WSP_OK)
      return wsp__fail(NULL, WSP_ERR_CONFIG,
                       "WSP_SHUFFLE_RATE=\"%s\": expected a rate > 0 such as "
                       "3000000, 3MB (bytes/s) or 24mbit (bits/s)",
                       rate);
    if (mode_set && c.mode == WSP_SHUFFLE_ADAPTIVE)
      return wsp__fail(NULL, WSP_ERR_CONFIG,
                       "WSP_SHUFFLE_RATE is set but WSP_SHUFFLE_MODE=adaptive "
                       "(a rate only applies to fixed mode)");
    c.mode = WSP_SHUFFLE_FIXED;
  } else if (c.mode == WSP_SHUFFLE_FIXED && !(c.rate > 0)) {
    return wsp__fail(NULL, WSP_ERR_CONFIG,
                     "WSP_SHUFFLE_MODE=fixed needs WSP_SHUFFLE_RATE");
  }
  s = getenv("WSP_SHUFFLE_PIECE");
  if (s && *s && strcmp(s, "0") != 0 &&
      (rc = wsp__env_size("WSP_SHUFFLE_PIECE", WSP__PIECE_MIN, WSP__SHUFFLE_MAX_BATCH,
                          &c.piece_bytes)))
    return rc;
  const char *th = getenv("WSP_SHUFFLE_PROGRESS_THREAD");
  if (th && *th) {
    if (strcmp(th, "0") != 0 && strcmp(th, "1") != 0)
      return wsp__fail(NULL, WSP_ERR_CONFIG,
                       "WSP_SHUFFLE_PROGRESS_THREAD=\"%s\": expected 0 or 1",
                       th);
    c.progress_thread = th[0] == '1';
  }
  /* The testing aid is not part of the configuration, but a bad value is
   * refused here too, like the communicator's aids (src/comm/config.c),
   * so that whatever checks the environment sees it. */
  size_t fault_n = 0;
  if ((rc = wsp__shuffle_fault_nomem(NULL, &fault_n))) return rc;
  *cfg = c;
  return WSP_OK;
}

int wsp__shuffle_fault_nomem(const wsp_comm_t *comm, size_t *n) {
  int rc = wsp__env_count("WSP_SHUFFLE_FAULT_NOMEM", 0, (size_t)1 << 30, n);
  if (rc == WSP_OK && *n == 1) /* nothing could ever be received */
    rc = wsp__fail(comm, WSP_ERR_CONFIG,
                   "WSP_SHUFFLE_FAULT_NOMEM=1: every allocation would fail "
                   "and the shuffle could never progress; use 0 (off) or "
                   "N >= 2 (one in N fails)");
  return rc;
}

int wsp__shuffle_config_check(const wsp_shuffle_config_t *c) {
  const char *fn = "wsp_shuffle_open";
  if (c->batch_bytes < WSP__SHUFFLE_MIN_BATCH ||
      c->batch_bytes > WSP__SHUFFLE_MAX_BATCH)
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "%s: cfg->batch_bytes = %zu is not in [%zu, %zu]", fn,
                     c->batch_bytes, WSP__SHUFFLE_MIN_BATCH,
                     WSP__SHUFFLE_MAX_BATCH);
  if (!(c->batch_delay >= 0) || c->batch_delay > WSP__SHUFFLE_MAX_DELAY)
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "%s: cfg->batch_delay = %g s is not in [0, %g]", fn,
                     c->batch_delay, WSP__SHUFFLE_MAX_DELAY);
  if (c->peer_window < WSP__SHUFFLE_MIN_WINDOW ||
      c->peer_window > WSP__SHUFFLE_MAX_SIZE)
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "%s: cfg->peer_window = %zu is not in [%zu, %zu]", fn,
                     c->peer_window, WSP__SHUFFLE_MIN_WINDOW,
                     WSP__SHUFFLE_MAX_SIZE);
  if (c->window < WSP__SHUFFLE_MIN_WINDOW || c->window > WSP__SHUFFLE_MAX_SIZE)
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "%s: cfg->window = %zu is not in [%zu, %zu]", fn,
                     c->window, WSP__SHUFFLE_MIN_WINDOW, WSP__SHUFFLE_MAX_SIZE);
  if (c->mem_limit < WSP__SHUFFLE_MIN_MEM || c->mem_limit > WSP__SHUFFLE_MAX_SIZE)
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "%s: cfg->mem_limit = %zu is not in [%zu, %zu]", fn,
                     c->mem_limit, WSP__SHUFFLE_MIN_MEM, WSP__SHUFFLE_MAX_SIZE);
  if (c->mode != WSP_SHUFFLE_ADAPTIVE && c->mode != WSP_SHUFFLE_FIXED)
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "%s: cfg->mode = %d is not a wsp_shuffle_mode_t", fn,
                     (int)c->mode);
  if (c->mode == WSP_SHUFFLE_FIXED && (!(c->rate > 0) || !isfinite(c->rate)))
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "%s: cfg->rate = %g: fixed mode needs a rate > 0 "
                     "(bytes/s)",
                     fn, c->rate);
  if (c->piece_bytes != 0 &&
      (c->piece_bytes < WSP__PIECE_MIN || c->piece_bytes > WSP__SHUFFLE_MAX_BATCH))
    return wsp__fail(NULL, WSP_ERR_ARG, "%s: cfg->piece_bytes = %zu is not 0 or in [%d, %zu]",
                     fn, c->piece_bytes, WSP__PIECE_MIN, WSP__SHUFFLE_MAX_BATCH);
  if (c->progress_thread != 0 && c->progress_thread != 1)
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "%s: cfg->progress_thread = %d is not 0 or 1", fn,
                     c->progress_thread);
  return WSP_OK;
}

/* FNV-1a over the fields every rank must agree on (the progress thread is
 * a local choice). */
uint64_t wsp__shuffle_config_fingerprint(const wsp_shuffle_config_t *c) {
  uint64_t v[7] = {c->batch_bytes, (uint64_t)llround(c->batch_delay * 1e9),
                   c->peer_window, c->window, c->mem_limit, (uint64_t)c->mode,
                   (uint64_t)llround(c->mode == WSP_SHUFFLE_FIXED ? c->rate : 0)};
  uint64_t h = 1469598103934665603ULL;
  const unsigned char *b = (const unsigned char *)v;
  for (size_t i = 0; i < sizeof v; i++) h = (h ^ b[i]) * 1099511628211ULL;
  return h;
}

int wsp__shuffle_limits(size_t mem, int p, size_t batch_bytes,
                        wsp__shuffle_limits_t *l) {
  memset(l, 0, sizeof *l);
  l->mem = mem;
  l->backlog = mem / 4;
  l->inflight = mem / 4;
  l->intake = mem / 4;
  l->resp_out = mem / 8;
  l->resp_in = mem - l->backlog - l->inflight - l->intake - l->resp_out;
  l->peer_req = p > 1 ? l->intake / (size_t)(p - 1) : l->intake;
  if (l->peer_req > l->inflight) l->peer_req = l->inflight;
  /* One request alone in a batch must fit the per-peer share. */
  size_t overhead = WSP__HDR_BYTES + WSP__ENTRY_BYTES;
  l->max_request = l->peer_req > overhead ? l->peer_req - overhead : 0;
  /* A chunk is flushed once it reaches `chunk`, so before a reply it holds
   * less than that in a buffer of capacity < 2 chunk <= resp_out/4; one
   * reply of at most resp_out/4 then grows it to at most resp_out/2. */
  l->chunk = batch_bytes < l->resp_out / 8 ? batch_bytes : l->resp_out / 8;
  l->max_response = l->resp_out / 4 > overhead ? l->resp_out / 4 - overhead : 0;
  if (l->max_request < WSP__SHUFFLE_MIN_PAYLOAD ||
      l->max_response < WSP__SHUFFLE_MIN_PAYLOAD)
    return wsp__fail(NULL, WSP_ERR_ARG,
                     "wsp_shuffle_open: cfg->mem_limit = %zu is too small "
                     "for %d ranks: each peer's share of it (mem_limit/4/(p-1)"
                     " = %zu bytes) must hold a request of at least %zu bytes",
                     mem, p, l->peer_req, WSP__SHUFFLE_MIN_PAYLOAD);
  return WSP_OK;
}

size_t wsp__grow_cap(size_t cap, size_t need, size_t max) {
  if (need <= cap) return cap;
  size_t n = cap ? cap : 256;
  while (n < need) n = n > SIZE_MAX / 2 ? need : 2 * n;
  if (n > max && need <= max) n = max;
  if (n < need) n = need;
  return n;
}
