/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every WSP_* environment variable that anything of wirespeed reads: the
 * library (src/comm/config.c and the testing aids read where they act),
 * the shuffle's configuration, the PMPI shim (src/shim/shim_env.c) and
 * the tools. `wsp-info --check` warns about a WSP_ name that is not here,
 * which nothing reads (a typo such as WSP_ALLREDUCE_ALGO), and only this
 * header knows the list: the installed wsp-info has no docs to read.
 * tests/scripts/env_names.sh checks that it names exactly the variables of
 * docs/env.md's tables, and every "WSP_..." string the sources hold.
 *
 * X(name, who reads it)
 */
#ifndef WSP_ENV_NAMES_H
#define WSP_ENV_NAMES_H

#define WSP__ENV_NAMES(X)                                                                          \
  X("WSP_LOG", "library")                                                                          \
  X("WSP_SPARSE_ALGORITHM", "library")                                                             \
  X("WSP_SPARSE_AUTO_INTERVAL", "library")                                                         \
  X("WSP_POLL_MAX_SLEEP_US", "library")                                                            \
  X("WSP_BCAST_ALGORITHM", "library")                                                              \
  X("WSP_REDUCE_ALGORITHM", "library")                                                             \
  X("WSP_ALLREDUCE_ALGORITHM", "library")                                                          \
  X("WSP_GATHER_ALGORITHM", "library")                                                             \
  X("WSP_SCATTER_ALGORITHM", "library")                                                            \
  X("WSP_ALLGATHER_ALGORITHM", "library")                                                          \
  X("WSP_ALLTOALL_ALGORITHM", "library")                                                           \
  X("WSP_ALLTOALLV_ALGORITHM", "library")                                                          \
  X("WSP_ALLGATHERV_ALGORITHM", "library")                                                         \
  X("WSP_REDUCE_SCATTER_ALGORITHM", "library")                                                     \
  X("WSP_MODEL", "library")                                                                        \
  X("WSP_RULES_FILE", "library")                                                                   \
  X("WSP_NETMAP", "library")                                                                       \
  X("WSP_COLL_SEGMENT", "library")                                                                 \
  X("WSP_EAGER_LIMIT", "library")                                                                  \
  X("WSP_NODES", "library")                                                                        \
  X("WSP_SITES", "library")                                                                        \
  X("WSP_WAN_CONNECTIONS", "library")                                                              \
  X("WSP_WAN_LANES", "library")                                                                    \
  X("WSP_CHECK", "library")                                                                        \
  X("WSP_TIMEOUT", "library")                                                                      \
  X("WSP_BIG_MESSAGE", "library")                                                                  \
  X("WSP_REPORT", "library")                                                                       \
  X("WSP_P2P_LANES", "library")                                                                    \
  X("WSP_P2P_MAX_LANES", "library")                                                                \
  X("WSP_P2P_MIN", "library")                                                                      \
  X("WSP_P2P_CHUNK", "library")                                                                    \
  X("WSP_P2P_PROBE_MS", "library")                                                                 \
  X("WSP_P2P_IF", "library")                                                                       \
  X("WSP_P2P_ENCRYPT", "library")                                                                  \
  X("WSP_TRANSPORT", "library")                                                                    \
  X("WSP_P2P_ENDGAME", "library (testing aid)")                                                    \
  X("WSP_P2P_FAULT_RESET", "library (testing aid)")                                                \
  X("WSP_P2P_FAULT_POLL", "library (testing aid)")                                                 \
  X("WSP_P2P_FAULT_SETUP_MS", "library (testing aid)")                                             \
  X("WSP_FAULT_AGREE", "library (testing aid)")                                                    \
  X("WSP_P2P_PROBE_FIGURES", "library (testing aid)")                                              \
  X("WSP_SHUFFLE_BATCH", "shuffle")                                                                \
  X("WSP_SHUFFLE_BATCH_DELAY_US", "shuffle")                                                       \
  X("WSP_SHUFFLE_PEER_WINDOW", "shuffle")                                                          \
  X("WSP_SHUFFLE_WINDOW", "shuffle")                                                               \
  X("WSP_SHUFFLE_MEMORY", "shuffle")                                                               \
  X("WSP_SHUFFLE_MODE", "shuffle")                                                                 \
  X("WSP_SHUFFLE_RATE", "shuffle")                                                                 \
  X("WSP_SHUFFLE_PIECE", "shuffle")                                                                \
  X("WSP_SHUFFLE_PROGRESS_THREAD", "shuffle")                                                      \
  X("WSP_SHUFFLE_FAULT_NOMEM", "shuffle (testing aid)")                                            \
  X("WSP_SHIM", "shim")                                                                            \
  X("WSP_SHIM_COLLS", "shim")                                                                      \
  X("WSP_SHIM_MIN", "shim")                                                                        \
  X("WSP_SHIM_REPORT", "shim")                                                                     \
  X("WSP_SHIM_FAULT_NOMEM", "shim (testing aid)")                                                  \
  X("WSP_SHIM_LIB", "wsp-run")                                                                     \
  X("WSP_PLOT_SCRIPT", "wsp-bench, wsp-probe")

#endif
