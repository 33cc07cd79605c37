/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The lanes' cryptography, all of it from OpenSSL's libcrypto (nothing
 * here is a cipher or a curve of our own): the pair's key agreement, the
 * handshake's proofs and the optional sealing of every frame.
 *
 * Key agreement. At a pair's set-up each of the two ranks makes a fresh
 * X25519 key pair and sends the public half to the other over MPI, beside
 * its addresses. Both compute the same shared secret, which someone who
 * saw both public keys cannot (the Diffie-Hellman problem), and expand it
 * with HKDF-SHA256 into three keys: one that proves a lane's ends to each
 * other (HMAC-SHA256), and one per direction for sealing. The info string
 * binds the keys to the two ranks and both public keys, so keys of one
 * pair or one set-up never serve another. The private key is dropped
 * once the keys are derived.
 *
 * Proofs (handshake.c). Each lane's connection is proven in both
 * directions: the connector sends a fresh challenge, the acceptor answers
 * with its own challenge and an HMAC over both, the connector answers
 * with an HMAC over both under another role byte. An observer who replays
 * what it saw meets a new challenge; nobody without the key can answer.
 *
 * Sealing (WSP_P2P_ENCRYPT=1). Every frame after the handshake goes as two
 * AES-256-GCM records, its header and its payload, each with its own
 * 16-byte tag. The nonce is the lane's number and a per-direction record
 * counter, so that no nonce repeats under a key (each direction has its
 * own key; each lane its own counter).
 */
#include "striped_internal.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <string.h>

int wsp__sec_random(void *buf, size_t n) {
  return n <= (size_t)INT_MAX && RAND_bytes(buf, (int)n) == 1 ? 0 : -1;
}

void *wsp__sec_keypair(unsigned char pub[WSP__KEY]) {
  EVP_PKEY *key = NULL;
  EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_id(EVP_PKEY_X25519, NULL);
  size_t len = WSP__KEY;
  int ok = c && EVP_PKEY_keygen_init(c) == 1 && EVP_PKEY_keygen(c, &key) == 1 &&
           EVP_PKEY_get_raw_public_key(key, pub, &len) == 1 && len == WSP__KEY;
  EVP_PKEY_CTX_free(c);
  if (!ok) {
    EVP_PKEY_free(key);
    return NULL;
  }
  return key;
}

void wsp__sec_keyfree(void *priv) { EVP_PKEY_free(priv); }

int wsp__sec_derive(void *priv, const unsigned char peer_pub[WSP__KEY], int rank, int peer,
                    const unsigned char my_pub[WSP__KEY], wsp__keys_t *out) {
  unsigned char z[WSP__KEY], zero[WSP__KEY] = {0}, okm[3 * WSP__KEY];
  size_t zlen = sizeof z, olen = sizeof okm;
  EVP_PKEY *pk = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, NULL, peer_pub, WSP__KEY);
  EVP_PKEY_CTX *d = pk ? EVP_PKEY_CTX_new(priv, NULL) : NULL;
  int ok = d && EVP_PKEY_derive_init(d) == 1 && EVP_PKEY_derive_set_peer(d, pk) == 1 &&
           EVP_PKEY_derive(d, z, &zlen) == 1 && zlen == WSP__KEY &&
           CRYPTO_memcmp(z, zero, sizeof z) != 0; /* a low-order point gives zeros */
  EVP_PKEY_CTX_free(d);
  EVP_PKEY_free(pk);
  /* info: a label, the lower rank and its public key, then the higher's,
   * so that both ends write the same bytes. */
  static const char label[] = "wirespeed lanes v2";
  unsigned char info[sizeof label + 2 * (4 + WSP__KEY)];
  const int lower = rank < peer;
  memcpy(info, label, sizeof label);
  wsp__le32_put(info + sizeof label, (uint32_t)(lower ? rank : peer));
  memcpy(info + sizeof label + 4, lower ? my_pub : peer_pub, WSP__KEY);
  wsp__le32_put(info + sizeof label + 4 + WSP__KEY, (uint32_t)(lower ? peer : rank));
  memcpy(info + sizeof label + 8 + WSP__KEY, lower ? peer_pub : my_pub, WSP__KEY);
  EVP_PKEY_CTX *h = ok ? EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL) : NULL;
  ok = h && EVP_PKEY_derive_init(h) == 1 && EVP_PKEY_CTX_set_hkdf_md(h, EVP_sha256()) == 1 &&
       EVP_PKEY_CTX_set1_hkdf_key(h, z, (int)zlen) == 1 &&
       EVP_PKEY_CTX_add1_hkdf_info(h, info, (int)sizeof info) == 1 &&
       EVP_PKEY_derive(h, okm, &olen) == 1 && olen == sizeof okm;
  EVP_PKEY_CTX_free(h);
  if (ok) {
    memcpy(out->auth, okm, WSP__KEY);
    memcpy(out->up, okm + WSP__KEY, WSP__KEY);
    memcpy(out->down, okm + 2 * WSP__KEY, WSP__KEY);
  }
  OPENSSL_cleanse(z, sizeof z);
  OPENSSL_cleanse(okm, sizeof okm);
  return ok ? 0 : -1;
}

void wsp__sec_cleanse(void *p, size_t n) { OPENSSL_cleanse(p, n); }

void wsp__sec_digest(const void *p, size_t n, unsigned char out[WSP__HOST_ID]) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(p, n, d, &len, EVP_sha256(), NULL) != 1 || len < WSP__HOST_ID)
    memset(d, 0, sizeof d);
  memcpy(out, d, WSP__HOST_ID);
}

/* HMAC-SHA256 under the pair's proof key over a role byte and the
 * handshake's transcript: the two ranks (lower first), the lane, the
 * lanes of the pair, both challenges. */
void wsp__sec_proof(const wsp__keys_t *k, char role, int lower, int higher, uint32_t lane,
                    uint32_t nlanes, const unsigned char nc[WSP__CHALLENGE],
                    const unsigned char na[WSP__CHALLENGE], unsigned char out[WSP__MAC]) {
  unsigned char t[1 + 16 + 2 * WSP__CHALLENGE];
  t[0] = (unsigned char)role;
  wsp__le32_put(t + 1, (uint32_t)lower);
  wsp__le32_put(t + 5, (uint32_t)higher);
  wsp__le32_put(t + 9, lane);
  wsp__le32_put(t + 13, nlanes);
  memcpy(t + 17, nc, WSP__CHALLENGE);
  memcpy(t + 17 + WSP__CHALLENGE, na, WSP__CHALLENGE);
  unsigned int len = WSP__MAC;
  if (HMAC(EVP_sha256(), k->auth, WSP__KEY, t, sizeof t, out, &len) == NULL || len != WSP__MAC)
    memset(out, 0, WSP__MAC); /* fails the compare: wsp__sec_equal never takes zeros */
}

int wsp__sec_equal(const unsigned char *a, const unsigned char *b, size_t n) {
  unsigned char zero[WSP__MAC] = {0};
  if (n == WSP__MAC && CRYPTO_memcmp(a, zero, n) == 0) return 0;
  return CRYPTO_memcmp(a, b, n) == 0;
}

/* ---- sealing ---- */

int wsp__seal_init(wsp__seal_t *s, const unsigned char key[WSP__KEY], uint32_t lane,
                   int encrypt) {
  memset(s, 0, sizeof *s);
  EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
  if (c == NULL) return -1;
  int ok = encrypt ? EVP_EncryptInit_ex(c, EVP_aes_256_gcm(), NULL, key, NULL)
                   : EVP_DecryptInit_ex(c, EVP_aes_256_gcm(), NULL, key, NULL);
  if (ok != 1) {
    EVP_CIPHER_CTX_free(c);
    return -1;
  }
  s->ctx = c;
  s->lane = lane;
  s->encrypt = encrypt;
  return 0;
}

void wsp__seal_free(wsp__seal_t *s) {
  EVP_CIPHER_CTX_free(s->ctx);
  memset(s, 0, sizeof *s);
}

/* The next record's nonce: the lane, then the record counter. */
static int wsp__next_iv(wsp__seal_t *s) {
  unsigned char iv[12];
  wsp__le32_put(iv, s->lane);
  for (int i = 0; i < 8; i++) iv[4 + i] = (unsigned char)(s->seq >> (8 * i));
  s->seq++;
  return s->encrypt ? EVP_EncryptInit_ex(s->ctx, NULL, NULL, NULL, iv)
                    : EVP_DecryptInit_ex(s->ctx, NULL, NULL, NULL, iv);
}

int wsp__seal(wsp__seal_t *s, const unsigned char *in, unsigned char *out, size_t n,
              unsigned char tag[WSP__TAG]) {
  if (wsp__next_iv(s) != 1) return -1;
  for (size_t done = 0; done < n;) {
    int piece = n - done > (1u << 30) ? 1 << 30 : (int)(n - done), len = 0;
    if (EVP_EncryptUpdate(s->ctx, out + done, &len, in + done, piece) != 1 || len != piece)
      return -1;
    done += (size_t)piece;
  }
  int len = 0;
  return EVP_EncryptFinal_ex(s->ctx, out + n, &len) == 1 && len == 0 &&
                 EVP_CIPHER_CTX_ctrl(s->ctx, EVP_CTRL_GCM_GET_TAG, WSP__TAG, tag) == 1
             ? 0
             : -1;
}

int wsp__open_begin(wsp__seal_t *s) { return wsp__next_iv(s) == 1 ? 0 : -1; }

int wsp__open_update(wsp__seal_t *s, unsigned char *buf, size_t n) {
  for (size_t done = 0; done < n;) {
    int piece = n - done > (1u << 30) ? 1 << 30 : (int)(n - done), len = 0;
    if (EVP_DecryptUpdate(s->ctx, buf + done, &len, buf + done, piece) != 1 || len != piece)
      return -1;
    done += (size_t)piece;
  }
  return 0;
}

int wsp__open_finish(wsp__seal_t *s, const unsigned char tag[WSP__TAG]) {
  unsigned char t[WSP__TAG], sink[16];
  int len = 0;
  memcpy(t, tag, sizeof t);
  return EVP_CIPHER_CTX_ctrl(s->ctx, EVP_CTRL_GCM_SET_TAG, WSP__TAG, t) == 1 &&
                 EVP_DecryptFinal_ex(s->ctx, sink, &len) == 1
             ? 0
             : -1;
}
