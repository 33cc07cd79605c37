/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Striped point-to-point without sockets or MPI: the probe's choice of
 * lanes and threshold against cases worked out by hand, and the frame
 * header's encoding against its documented byte layout.
 */
#include "check.h"
#include "p2p/striped_internal.h"

#include <stdint.h>
#include <string.h>

static void choice(double r1, double rk, double rtt, int nlanes, size_t min, int k_want,
                   size_t thr_want) {
  int k = -1;
  size_t thr = 0;
  wsp__stripe_choose(r1, rk, rtt, nlanes, min, &k, &thr);
  CHECK(k == k_want && thr == thr_want,
        "rate1 %g ratek %g rtt %g lanes %d min %zu: k %d threshold %zu, expected %d %zu", r1,
        rk, rtt, nlanes, min, k, thr, k_want, thr_want);
}

int main(void) {
  /* netlab twosite: one lane 2.4 MB/s, 16 lanes 12 MB/s, 24 ms: ratio 5,
   * 1.5 x 5 = 7.5 -> 8 lanes; 0.024 / (1/2.4e6 - 1/12e6) = 72000 bytes. */
  choice(2.4e6, 12e6, 0.024, 16, 65536, 8, 72000);
  /* The same with a lower floor than the model's figure, and a higher. */
  choice(2.4e6, 12e6, 0.024, 16, 1000, 8, 72000);
  choice(2.4e6, 12e6, 0.024, 16, 1 << 20, 8, 1 << 20);
  /* Fewer lanes opened than wanted: all of them. */
  choice(2.4e6, 12e6, 0.024, 4, 65536, 4, 72000);
  /* Lanes carry less than 1.3x one lane: everything through MPI. */
  choice(100e6, 120e6, 0.001, 16, 65536, 1, SIZE_MAX);
  choice(100e6, 90e6, 0.001, 16, 65536, 1, SIZE_MAX);
  /* Exactly 1.3x: striped, ceil(1.95) = 2 lanes; 0.001 / (1/1e6 - 1/1.3e6)
   * = 4333.3 -> the floor. */
  choice(1e6, 1.3e6, 0.001, 16, 65536, 2, 65536);
  /* Nothing measured, or one lane only. */
  choice(0, 12e6, 0.024, 16, 65536, 1, SIZE_MAX);
  choice(2.4e6, 12e6, 0.024, 1, 65536, 1, SIZE_MAX);

  /* The header: magic "WSP2", type, aux, a zero word, id, off, len, all
   * little-endian. */
  wsp__frame_t f = {.type = WSP__F_DATA, .aux = 0x01020304u, .id = 0x1122334455667788ull,
                    .off = 5, .len = 0xa0b0c0d0e0f00011ull};
  unsigned char h[WSP__FRAME_HDR];
  wsp__frame_encode(&f, h);
  const unsigned char want[WSP__FRAME_HDR] = {
      'W', 'S', 'P', '2', WSP__F_DATA, 0, 0, 0, 4, 3, 2, 1, 0, 0, 0, 0,
      0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 5, 0, 0, 0, 0, 0, 0, 0,
      0x11, 0x00, 0xf0, 0xe0, 0xd0, 0xc0, 0xb0, 0xa0};
  CHECK(memcmp(h, want, sizeof h) == 0, "encoded header differs from the layout");
  wsp__frame_t g;
  CHECK(wsp__frame_decode(h, &g) == 0 && g.type == f.type && g.aux == f.aux && g.id == f.id &&
            g.off == f.off && g.len == f.len,
        "decode(encode(f)) != f");
  unsigned char bad[WSP__FRAME_HDR];
  memcpy(bad, h, sizeof bad);
  bad[0] = 'X';
  CHECK(wsp__frame_decode(bad, &g) != 0, "a header without the magic was accepted");
  memcpy(bad, h, sizeof bad);
  bad[4] = WSP__F_COUNT;
  CHECK(wsp__frame_decode(bad, &g) != 0, "an unknown frame type was accepted");
  bad[4] = 0;
  CHECK(wsp__frame_decode(bad, &g) != 0, "frame type 0 was accepted");
  memcpy(bad, h, sizeof bad);
  bad[13] = 1;
  CHECK(wsp__frame_decode(bad, &g) != 0, "a header with its reserved word set was accepted");
  /* Which frames carry payload (the sealed records follow it). */
  CHECK(wsp__frame_has_payload(WSP__F_DATA) && wsp__frame_has_payload(WSP__F_PDATA) &&
            wsp__frame_has_payload(WSP__F_HELLO) && !wsp__frame_has_payload(WSP__F_CTS) &&
            !wsp__frame_has_payload(WSP__F_RESULT) && !wsp__frame_has_payload(WSP__F_ACK),
        "payload-carrying frame types");
  return check_summary("test_stripe_model");
}
