/* special-functions.c: the scalar special functions the elementwise kernels call that C's
 * libm lacks or offers only in a thread-unsafe form: erfinv, digamma (psi), polygamma (its
 * derivatives: trigamma by reflection and recurrence, higher orders through the Hurwitz zeta
 * function) and a reentrant lgamma. Each is computed in double; the f32
 * kernels round the result. Values at poles and outside the domain are torch 1.13's:
 * digamma(+0) = -inf, digamma(-0) = +inf, NaN at the negative integers; erfinv(+-1) = +-inf
 * and NaN beyond. */
#define _DEFAULT_SOURCE /* lgamma_r */
#include <math.h>

#include "ops-impl.h"

#define PI 3.14159265358979323846
#define TWO_OVER_SQRT_PI 1.12837916709551257390

double gs__lgamma(double x) {
  int sign;
  return lgamma_r(x, &sign); /* lgamma writes the global signgam: not for threads */
}

/* Giles' single-precision approximation ("Approximating the erfinv function", 2010), then
 * Newton steps on erf (erfc in the tails, where 1 - |y| keeps the digits erf loses) until the
 * step is below double's epsilon: two in the middle, a few more in the far tail. */
double gs__erfinv(double y) {
  if (!(y >= -1 && y <= 1))
    return NAN;
  if (y == 1 || y == -1)
    return copysign(HUGE_VAL, y);
  double w = -log((1.0 - y) * (1.0 + y)), x;
  if (w < 5.0) {
    w -= 2.5;
    x = 2.81022636e-08;
    x = 3.43273939e-07 + x * w;
    x = -3.5233877e-06 + x * w;
    x = -4.39150654e-06 + x * w;
    x = 0.00021858087 + x * w;
    x = -0.00125372503 + x * w;
    x = -0.00417768164 + x * w;
    x = 0.246640727 + x * w;
    x = 1.50140941 + x * w;
  } else {
    w = sqrt(w) - 3.0;
    x = -0.000200214257;
    x = 0.000100950558 + x * w;
    x = 0.00134934322 + x * w;
    x = -0.00367342844 + x * w;
    x = 0.00573950773 + x * w;
    x = -0.0076224613 + x * w;
    x = 0.00943887047 + x * w;
    x = 1.00167406 + x * w;
    x = 2.83297682 + x * w;
  }
  x *= y;
  /* In the tails Newton runs on log(erfc(|x|)) - log(1 - |y|), nearly linear there, rather
   * than on erfc itself, whose exponential fall makes a step from a poor start crawl. */
  double tail = 1.0 - fabs(y), log_tail = log(tail);
  for (int step = 0; step < 8; step++) {
    double slope = TWO_OVER_SQRT_PI * exp(-x * x), dx;
    if (fabs(y) > 0.5) {
      double e = erfc(fabs(x));
      dx = copysign(1.0, y) * (log_tail - log(e)) * e / slope;
    } else {
      dx = (erf(x) - y) / slope;
    }
    x -= dx;
    if (fabs(dx) <= 1e-16 * fabs(x))
      break;
  }
  return x;
}

/* psi(x): reflection below 0, the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the
 * asymptotic series (next term below 3e-14 relative there). */
double gs__digamma(double x) {
  if (x == 0)
    return copysign(INFINITY, -x);
  if (x < 0) {
    if (x == floor(x))
      return NAN;
    return gs__digamma(1.0 - x) - PI / tan(PI * x);
  }
  double shift = 0;
  while (x < 10) {
    shift -= 1.0 / x;
    x += 1;
  }
  double f = 1.0 / (x * x);
  double series =
      f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 + f * (-1.0 / 132)))));
  return shift + log(x) - 0.5 / x + series;
}

/* psi'(x): reflection psi'(1 - x) + psi'(x) = pi^2 / sin^2(pi x) below 0 (huge, not infinite,
 * at the negative integers, as torch's polygamma(1, x)), the recurrence psi'(x) = psi'(x + 1)
 * + 1/x^2 up to x >= 10, then the asymptotic series. */
static double trigamma(double x) {
  if (x == 0)
    return INFINITY;
  if (x < 0) {
    double s = sin(PI * x);
    return PI * PI / (s * s) - trigamma(1.0 - x);
  }
  double shift = 0;
  while (x < 10) {
    shift += 1.0 / (x * x);
    x += 1;
  }
  double r = 1.0 / x, f = r * r;
  double series =
      r + f / 2 +
      r * f * (1.0 / 6 + f * (-1.0 / 30 + f * (1.0 / 42 + f * (-1.0 / 30 + f * 5.0 / 66))));
  return shift + series;
}

/* The Hurwitz zeta function sum over k >= 0 of (q + k)^-s, for s > 1: the first terms summed
 * until q + k passes 9 (at least 9 of them), then the Euler-Maclaurin tail with the Bernoulli
 * numbers (B_2j / (2j)! below) up to j = 12. Infinite at q = 0 and the negative integers; a
 * negative q otherwise sums its terms as they come (s is an integer here). */
static double hurwitz_zeta(double s, double q) {
  static const double bernoulli_over_factorial[12] = {1.0 / 12,
                                                      -1.0 / 720,
                                                      1.0 / 30240,
                                                      -1.0 / 1209600,
                                                      1.0 / 47900160,
                                                      -1.0 / 1.8924375803183791606e9,
                                                      1.0 / 7.47242496e10,
                                                      -1.0 / 2.950130727918164224e12,
                                                      1.0 / 1.1646782814350067249e14,
                                                      -1.0 / 4.5979787224074726105e15,
                                                      1.0 / 1.8152105401943546773e17,
                                                      -1.0 / 7.1661652561756670113e18};
  if (q <= 0 && q == floor(q))
    return INFINITY;
  double sum = pow(q, -s), a = q;
  for (int k = 0; k < 9 || a <= 9; k++) {
    a += 1;
    double term = pow(a, -s);
    sum += term;
    if (fabs(term / sum) < 1e-17)
      return sum;
  }
  /* the tail from a on: a^(1-s) / (s - 1) - a^-s / 2 + sum_j B_2j/(2j)! s(s+1)..(s+2j-2)
   * a^(-s-2j+1) */
  double tail = pow(a, 1 - s) / (s - 1) - 0.5 * pow(a, -s);
  double rising = s, power = pow(a, -s - 1);
  for (int j = 0; j < 12; j++) {
    double term = bernoulli_over_factorial[j] * rising * power;
    tail += term;
    if (fabs(term / (sum + tail)) < 1e-17)
      break;
    rising *= (s + 2 * j + 1) * (s + 2 * j + 2);
    power /= a * a;
  }
  return sum + tail;
}

double gs__polygamma(int n, double x) {
  if (n == 0)
    return gs__digamma(x);
  if (n == 1)
    return trigamma(x);
  /* psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) */
  double factorial = exp(gs__lgamma(n + 1.0));
  return (n % 2 ? 1.0 : -1.0) * factorial * hurwitz_zeta(n + 1.0, x);
}
