/* random.c: the generator, PyTorch 1.13's CPU generator rebuilt: a 32-bit Mersenne Twister
 * (mt19937) seeded from the low 32 bits of the seed, torch's 64-bit draw (two 32-bit numbers,
 * the first high), its double uniform and cached Box-Muller normal, the process-wide default
 * generator, and the state in torch.get_rng_state()'s byte layout. The tensor samplers built
 * on it are in random-tensors.c. */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "core-impl.h"

enum { MT_N = GS_MT19937_N, MT_M = 397 };

void gs_rng_seed(gs_rng *rng, uint64_t seed) {
  if (!rng)
    return;
  rng->seed = seed;
  rng->state[0] = (uint32_t)seed;
  for (uint32_t i = 1; i < MT_N; i++) {
    uint32_t prev = rng->state[i - 1];
    rng->state[i] = 1812433253u * (prev ^ (prev >> 30)) + i;
  }
  rng->left = 1; /* the first draw twists the freshly seeded state */
  rng->next = 0;
  rng->has_next_normal = false;
  rng->next_normal = 0.0;
}

/* Regenerates all 624 words at once (the Mersenne Twister's "twist"). */
static void twist(gs_rng *rng) {
  uint32_t *s = rng->state;
  for (int i = 0; i < MT_N; i++) {
    uint32_t y = (s[i] & 0x80000000u) | (s[(i + 1) % MT_N] & 0x7fffffffu);
    s[i] = s[(i + MT_M) % MT_N] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
  }
  rng->left = MT_N;
  rng->next = 0;
}

uint32_t gs_rng_next_u32(gs_rng *rng) {
  if (--rng->left <= 0)
    twist(rng);
  uint32_t y = rng->state[rng->next++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

uint64_t gs_rng_next_u64(gs_rng *rng) {
  uint64_t hi = gs_rng_next_u32(rng);
  uint64_t lo = gs_rng_next_u32(rng);
  return (hi << 32) | lo;
}

double gs_rng_uniform(gs_rng *rng) {
  return (double)(gs_rng_next_u64(rng) & ((1ull << 53) - 1)) * 0x1.0p-53;
}

/* torch's normal_distribution<double>: r from the second uniform, the angle from the first;
 * the cosine half is returned, the sine half kept. */
double gs_rng_normal(gs_rng *rng) {
  if (rng->has_next_normal) {
    rng->has_next_normal = false;
    return rng->next_normal;
  }
  double u1 = gs_rng_uniform(rng);
  double u2 = gs_rng_uniform(rng);
  double r = sqrt(-2.0 * log(1.0 - u2));
  double theta = 2.0 * M_PI * u1;
  rng->next_normal = r * sin(theta);
  rng->has_next_normal = true;
  return r * cos(theta);
}

/* ---- the default generator ------------------------------------------------------------ */

static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;
GS__FORK_GUARD_MUTEX(GS__FORK_RANK_RANDOM, default_lock)
static gs_rng default_rng;
static bool default_seeded;

gs_rng *gs__rng_acquire(gs_rng *rng) {
  if (rng)
    return rng;
  pthread_mutex_lock(&default_lock);
  if (!default_seeded) {
    gs_rng_seed(&default_rng, 67280421310721ull); /* PyTorch's default seed */
    default_seeded = true;
  }
  return &default_rng;
}

void gs__rng_release(gs_rng *rng, gs_rng *acquired) {
  if (!rng && acquired == &default_rng)
    pthread_mutex_unlock(&default_lock);
}

void gs_manual_seed(uint64_t seed) {
  pthread_mutex_lock(&default_lock);
  gs_rng_seed(&default_rng, seed);
  default_seeded = true;
  pthread_mutex_unlock(&default_lock);
}

void gs_get_rng_state(gs_rng *out) {
  if (!out)
    return;
  gs_rng *rng = gs__rng_acquire(NULL); /* seeds it with the default seed if it was not yet */
  *out = *rng;
  gs__rng_release(NULL, rng);
}

void gs_set_rng_state(const gs_rng *state) {
  if (!state)
    return;
  pthread_mutex_lock(&default_lock);
  default_rng = *state;
  default_seeded = true;
  pthread_mutex_unlock(&default_lock);
}

/* ---- torch's state bytes ---------------------------------------------------------------- */

/* Offsets in torch 1.13's CPUGeneratorImplState (x86-64 layout): the legacy TH generator
 * (seed, left, seeded, next, 624 state words widened to 64 bits, three doubles of the old
 * normal cache, its valid flag) and the float normal cache torch added after it. */
enum {
  ST_SEED = 0,
  ST_LEFT = 8,
  ST_SEEDED = 12,
  ST_NEXT = 16,
  ST_WORDS = 24,
  ST_NORMAL_X = ST_WORDS + 8 * MT_N,
  ST_NORMAL_Y = ST_NORMAL_X + 8,
  ST_NORMAL_RHO = ST_NORMAL_Y + 8,
  ST_NORMAL_VALID = ST_NORMAL_RHO + 8,
  ST_FLOAT_NORMAL = ST_NORMAL_VALID + 8, /* after 4 bytes of padding */
  ST_FLOAT_VALID = ST_FLOAT_NORMAL + 4,
};
_Static_assert(ST_FLOAT_VALID + 4 == GS_RNG_STATE_BYTES, "torch's state is 5056 bytes");

void gs_rng_state_save(const gs_rng *rng, uint8_t out[GS_RNG_STATE_BYTES]) {
  memset(out, 0, GS_RNG_STATE_BYTES);
  uint64_t next = rng->next;
  int32_t seeded = 1;
  memcpy(out + ST_SEED, &rng->seed, 8);
  memcpy(out + ST_LEFT, &rng->left, 4);
  memcpy(out + ST_SEEDED, &seeded, 4);
  memcpy(out + ST_NEXT, &next, 8);
  for (int i = 0; i < MT_N; i++) {
    uint64_t w = rng->state[i];
    memcpy(out + ST_WORDS + 8 * i, &w, 8);
  }
  if (rng->has_next_normal) {
    int32_t valid = 1;
    memcpy(out + ST_NORMAL_Y, &rng->next_normal, 8);
    memcpy(out + ST_NORMAL_VALID, &valid, 4);
  }
}

bool gs_rng_state_load(gs_rng *rng, const uint8_t *bytes, size_t size) {
  if (!rng || !bytes || size != GS_RNG_STATE_BYTES)
    return false;
  uint64_t next;
  int32_t left, valid;
  memcpy(&rng->seed, bytes + ST_SEED, 8);
  memcpy(&left, bytes + ST_LEFT, 4);
  memcpy(&next, bytes + ST_NEXT, 8);
  if (left < 1 || left > MT_N || next > MT_N)
    return false;
  rng->left = left;
  rng->next = (uint32_t)next;
  for (int i = 0; i < MT_N; i++) {
    uint64_t w;
    memcpy(&w, bytes + ST_WORDS + 8 * i, 8);
    rng->state[i] = (uint32_t)w;
  }
  memcpy(&valid, bytes + ST_NORMAL_VALID, 4);
  rng->has_next_normal = valid != 0;
  rng->next_normal = 0.0;
  if (rng->has_next_normal)
    memcpy(&rng->next_normal, bytes + ST_NORMAL_Y, 8);
  return true;
}
