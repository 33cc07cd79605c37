/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Striped point-to-point without sockets or MPI: the probe's model (a
 * flow's ramp, its rate under loss) and its choice of lanes and threshold
 * against cases worked out by hand, and the frame
 * header's encoding against its documented byte layout.
 */
#include "check.h"
#include "p2p/striped_internal.h"
#include "p2p/xport.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The choice for a path must be k_want lanes and a threshold in
 * [thr_lo, thr_hi] (the search stops within 1/64 of the size). */
static void choice(wsp__path_t p, int nlanes, size_t min, int k_want, size_t thr_lo,
                   size_t thr_hi) {
  int k = -1;
  size_t thr = 0;
  if (p.mss == 0) p.mss = 1448;
  wsp__stripe_choose(&p, nlanes, min, &k, &thr);
  CHECK(k == k_want && thr >= thr_lo && thr <= thr_hi,
        "rate1 %g ratek %g rtt %g loss %g ramping %d lanes %d min %zu: k %d threshold %zu, "
        "expected %d in [%zu, %zu]",
        p.rate1, p.ratek, p.rtt, p.loss, p.ramping, nlanes, min, k, thr, k_want, thr_lo, thr_hi);
}
#define EXACTLY(n) (n), (n)
#define WITHIN_64TH(n) (size_t)(n), (size_t)((n) * (1 + 1.0 / 64) + 1)
#define NONE 1, EXACTLY(SIZE_MAX)

static void near(double got, double want, const char *what) {
  CHECK(fabs(got - want) <= 1e-9 * fabs(want), "%s: %.12g, expected %.12g", what, got, want);
}

int main(void) {
  /* The model's time. 1000-byte segments, windows of 10: 35000 bytes over
   * one flow at 1e6 B/s, 100 ms round trip (a full window is 1e5 bytes):
   * 10000 in the first round, 20000 in the second, the last 5000 in the
   * third: 0.2 + 0.005 + 0.05 (half a round trip) = 0.255 s. */
  const wsp__path_t t = {.rtt = 0.1, .mss = 1000};
  near(wsp__stripe_time(&t, 1, 1e6, 35000), 0.255, "ramp of 35000 bytes");
  /* Four flows: 40000 in the first round. */
  near(wsp__stripe_time(&t, 4, 1e6, 35000), 0.035 + 0.05, "35000 bytes over 4 flows");
  /* The window reaches the full 1e5 in the fifth round (160000 >= 1e5)
   * after 10000 + 20000 + 40000 + 80000 = 150000 bytes. */
  near(wsp__stripe_time(&t, 1, 1e6, 1e6), 0.4 + 0.85 + 0.05, "1e6 bytes");
  /* No round trip: bytes over the rate. */
  const wsp__path_t lan = {.mss = 1448};
  near(wsp__stripe_time(&lan, 1, 1e6, 35000), 0.035, "no round trip");

  /* One flow's lasting rate: under loss 1e-3 over 20 ms with 1448-byte
   * segments, 1448 / 0.02 x 1.22 / sqrt(1e-3) = 2.7932e6 B/s (Mathis). */
  const wsp__path_t lossy = {
      .rate1 = 11.9e6, .ratek = 12e6, .rtt = 0.02, .loss = 1e-3, .mss = 1448};
  near(wsp__stripe_one_flow(&lossy), 72400 * 1.22 / sqrt(1e-3), "Mathis");
  /* In slow start the lane's rate is a ramp: one flow may fill the path. */
  const wsp__path_t ramp = {.rate1 = 0.65e6, .ratek = 11.5e6, .rtt = 0.2, .ramping = 1};
  near(wsp__stripe_one_flow(&ramp), 11.5e6, "a ramping lane");

  /* Lanes for the rate. netlab twosite with a per-flow cap: one lane
   * 2.4 MB/s, 16 lanes 12 MB/s, 24 ms: ratio 5, 1.5 x 5 = 7.5 -> 8 lanes.
   * One flow: windows of 14480, 28960 bytes, full from the third round
   * (57600 bytes a round trip), so 65536 bytes take 0.048 + 22096 / 2.4e6
   * + 0.012 = 69.2 ms; 8 lanes (115840 bytes in the first window) 65536 /
   * 12e6 + 0.012, plus the CTS's 0.024 = 41.5 ms: they pay at the floor. */
  wsp__path_t cap = {.rate1 = 2.4e6, .ratek = 12e6, .rtt = 0.024};
  choice(cap, 16, 65536, 8, EXACTLY(65536));
  /* Below it, in the second round of one flow: (n - 14480) / 2.4e6 > n /
   * 12e6 from n = 18100. */
  choice(cap, 16, 1000, 8, WITHIN_64TH(18100));
  choice(cap, 16, 1 << 20, 8, EXACTLY(1 << 20));
  /* Fewer lanes opened than wanted: all of them (4 x 2.4 = 9.6 MB/s; 65536
   * bytes in 36.8 + 24 ms, still under 69.2). */
  choice(cap, 4, 65536, 4, EXACTLY(65536));
  /* Lanes carry less than 1.3x one lane: everything through MPI. */
  choice((wsp__path_t){.rate1 = 100e6, .ratek = 120e6, .rtt = 0.001}, 16, 65536, NONE);
  choice((wsp__path_t){.rate1 = 100e6, .ratek = 90e6, .rtt = 0.001}, 16, 65536, NONE);
  /* Exactly 1.3x: ceil(1.95) = 2 lanes; no ramp (a full window is under
   * one segment's worth of windows), so n / 1e6 > n / 1.3e6 + 0.001 from
   * 4333 bytes: the floor. */
  choice((wsp__path_t){.rate1 = 1e6, .ratek = 1.3e6, .rtt = 0.001}, 16, 65536, 2, EXACTLY(65536));
  /* No round trip and a tiny rate: the search ends (at one byte), and a
   * floor of SIZE_MAX stays SIZE_MAX. */
  choice((wsp__path_t){.rate1 = 0.5, .ratek = 1, .rtt = 0}, 16, 0, 3, EXACTLY(1));
  choice(cap, 16, SIZE_MAX, 8, EXACTLY(SIZE_MAX));
  /* Nothing measured, or one lane only. */
  choice((wsp__path_t){.rate1 = 0, .ratek = 12e6, .rtt = 0.024}, 16, 65536, NONE);
  choice(cap, 1, 65536, NONE);

  /* Loss. One lane carried the path's rate in the probe (12 MB/s, 20 ms),
   * but 1e-3 of its segments were lost: it lasts at 2.79 MB/s, ratio
   * 4.296, 1.5 x 4.296 = 6.44 -> 7 lanes. */
  choice(lossy, 16, 65536, 7, EXACTLY(65536));
  /* The loss priced from a probe's count: the upper end of the 95%
   * interval of a Poisson count, against the exact bounds (the mean at
   * which the count's cumulative probability is 0.025, as tabulated by
   * Garwood, 1936), per segment; within 0.2%. */
  static const struct {
    uint64_t n;
    double upper;
  } garwood[] = {{1, 5.572}, {2, 7.225}, {3, 8.767}, {5, 11.668}, {10, 18.390}, {50, 65.919}};
  for (size_t i = 0; i < sizeof garwood / sizeof garwood[0]; i++) {
    const double got = wsp__stripe_loss(garwood[i].n, 100000) * 100000;
    CHECK(fabs(got - garwood[i].upper) <= 2e-3 * garwood[i].upper,
          "%llu episodes: bound %.4f per segment x 1e5, expected %.3f",
          (unsigned long long)garwood[i].n, got, garwood[i].upper);
  }
  CHECK(wsp__stripe_loss(0, 6000) == 0, "no episode prices no loss");
  CHECK(wsp__stripe_loss(5, 99) == 0, "under 100 segments say nothing");
  CHECK(wsp__stripe_loss(60, 100) == 0.5, "at most one in two");
  /* One episode in 5800 segments over 20 ms, one lane at the path's 12.2
   * MB/s: 5.572 / 5800 = 9.6e-4, one flow 1448 / 0.02 x 1.22 / sqrt(9.6e-4)
   * = 2.85 MB/s, ratio 4.28, 1.5 x 4.28 = 6.4 -> 7 lanes (one added
   * episode, 2 / 5800, priced 4.76 MB/s and 4 lanes). */
  wsp__path_t seen = {.rate1 = 11.9e6, .ratek = 12.2e6, .rtt = 0.02, .mss = 1448};
  seen.loss = wsp__stripe_loss(1, 5800);
  choice(seen, 16, 65536, 7, EXACTLY(65536));

  /* The same loss with no round trip known: the rates alone, one flow
   * fills the path, no lanes. */
  wsp__path_t lossy_nortt = lossy;
  lossy_nortt.rtt = 0;
  choice(lossy_nortt, 16, 65536, NONE);

  /* Lanes for the ramp. 200 ms, one lane still in slow start at 0.65 MB/s,
   * 16 lanes 11.5 MB/s, no loss: every lane. One flow (windows 14480,
   * 28960, 57920, ...) sends 65536 bytes in 0.4 + 22096 / 11.5e6 + 0.1 =
   * 0.502 s; 16 lanes in one window, 0.1 + 0.2 (the CTS) = 0.306 s: the
   * floor. Below it the lanes pay from the third round of one flow, past
   * 14480 + 28960 = 43440 bytes. */
  choice(ramp, 16, 65536, 16, EXACTLY(65536));
  choice(ramp, 16, 1000, 16, WITHIN_64TH(43440));
  /* A lane that left slow start at the path's rate, or reached it while
   * still in slow start (a LAN): no lanes. */
  choice((wsp__path_t){.rate1 = 11.5e6, .ratek = 11.6e6, .rtt = 0.2}, 16, 65536, NONE);
  choice((wsp__path_t){.rate1 = 1e9, .ratek = 1.1e9, .rtt = 5e-5, .ramping = 1}, 16, 65536, NONE);

  /* When the kernel's slow-start flag means a ramp. The probe streams
   * 0.3 s and measures from 0.1 s on. A ramp from 10 segments of 1448
   * bytes (14480) doubles each round trip until it holds rate x RTT. At
   * 11.5 MB/s over 200 ms that is 2.3e6 bytes, 158.8 windows: 8 round
   * trips, 1.6 s, so the flag stands; a probe of 5.1 s would measure from
   * 1.7 s, past the ramp. */
  const wsp__path_t far = {.rate1 = 0.65e6, .ratek = 11.5e6, .rtt = 0.2, .mss = 1448};
  CHECK(wsp__stripe_ramping(&far, 1, 0.3), "a ramp over 200 ms was not taken for one");
  CHECK(!wsp__stripe_ramping(&far, 0, 0.3), "a lane out of slow start was taken for a ramp");
  CHECK(!wsp__stripe_ramping(&far, 1, 5.1), "a ramp over 200 ms was still held after 1.7 s");
  /* 12.5 MB/s over 40 ms: 5e5 bytes, 34.5 windows, 6 round trips, 0.24 s.
   * Over 10 ms: 1.25e5 bytes, 8.6 windows, 4 round trips, 0.04 s. */
  const wsp__path_t mid = {.rate1 = 2e6, .ratek = 12.5e6, .rtt = 0.04, .mss = 1448};
  CHECK(wsp__stripe_ramping(&mid, 1, 0.3), "a ramp over 40 ms was not taken for one");
  const wsp__path_t near10 = {.rate1 = 2e6, .ratek = 12.5e6, .rtt = 0.01, .mss = 1448};
  CHECK(!wsp__stripe_ramping(&near10, 1, 0.3), "a ramp over 10 ms was held for 0.1 s");
  /* netlab's cloud lab: one lane capped at 2.4 MB/s, 16 lanes 11.8 MB/s,
   * a round trip of 10 us. The path holds 118 bytes in a round trip, less
   * than the first window: no ramp, whatever the flag says. With it taken
   * for a ramp, one flow would last at the lanes' rate and every message
   * would stay on MPI; as a cap, 8 lanes from the floor. */
  wsp__path_t capped = {.rate1 = 2.4e6, .ratek = 11.8e6, .rtt = 1e-5, .mss = 1448};
  CHECK(!wsp__stripe_ramping(&capped, 1, 0.3), "a capped flow on a 10 us path was a ramp");
  capped.ramping = 1;
  choice(capped, 16, 8192, NONE);
  capped.ramping = wsp__stripe_ramping(&capped, 1, 0.3);
  choice(capped, 16, 8192, 8, EXACTLY(8192));
  /* No round trip known: the flag stands. */
  const wsp__path_t unknown = {.rate1 = 2.4e6, .ratek = 11.8e6, .mss = 1448};
  CHECK(wsp__stripe_ramping(&unknown, 1, 0.3), "without a round trip the flag was overruled");

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

  /* The chunk of a send (docs/p2p.md, "Chunks"), worked out by hand. */
  const size_t K = 1024, M = 1024 * 1024;
  /* 100 MiB over 8 lanes: 100M / 128 = 800 KiB, no rate measured. */
  CHECK(wsp__stripe_chunk(100 * M, 8, 0, 0, 0) == 800 * K, "100 MiB over 8 lanes");
  /* 1 GiB: 8 MiB, held to 1 MiB; sealed lanes likewise (their bound is 4 MiB). */
  CHECK(wsp__stripe_chunk(1024 * M, 8, 0, 0, 1) == M, "1 GiB over 8 sealed lanes");
  /* 100 MiB whose 8 lanes carry 12.5e6 B/s: 20 ms of one lane, 31250 bytes (under 64 KiB,
   * so the floor follows it); at 1.25e6 B/s it would be 3125, held at 8 KiB; at 1.25e9 B/s
   * 3125000, above 100M / 128 = 800 KiB, which stays. */
  CHECK(wsp__stripe_chunk(100 * M, 8, 12.5e6, 0, 0) == 31250, "100 MiB at 12.5e6 B/s");
  CHECK(wsp__stripe_chunk(100 * M, 8, 1.25e6, 0, 0) == 8 * K, "100 MiB at 1.25e6 B/s");
  CHECK(wsp__stripe_chunk(100 * M, 8, 1.25e9, 0, 0) == 800 * K, "100 MiB at 1.25e9 B/s");
  /* 1 MiB at 12.5e6 B/s: 1M / 128 = 8 KiB, raised to the 31250 of 20 ms. */
  CHECK(wsp__stripe_chunk(M, 8, 12.5e6, 0, 0) == 31250, "1 MiB at 12.5e6 B/s");
  /* 8 MiB over 8 lanes: 64 KiB (8M / 128), and 8 x 64 KiB fits: no spreading. */
  CHECK(wsp__stripe_chunk(8 * M, 8, 0, 0, 0) == 64 * K, "8 MiB over 8 lanes");
  /* A pipeline's 77008-byte segment over 8 lanes: one chunk per lane, 9626 bytes. */
  CHECK(wsp__stripe_chunk(77008, 8, 12.5e6, 0, 0) == 9626, "77008 bytes over 8 lanes: %zu",
        wsp__stripe_chunk(77008, 8, 12.5e6, 0, 0));
  /* 500 KiB over 8 lanes: 64000 bytes each, just under 64 KiB. */
  CHECK(wsp__stripe_chunk(500 * K, 8, 0, 0, 0) == 64000, "500 KiB over 8 lanes");
  /* 64 KiB over 16 lanes: 4 KiB each; 65536 over 32 would be 2 KiB, held at 4 KiB. */
  CHECK(wsp__stripe_chunk(64 * K, 16, 0, 0, 0) == 4 * K, "64 KiB over 16 lanes");
  CHECK(wsp__stripe_chunk(64 * K, 32, 0, 0, 0) == 4 * K, "64 KiB over 32 lanes");
  /* One lane: the whole message up to 64 KiB, else 64 KiB chunks. */
  CHECK(wsp__stripe_chunk(100 * K, 1, 0, 0, 0) == 64 * K, "100 KiB over one lane");
  /* WSP_P2P_CHUNK is taken as it is, except above the sealed bound. */
  CHECK(wsp__stripe_chunk(77008, 8, 0, 8192, 0) == 8192, "forced 8 KiB");
  CHECK(wsp__stripe_chunk(M, 8, 0, 64 * M, 1) == 4 * M, "forced 64 MiB on sealed lanes");

  /* The collectives' threshold (docs/p2p.md, "Under the collectives"): with
   * WSP_P2P_MIN automatic (0), 4 KiB per lane up to 64 KiB; a probe's
   * larger figure and a value the user chose hold. */
  CHECK(wsp__xport_threshold(0, 8, 126) == 32 * K, "8 lanes, automatic");
  CHECK(wsp__xport_threshold(0, 7, 0) == 28 * K, "7 lanes, automatic");
  CHECK(wsp__xport_threshold(0, 16, 0) == 64 * K, "16 lanes: 64 KiB");
  CHECK(wsp__xport_threshold(0, 32, 0) == 64 * K, "32 lanes: never above 64 KiB");
  CHECK(wsp__xport_threshold(0, 8, 40000) == 40000, "a probe's 40000 over 8 lanes' 32 KiB");
  CHECK(wsp__xport_threshold(0, 8, M) == M, "a probe's 1 MiB");
  CHECK(wsp__xport_threshold(64 * K, 8, 126) == 64 * K, "the user's 64 KiB holds");
  CHECK(wsp__xport_threshold(48 * K, 8, 126) == 48 * K, "the user's 48 KiB holds");
  CHECK(wsp__xport_threshold(16 * K, 8, 126) == 16 * K, "the user's 16 KiB holds");
  CHECK(wsp__xport_threshold(16 * K, 8, 20000) == 20000, "a probe's 20000 over the user's");

  /* A probe phase's rate (wsp__probe_rate): 8 slices of 25 ms. Figures in
   * MB and MB/s, worked out by hand. */
  {
    const double dt = 0.025, span = 8 * dt;
    /* Steady at 12 MB/s: median and mean agree. */
    double even[8] = {3e5, 3e5, 3e5, 3e5, 3e5, 3e5, 3e5, 3e5};
    near(wsp__probe_rate(even, 8, dt, 2.4e6, span, 1e-4), 12e6, "steady slices");
    /* Three slices of a stall (a few lanes waiting for their timer): the
     * mean is (5 x 0.3 + 3 x 0.1) / 0.2 s = 9 MB/s, the median slice's is
     * (0.3 + 0.3) / 2 / 0.025 = 12 MB/s. */
    double stall[8] = {3e5, 1e5, 1e5, 1e5, 3e5, 3e5, 3e5, 3e5};
    near(wsp__probe_rate(stall, 8, dt, 1.8e6, span, 1e-4), 12e6, "a stall of three slices");
    /* Sorted by size whatever their order: the 4th and 5th of
     * 1..8 x 1e4 bytes are 4e4 and 5e4, 4.5e4 / 0.025 = 1.8 MB/s. */
    double mixed[8] = {8e4, 1e4, 7e4, 2e4, 6e4, 3e4, 5e4, 4e4};
    near(wsp__probe_rate(mixed, 8, dt, 3.6e5, span, 1e-4), 1.8e6, "slices out of order");
    /* An odd count takes the middle one: 3e5 of {1e5, 3e5, 3e5}. */
    near(wsp__probe_rate(stall + 3, 3, dt, 7e5, 3 * dt, 1e-4), 12e6, "three slices");
    /* The mean where slices cannot tell: a round trip over a quarter of a
     * slice (a window's bursts, a round trip apart), slices under 5 ms, too
     * few slices or more than there are, no time. */
    near(wsp__probe_rate(stall, 8, dt, 1.8e6, span, 0.0063), 9e6, "a round trip of 6.3 ms");
    near(wsp__probe_rate(stall, 8, dt, 1.8e6, span, 0.00625), 12e6, "a round trip of dt / 4");
    near(wsp__probe_rate(stall, 8, 0.004, 1.8e6, 0.2, 1e-4), 9e6, "slices of 4 ms");
    near(wsp__probe_rate(stall, 2, dt, 4e5, 0.1, 1e-4), 4e6, "two slices");
    double nine[9] = {3e5, 3e5, 3e5, 3e5, 3e5, 3e5, 3e5, 3e5, 3e5};
    near(wsp__probe_rate(nine, 9, dt, 1.8e6, span, 1e-4), 9e6, "nine slices");
    near(wsp__probe_rate(stall, 0, dt, 1.8e6, span, 1e-4), 9e6, "no slices (the first phase)");
    near(wsp__probe_rate(stall, 8, dt, 0, 0, 1e-4), 12e6, "the median needs no span");
    CHECK(wsp__probe_rate(stall, 8, 0, 1.8e6, 0, 0) == 0, "no time, no rate");
    /* Which slice a read counts in: 25 ms slices. */
    CHECK(wsp__probe_slice_of(0, dt) == 0, "the window's first read");
    CHECK(wsp__probe_slice_of(0.0249, dt) == 0, "24.9 ms in");
    CHECK(wsp__probe_slice_of(0.0251, dt) == 1, "25.1 ms in");
    CHECK(wsp__probe_slice_of(0.1626, dt) == 6, "162.6 ms in");
    CHECK(wsp__probe_slice_of(0.1999, dt) == 7, "199.9 ms in: the last");
    CHECK(wsp__probe_slice_of(0.26, dt) == 7, "after the window's end: the last");
    CHECK(wsp__probe_slice_of(1e9, dt) == 7, "long after: the last");
    CHECK(wsp__probe_slice_of(0.1, 0) == 0, "no slices (dt 0)");
    CHECK(wsp__probe_slice_of(0.1, -0.01) == 0, "no slices (dt < 0)");
    CHECK(wsp__probe_slice_of(-0.01, dt) == 0, "before the window");
  }
  return check_summary("test_stripe_model");
}
