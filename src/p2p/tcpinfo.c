/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the kernel knows about a lane's TCP connection (TCP_INFO): the
 * smallest and the smoothed round trip, the segments it sent and
 * retransmitted, its segment size, and whether it is still in its first
 * slow start. The probe's streamer watches them through each phase
 * (engine_out.c) and sends what it saw to the measurer in its PEND frames
 * (engine_pair.c says how they are used).
 *
 * glibc's struct tcp_info stops before the fields wanted here (segs_out,
 * min_rtt came with Linux 4.2 and 4.10), so this file takes the kernel's
 * own header, and nothing that also defines the struct.
 */
#include "striped_internal.h"

#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#ifdef __linux__
#include <linux/tcp.h>

/* The kernel's ssthresh before the first loss (TCP_INFINITE_SSTHRESH). */
#define WSP__SSTHRESH_INFINITE 0x7fffffffu

int wsp__tcpstat(int fd, wsp__tcpstat_t *s) {
  struct tcp_info ti;
  socklen_t len = sizeof ti;
  memset(s, 0, sizeof *s);
  memset(&ti, 0, sizeof ti);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
      len < offsetof(struct tcp_info, tcpi_min_rtt) + sizeof ti.tcpi_min_rtt)
    return -1;
  s->segs_out = ti.tcpi_segs_out;
  s->retrans = ti.tcpi_total_retrans;
  /* Before its first sample the kernel says ~0: unknown, as is anything
   * no PEND frame may carry. */
  s->min_rtt_us = ti.tcpi_min_rtt <= WSP__PROBE_RTT_MAX_US ? ti.tcpi_min_rtt : 0;
  s->srtt_us = ti.tcpi_rtt;
  s->mss = ti.tcpi_snd_mss;
  s->slow_start = ti.tcpi_snd_ssthresh >= WSP__SSTHRESH_INFINITE;
  return 0;
}
#else
int wsp__tcpstat(int fd, wsp__tcpstat_t *s) {
  (void)fd;
  memset(s, 0, sizeof *s);
  return -1;
}
#endif
