/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wsp-bench p2p — one large message from one rank to another: the MPI's
 * own MPI_Send/MPI_Recv, wsp_striped_send with k lanes forced and with
 * auto, and iperf3 -P k between the same two hosts.
 *
 * A transfer is timed on the sender from a barrier to a one-byte answer
 * the receiver sends once it holds the whole message (the answer's
 * latency is in every method's time alike). Methods and lane counts are
 * interleaved within each repetition, in a new random order each time,
 * and the median over repetitions is reported, so that every figure of a
 * size comes from the same minutes. Each lane count has a communicator of
 * its own, set up (and, for auto, probed) by an untimed message first;
 * the set-up's time is reported apart. With --encrypt 0,1 each lane count
 * has two communicators, one with plaintext lanes and one with sealed
 * lanes, timed in the same shuffled order as the rest.
 *
 * Each transfer's CPU time is taken on both ends with the process's CPU
 * clock, over the same span as the sender's time (the receiver's reaches
 * the moment it holds the whole message and travels back in its answer),
 * so that what a method costs in cores is set beside what it moves:
 * GB per CPU-second = bytes / (sender's CPU s + receiver's CPU s). It
 * counts every thread of both processes, the MPI's polling included, but
 * not the kernel's work done outside them (softirqs on another core).
 *
 * iperf3 runs between the hosts of the two ranks, to the address the
 * lanes connected to: the raw TCP rate of the same path with k streams,
 * and its CPU cost from iperf3's own report of both ends.
 */
#define _DEFAULT_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "pattern.h"
#include "stats.h"

extern char **environ;

enum { M_MPI, M_STRIPED, M_IPERF, M_COUNT };
static const char *const method_names[] = {"mpi", "striped", "iperf", NULL};
static const char *const encrypt_names[] = {"0", "1", NULL};
enum { TAG_DATA = 1, TAG_ACK = 2, TAG_PORT = 3 };

typedef struct p2p_opts {
  wsp_opt_sizes_t sizes;
  wsp_opt_strings_t lanes;
  wsp_opt_ints_t methods, encrypt;
  int encrypt_given, iperf_bytes;
  long reps, from, to;
  double iperf_seconds, link, hold;
  wsp_bench_io_t io;
} p2p_opts_t;

static int parse(p2p_opts_t *o, int argc, char **argv, int rank) {
  const wsp_opt_t table[] = {
      {"--sizes", WSP_OPT_SIZE_LIST, &o->sizes, "LIST", "message sizes, at most 1G",
       "100K,1M,10M,100M,256M", 0, (double)(1 << 30), NULL, NULL},
      {"--lanes", WSP_OPT_STRING_LIST, &o->lanes, "LIST",
       "lane counts of wsp_striped_send (1 to 64) and auto; also the streams of "
       "iperf3 -P",
       "1,2,4,8,16,auto", 0, 0, NULL, NULL},
      {"--methods", WSP_OPT_CHOICE_LIST, &o->methods, "LIST", "among mpi,striped,iperf", "all", 0,
       0, method_names, NULL},
      {"--encrypt", WSP_OPT_CHOICE_LIST, &o->encrypt, "LIST",
       "among 0,1: each lane count gets one communicator per value, with lanes in clear "
       "(0) or sealed with AES-256-GCM (1, rows marked \"sealed\"), timed side by side",
       "WSP_P2P_ENCRYPT's value", 0, 0, encrypt_names, &o->encrypt_given},
      {"--reps", WSP_OPT_INT, &o->reps, "N", "repetitions; the median is reported", "3", 1, 1000,
       NULL, NULL},
      {"--from", WSP_OPT_INT, &o->from, "RANK", "the sender", "0", 0, 1 << 30, NULL, NULL},
      {"--to", WSP_OPT_INT, &o->to, "RANK", "the receiver", "the last rank", -1, 1 << 30, NULL,
       NULL},
      {"--seconds", WSP_OPT_DOUBLE, &o->iperf_seconds, "SEC",
       "length of each iperf3 run (the other methods send one message per repetition)", "4", 1, 600,
       NULL, NULL},
      WSP_OPT_DEPRECATED("--iperf-seconds", "--seconds"),
      {"--iperf-bytes", WSP_OPT_FLAG, &o->iperf_bytes, NULL,
       "each iperf3 run sends one message of each size (iperf3 -n SIZE, cold connections "
       "like a first message's) instead of running --seconds",
       NULL, 0, 0, NULL, NULL},
      {"--link-rate", WSP_OPT_RATE, &o->link, "RATE",
       "the path's capacity (25mbit, 1gbit): rates are also given as fractions of it", NULL, 0, 0,
       NULL, NULL},
      {"--hold", WSP_OPT_DOUBLE, &o->hold, "SEC",
       "wait SEC seconds after the lanes are set up, before the first timed transfer "
       "(time for a script to reshape a lane's flow, as bench/p2p_netlab.sh does)",
       "0", 0, 3600, NULL, NULL},
      WSP_BENCH_OPT_JSON(o->io, "append one JSON line per measurement"),
      WSP_BENCH_OPT_LABEL(o->io),
      WSP_BENCH_OPT_PLOT(o->io, "draw rate against size (python/wsp_report)"),
      WSP_BENCH_OPT_QUIET(o->io),
      WSP_BENCH_OPT_END};
  const wsp_opt_cmd_t cmd = {
      "usage: mpirun -np N wsp-bench p2p [options]\n"
      "One message from --from to --to: MPI_Send, wsp_striped_send (k lanes, auto)\n"
      "and iperf3 -P k on the same path. Striping needs nothing else; iperf3 must\n"
      "be installed on both hosts (its rows are skipped otherwise).\n",
      table,
      "Columns: the median time and rate over the repetitions; GB/CPU-s, bytes\n"
      "(1 GB = 1e9) over the CPU seconds of the sender's and the receiver's\n"
      "processes together (median over the repetitions; for iperf3 from its own\n"
      "report of both ends); the rate over --link-rate; MPI_Send's time over the\n"
      "row's. The JSON lines keep every repetition's time and both ends' CPU\n"
      "seconds.\n"};
  return wsp_bench_parse(&cmd, argc, argv, rank);
}

/* A lane configuration: 0 lanes is auto; encrypt 1 seals the lanes. */
typedef struct lane_cfg {
  int lanes, encrypt;
  wsp_comm_t *comm;
  double setup_s;
  wsp_striped_info_t info;
} lane_cfg_t;

static int parse_lanes(const p2p_opts_t *o, lane_cfg_t *cfg, int rank) {
  for (int i = 0; i < o->lanes.n; i++) {
    const char *s = o->lanes.item[i];
    char *end = NULL;
    long v = strcmp(s, "auto") == 0 ? 0 : strtol(s, &end, 10);
    if (strcmp(s, "auto") != 0 && (end == s || *end || v < 1 || v > 64)) {
      if (rank == 0)
        fprintf(stderr, "error: --lanes: \"%s\" is neither a lane count in [1, 64] nor auto\n",
                s);
      return -1;
    }
    cfg[i].lanes = (int)v;
  }
  return 0;
}

/* ---- one transfer ---- */

/* One transfer as the sender sees it: its time, its own CPU seconds and
 * the receiver's (sent back in the answer); zeros on the other ranks. */
typedef struct sample {
  double t, cpu_send, cpu_recv;
} sample_t;

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static sample_t transfer(const p2p_opts_t *o, int rank, int method, wsp_comm_t *comm,
                         unsigned char *buf, size_t n) {
  int from = (int)o->from, to = (int)o->to;
  double ack = 0;
  sample_t s = {0, 0, 0};
  /* The two ends leave the barrier as MPI's blocking wait would; the other
   * ranks wait for the next transfer without spinning. */
  wsp_bench_barrier(rank, rank != from && rank != to, "a transfer's barrier");
  double t0 = MPI_Wtime(), c0 = cpu_seconds();
  int rc = WSP_OK;
  if (rank == from) {
    if (method == M_MPI)
      rc = MPI_Send(buf, (int)n, MPI_BYTE, to, TAG_DATA, MPI_COMM_WORLD) == MPI_SUCCESS
               ? WSP_OK
               : WSP_ERR_MPI;
    else
      rc = wsp_striped_send(comm, buf, n, to, TAG_DATA);
    if (rc == WSP_OK) {
      MPI_Recv(&ack, 1, MPI_DOUBLE, to, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      s.t = MPI_Wtime() - t0;
      s.cpu_send = cpu_seconds() - c0;
      s.cpu_recv = ack;
    }
  } else if (rank == to) {
    if (method == M_MPI)
      rc = MPI_Recv(buf, (int)n, MPI_BYTE, from, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE) ==
                   MPI_SUCCESS
               ? WSP_OK
               : WSP_ERR_MPI;
    else
      rc = wsp_striped_recv(comm, buf, n, from, TAG_DATA);
    if (rc == WSP_OK) {
      ack = cpu_seconds() - c0;
      MPI_Send(&ack, 1, MPI_DOUBLE, from, TAG_ACK, MPI_COMM_WORLD);
    }
  }
  if (rc != WSP_OK)
    wsp_bench_die(rank, method == M_MPI ? "MPI_Send/MPI_Recv" : "wsp_striped_send",
                  wsp_last_error());
  return s;
}

/* ---- iperf3 ---- */

static int have_iperf(void) {
  return system("iperf3 --version >/dev/null 2>&1") == 0;
}

/* A port the system hands out now (free a moment later, in all
 * likelihood). */
static int free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  socklen_t l = sizeof a;
  int port = -1;
  if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
      getsockname(fd, (struct sockaddr *)&a, &l) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) close(fd);
  return port;
}

/* What one iperf3 run reports on the sender: the received rate (bytes/s;
 * -1 when it failed) and the CPU seconds of its client and its server
 * (iperf3's percentages of one core over the test's duration; -1 when
 * missing). Zeros elsewhere. */
typedef struct iperf_result {
  double rate, bytes, cpu_host, cpu_remote;
} iperf_result_t;

static double json_num(json_t *obj, const char *key) {
  json_t *v = json_object_get(obj, key);
  return json_is_number(v) ? json_number_value(v) : -1;
}

static iperf_result_t iperf(const p2p_opts_t *o, int rank, int k, size_t bytes, const char *addr) {
  int from = (int)o->from, to = (int)o->to, port = 0;
  pid_t server = -1;
  if (rank == to) {
    port = free_port();
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    char *argv[] = {"iperf3", "-s", "-1", "-p", ps, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    if (port <= 0 || posix_spawnp(&server, "iperf3", &fa, NULL, argv, environ) != 0) {
      server = -1;
      port = -1;
    }
    posix_spawn_file_actions_destroy(&fa);
    /* Give the server a moment to listen. */
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, NULL);
    MPI_Send(&port, 1, MPI_INT, from, TAG_PORT, MPI_COMM_WORLD);
  } else if (rank == from) {
    MPI_Recv(&port, 1, MPI_INT, to, TAG_PORT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  iperf_result_t r = {0, 0, 0, 0};
  if (rank == from) {
    r.rate = r.bytes = r.cpu_host = r.cpu_remote = -1;
    char cmd[512], amount[64];
    if (bytes > 0)
      snprintf(amount, sizeof amount, "-n %zu", bytes);
    else
      snprintf(amount, sizeof amount, "-t %g", o->iperf_seconds);
    snprintf(cmd, sizeof cmd, "iperf3 -c %s -p %d -P %d %s -J 2>/dev/null", addr, port, k, amount);
    FILE *f = port > 0 ? popen(cmd, "r") : NULL;
    if (f) {
      json_error_t err;
      json_t *j = json_loadf(f, 0, &err);
      pclose(f);
      json_t *end = json_object_get(j, "end");
      json_t *recv = json_object_get(end, "sum_received");
      json_t *cpu = json_object_get(end, "cpu_utilization_percent");
      double bps = json_num(recv, "bits_per_second"), secs = json_num(recv, "seconds");
      double host = json_num(cpu, "host_total"), remote = json_num(cpu, "remote_total");
      if (bps >= 0) r.rate = bps / 8.0;
      r.bytes = json_num(recv, "bytes");
      if (secs > 0 && host >= 0) r.cpu_host = host / 100.0 * secs;
      if (secs > 0 && remote >= 0) r.cpu_remote = remote / 100.0 * secs;
      json_decref(j);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (server > 0) {
    /* The server ends after one test; make sure of it. */
    int st;
    for (int i = 0; i < 50 && waitpid(server, &st, WNOHANG) == 0; i++) {
      struct timespec ts = {0, 100 * 1000 * 1000};
      nanosleep(&ts, NULL);
    }
    if (waitpid(server, &st, WNOHANG) == 0) {
      kill(server, SIGTERM);
      waitpid(server, &st, 0);
    }
  }
  return r;
}

/* ---- the run ---- */

/* A method's repetitions of one size. */
typedef struct series {
  double *t, *cpu_send, *cpu_recv;
} series_t;

/* The median over the repetitions of bytes per CPU second of both ends,
 * in GB (1e9 bytes); NAN when a repetition has no CPU time. */
static double gb_per_cpu_s(const series_t *s, int n, size_t bytes) {
  double *v = malloc((size_t)n * sizeof *v);
  if (v == NULL) return NAN;
  for (int i = 0; i < n; i++) {
    double cpu = s->cpu_send[i] + s->cpu_recv[i];
    v[i] = cpu > 0 ? (double)bytes / cpu * 1e-9 : NAN;
  }
  double m = wsp_median(v, (size_t)n);
  free(v);
  return m;
}

static void set_real(json_t *j, const char *key, double v) {
  json_object_set_new(j, key, isfinite(v) ? json_real(v) : json_null());
}

static void emit(wsp_bench_out_t *out, const p2p_opts_t *o, const char *method, int lanes,
                 int used, int encrypt, size_t bytes, const series_t *s, int n,
                 double mpi_med) {
  if (!wsp_bench_out_wanted(out)) return;
  double med = wsp_median(s->t, (size_t)n);
  json_t *j = wsp_bench_record(out);
  json_object_set_new(j, "kind", json_string("transfer"));
  json_object_set_new(j, "method", json_string(method));
  json_object_set_new(j, "lanes", lanes ? json_integer(lanes) : json_string("auto"));
  json_object_set_new(j, "lanes_used", json_integer(used));
  if (encrypt >= 0) json_object_set_new(j, "encrypt", json_integer(encrypt));
  json_object_set_new(j, "bytes", json_integer((json_int_t)bytes));
  json_object_set_new(j, "reps", json_integer(n));
  json_object_set_new(j, "t_s", wsp_bench_json_doubles(s->t, (size_t)n));
  json_object_set_new(j, "t_median_s", json_real(med));
  json_object_set_new(j, "rate_Bps", json_real((double)bytes / med));
  json_object_set_new(j, "cpu_send_s", wsp_bench_json_doubles(s->cpu_send, (size_t)n));
  json_object_set_new(j, "cpu_recv_s", wsp_bench_json_doubles(s->cpu_recv, (size_t)n));
  set_real(j, "GB_per_cpu_s", gb_per_cpu_s(s, n, bytes));
  if (o->link > 0) {
    json_object_set_new(j, "link_Bps", json_real(o->link));
    json_object_set_new(j, "frac_link", json_real((double)bytes / med / o->link));
  }
  if (mpi_med > 0) json_object_set_new(j, "speedup_vs_mpi", json_real(mpi_med / med));
  wsp_bench_emit(out, j);
}

#define ROW_WHAT 24

static void print_header(const p2p_opts_t *o, int with_mpi) {
  printf("%8s  %-*s %10s %10s %9s%s%s\n", "size", ROW_WHAT, "method", "time_s", "Mbit/s",
         "GB/CPU-s", o->link > 0 ? "   / link" : "", with_mpi ? "  vs MPI" : "");
}

static void print_row(const p2p_opts_t *o, size_t bytes, const char *what, double t,
                      double gbcpu, double mpi_med) {
  char sz[32];
  double rate = (double)bytes / t;
  printf("%8s  %-*s %10.4f %10.2f %9.3f", wsp_fmt_size(bytes, sz, sizeof sz), ROW_WHAT, what,
         t, rate * 8e-6, gbcpu);
  if (o->link > 0) printf(" %8.3f", rate / o->link);
  if (mpi_med > 0) printf(" %8.2f", mpi_med / t);
  printf("\n");
}

/* A lane configuration's name in the table: "k=4", "auto k=8", with
 * " sealed" when its lanes are. */
static const char *sealed(const lane_cfg_t *c) { return c->encrypt ? " sealed" : ""; }

int wsp_bench_p2p(int argc, char **argv, int rank, int size, wsp_bench_post_t *post) {
  p2p_opts_t o = {.sizes = {{100 << 10, 1 << 20, 10 << 20, 100 << 20, 256 << 20}, 5},
                  .methods = {{M_MPI, M_STRIPED, M_IPERF}, 3},
                  .encrypt = {{0}, 1},
                  .reps = 3, .from = 0, .to = -1, .iperf_seconds = 4,
                  .io = {.label = ""}};
  {
    const char *def[] = {"1", "2", "4", "8", "16", "auto"};
    char *p = o.lanes.buf;
    for (int i = 0; i < 6; i++) {
      strcpy(p, def[i]);
      o.lanes.item[i] = p;
      p += strlen(p) + 1;
    }
    o.lanes.n = 6;
  }
  int rc = parse(&o, argc, argv, rank);
  if (rc >= 0) return rc;
  if (o.to < 0) o.to = size - 1;
  if (size < 2 || o.from >= size || o.to >= size || o.from == o.to) {
    if (rank == 0)
      fprintf(stderr,
              "error: --from %ld --to %ld: two different ranks of the %d are needed\n",
              o.from, o.to, size);
    return 2;
  }
  wsp_config_t env;
  wsp_config_init(&env);
  if (wsp_config_from_env(&env) != WSP_OK)
    wsp_bench_die(rank, "WSP_* environment", wsp_last_error());
  /* Without --encrypt, the lanes are what the environment makes them. */
  if (!o.encrypt_given) o.encrypt.v[0] = env.p2p_encrypt ? 1 : 0;
  int nenc = o.encrypt.n;
  lane_cfg_t *cfg = calloc((size_t)o.lanes.n * (size_t)nenc, sizeof *cfg);
  lane_cfg_t *lane_of = calloc((size_t)o.lanes.n, sizeof *lane_of);
  if (cfg == NULL || lane_of == NULL) wsp_bench_die(rank, "out of memory", NULL);
  if (parse_lanes(&o, lane_of, rank) != 0) {
    free(cfg), free(lane_of);
    return 2;
  }
  /* Configuration i * nenc + e: lane count i of --lanes, encryption e of
   * --encrypt, so that a lane count's rows stand together. */
  for (int i = 0; i < o.lanes.n; i++)
    for (int e = 0; e < nenc; e++) {
      cfg[i * nenc + e].lanes = lane_of[i].lanes;
      cfg[i * nenc + e].encrypt = o.encrypt.v[e];
    }
  free(lane_of);
  int use[M_COUNT] = {0};
  for (int i = 0; i < o.methods.n; i++) use[o.methods.v[i]] = 1;
  if (use[M_IPERF]) {
    int ok = (rank != o.from && rank != o.to) || have_iperf(), all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
      if (rank == 0) fprintf(stderr, "warning: iperf3 is not installed: no iperf3 rows\n");
      use[M_IPERF] = 0;
    }
  }
  wsp_bench_out_t out;
  if ((rc = wsp_bench_out_open(&out, "p2p", &o.io, rank, size, NULL, post)) != 0) return rc;

  size_t maxsize = 1;
  for (int i = 0; i < o.sizes.n; i++)
    if (o.sizes.v[i] > maxsize) maxsize = o.sizes.v[i];
  unsigned char *buf = malloc(maxsize);
  if (buf == NULL) wsp_bench_die(rank, "out of memory", NULL);
  memset(buf, 0x5a, maxsize);

  /* One communicator per configuration, set up by an untimed message. */
  int ncfg = use[M_STRIPED] ? o.lanes.n * nenc : 0;
  char addr[64] = "";
  for (int c = 0; c < ncfg; c++) {
    wsp_config_t wc = env;
    wc.p2p_lanes = (unsigned)cfg[c].lanes;
    wc.p2p_encrypt = cfg[c].encrypt;
    /* The collectives' model plays no part here: skip its calibration. */
    wc.model_alpha = 1e-5, wc.model_beta = 1e-8, wc.model_gamma = 1e-9;
    if (wsp_comm_create(MPI_COMM_WORLD, &wc, &cfg[c].comm) != WSP_OK)
      wsp_bench_die(rank, "wsp_comm_create", wsp_last_error());
    cfg[c].setup_s = transfer(&o, rank, M_STRIPED, cfg[c].comm, buf,
                              wc.p2p_min ? wc.p2p_min : WSP_P2P_MIN_DEFAULT)
                         .t;
    int peer = rank == o.from ? (int)o.to : (int)o.from;
    if (rank == o.from || rank == o.to) wsp_striped_info(cfg[c].comm, peer, &cfg[c].info);
    if (rank == o.from && !*addr && cfg[c].info.peer_address[0])
      snprintf(addr, sizeof addr, "%s", cfg[c].info.peer_address);
  }
  if (use[M_IPERF] && rank == o.from && !*addr) {
    fprintf(stderr, "warning: iperf3 needs the receiver's address, which the striped "
                    "rows find: no iperf3 rows\n");
  }
  MPI_Bcast(addr, sizeof addr, MPI_CHAR, (int)o.from, MPI_COMM_WORLD);
  if (!*addr) use[M_IPERF] = 0;

  if (rank == o.from && !o.io.quiet) {
    printf("# wsp-bench p2p: rank %ld -> rank %ld of %d, %ld reps (median), %s\n", o.from,
           o.to, size, o.reps, out.mpi);
    for (int c = 0; c < ncfg; c++) {
      const wsp_striped_info_t *in = &cfg[c].info;
      if (cfg[c].lanes != 0) continue;
      if (in->threshold == SIZE_MAX)
        printf("# auto%s: no lanes, every message through MPI", sealed(&cfg[c]));
      else
        printf("# auto%s: %d lanes from %zu bytes", sealed(&cfg[c]), in->lanes, in->threshold);
      printf(" (one lane %.1f Mbit/s, %d lanes %.1f Mbit/s; set-up and probe %.2f s)\n",
             in->rate_one * 8e-6, in->lanes_open, in->rate_lanes * 8e-6, cfg[c].setup_s);
    }
    print_header(&o, use[M_MPI]);
    fflush(stdout);
  }
  for (int c = 0; c < ncfg && rank == o.from; c++) {
    json_t *j = wsp_bench_out_wanted(&out) ? wsp_bench_record(&out) : NULL;
    if (!j) break;
    json_object_set_new(j, "kind", json_string("setup"));
    json_object_set_new(j, "lanes", cfg[c].lanes ? json_integer(cfg[c].lanes) : json_string("auto"));
    json_object_set_new(j, "lanes_used", json_integer(cfg[c].info.lanes));
    json_object_set_new(j, "encrypt", json_integer(cfg[c].encrypt));
    json_object_set_new(j, "threshold", json_integer(cfg[c].info.threshold == SIZE_MAX
                                                         ? -1
                                                         : (json_int_t)cfg[c].info.threshold));
    json_object_set_new(j, "rate_one_Bps", json_real(cfg[c].info.rate_one));
    json_object_set_new(j, "rate_lanes_Bps", json_real(cfg[c].info.rate_lanes));
    json_object_set_new(j, "setup_s", json_real(cfg[c].setup_s));
    wsp_bench_emit(&out, j);
  }

  if (o.hold > 0) {
    if (rank == o.from) {
      /* The sender's ports of the data lanes each message uses, for the
       * script that reshapes one of them. */
      for (int c = 0; c < ncfg; c++) {
        printf("# lane ports of %s%d%s: control %u, data", cfg[c].lanes ? "k=" : "auto k=",
               cfg[c].info.lanes, sealed(&cfg[c]), (unsigned)cfg[c].info.local_port[0]);
        for (int i = 1; i <= cfg[c].info.lanes && i < 65; i++)
          printf("%s%u", i == 1 ? " " : ",", (unsigned)cfg[c].info.local_port[i]);
        printf("\n");
      }
      printf("# lanes set up; holding %g s\n", o.hold);
      fflush(stdout);
    }
    struct timespec ts = {(time_t)o.hold, (long)((o.hold - floor(o.hold)) * 1e9)};
    nanosleep(&ts, NULL);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  /* Slots: MPI, then each lane configuration; per slot and repetition the
   * time and both ends' CPU seconds. */
  int nslot = 1 + ncfg;
  size_t cells = (size_t)nslot * (size_t)o.reps;
  double *t = calloc(cells, sizeof *t), *cs = calloc(cells, sizeof *cs),
         *cr = calloc(cells, sizeof *cr);
  int *order = calloc((size_t)nslot, sizeof *order);
  if (!t || !cs || !cr || !order) wsp_bench_die(rank, "out of memory", NULL);
  uint64_t order_state = 12345;
  for (int si = 0; si < o.sizes.n; si++) {
    size_t n = o.sizes.v[si];
    for (long rep = 0; rep < o.reps; rep++) {
      wsp_random_order(order, nslot, &order_state);
      for (int j = 0; j < nslot; j++) {
        int s = order[j];
        if (s == 0 && !use[M_MPI]) continue;
        sample_t x = s == 0 ? transfer(&o, rank, M_MPI, NULL, buf, n)
                            : transfer(&o, rank, M_STRIPED, cfg[s - 1].comm, buf, n);
        size_t at = (size_t)s * (size_t)o.reps + (size_t)rep;
        t[at] = x.t, cs[at] = x.cpu_send, cr[at] = x.cpu_recv;
      }
    }
    if (rank != o.from) continue;
    series_t mpi = {t, cs, cr};
    double mpi_med = use[M_MPI] ? wsp_median(t, (size_t)o.reps) : 0;
    if (use[M_MPI]) {
      if (!o.io.quiet)
        print_row(&o, n, "MPI_Send", mpi_med, gb_per_cpu_s(&mpi, (int)o.reps, n), 0);
      emit(&out, &o, "mpi", 1, 1, -1, n, &mpi, (int)o.reps, 0);
    }
    for (int c = 0; c < ncfg; c++) {
      size_t at = (size_t)(c + 1) * (size_t)o.reps;
      series_t sc = {t + at, cs + at, cr + at};
      char what[48];
      if (cfg[c].lanes)
        snprintf(what, sizeof what, "striped k=%d%s", cfg[c].lanes, sealed(&cfg[c]));
      else
        snprintf(what, sizeof what, "striped auto%s%s",
                 n >= cfg[c].info.threshold ? "" : "(mpi)", sealed(&cfg[c]));
      if (!o.io.quiet)
        print_row(&o, n, what, wsp_median(sc.t, (size_t)o.reps), gb_per_cpu_s(&sc, (int)o.reps, n),
                  mpi_med);
      emit(&out, &o, "striped", cfg[c].lanes,
           cfg[c].lanes ? cfg[c].lanes : n >= cfg[c].info.threshold ? cfg[c].info.lanes : 0,
           cfg[c].encrypt, n, &sc, (int)o.reps, mpi_med);
    }
    if (!o.io.quiet) fflush(stdout);
  }
  free(t), free(cs), free(cr), free(order);

  if (use[M_IPERF]) {
    /* One run per stream count: the lane counts given, auto's where no
     * forced count is the same (the first configuration of each lane count
     * stands for it: its communicator set the lanes up). */
    for (int si = 0; si < (o.iperf_bytes ? o.sizes.n : 1); si++)
      for (int i = 0; i < o.lanes.n; i++) {
        const lane_cfg_t *ci = &cfg[i * nenc];
        int k = ci->lanes ? ci->lanes : ci->info.lanes, dup = 0;
        for (int d = 0; d < o.lanes.n; d++)
          dup |= d != i && cfg[d * nenc].lanes == k && ci->lanes == 0;
        if (k < 1 || dup) continue;
        const size_t bytes = o.iperf_bytes ? o.sizes.v[si] : 0;
        if (o.iperf_bytes && bytes == 0) continue;
        iperf_result_t r = iperf(&o, rank, k, bytes, addr);
        if (rank != o.from) continue;
        double cpu = r.cpu_host >= 0 && r.cpu_remote >= 0 ? r.cpu_host + r.cpu_remote : -1;
        double gbcpu = cpu > 0 && r.bytes > 0 ? r.bytes / cpu * 1e-9 : NAN;
        if (!o.io.quiet) {
          char what[32];
          snprintf(what, sizeof what, "iperf3 -P %d", k);
          char sz[32] = "-";
          if (bytes > 0) wsp_fmt_size(bytes, sz, sizeof sz);
          printf("%8s  %-*s %10s %10.2f %9.3f", sz, ROW_WHAT, what, "-", r.rate * 8e-6, gbcpu);
          if (o.link > 0) printf(" %8.3f", r.rate / o.link);
          printf("\n");
          fflush(stdout);
        }
        if (wsp_bench_out_wanted(&out)) {
          json_t *j = wsp_bench_record(&out);
          json_object_set_new(j, "kind", json_string("iperf"));
          json_object_set_new(j, "method", json_string("iperf"));
          json_object_set_new(j, "lanes", json_integer(k));
          if (bytes > 0)
            json_object_set_new(j, "size", json_integer((json_int_t)bytes));
          else
            json_object_set_new(j, "seconds", json_real(o.iperf_seconds));
          json_object_set_new(j, "rate_Bps", json_real(r.rate));
          set_real(j, "bytes", r.bytes >= 0 ? r.bytes : NAN);
          set_real(j, "cpu_send_s", r.cpu_host);
          set_real(j, "cpu_recv_s", r.cpu_remote);
          set_real(j, "GB_per_cpu_s", gbcpu);
          if (o.link > 0) {
            json_object_set_new(j, "link_Bps", json_real(o.link));
            json_object_set_new(j, "frac_link", json_real(r.rate / o.link));
          }
          wsp_bench_emit(&out, j);
        }
      }
  }
  for (int c = 0; c < ncfg; c++) wsp_comm_free(&cfg[c].comm);
  free(cfg);
  free(buf);
  wsp_bench_out_close(&out);
  return 0;
}
