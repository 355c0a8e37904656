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

/* ---- modified Bessel functions of the first kind (i0, i1 and their scaled forms) --------- */

/* exp(-|x|) I_nu(x) for nu 0 or 1. Up to |x| = 30 the power series
 * I_nu(x) = (x/2)^nu sum (x^2/4)^k / (k! (k + nu)!), whose terms are all positive (no
 * cancellation: a few ulps), scaled after; beyond, the asymptotic expansion
 * e^-x I_nu(x) ~ (2 pi x)^-1/2 sum (-1)^k prod_{j<=k} (4 nu^2 - (2j - 1)^2) / (k! (8x)^k),
 * whose terms fall below double's precision long before they start to grow. I1 is odd. */
static double scaled_bessel_i(int nu, double x) {
  double ax = fabs(x), r;
  if (isnan(x))
    return x;
  if (ax <= 30.0) {
    double q = ax * ax / 4, term = nu ? ax / 2 : 1.0, sum = term;
    for (int k = 1; k < 500 && term > sum * 1e-17; k++) {
      term *= q / ((double)k * (double)(k + nu));
      sum += term;
    }
    r = sum * exp(-ax);
  } else if (isinf(ax)) {
    r = 0.0;
  } else {
    double mu = 4.0 * nu * nu, term = 1.0, sum = 1.0;
    for (int k = 1; k < 40; k++) {
      term *= -(mu - (2.0 * k - 1) * (2.0 * k - 1)) / (k * 8.0 * ax);
      sum += term;
      if (fabs(term) < 1e-17 * fabs(sum))
        break;
    }
    r = sum / sqrt(2 * PI * ax);
  }
  return nu && x < 0 ? -r : r;
}

double gs__i0e(double x) { return scaled_bessel_i(0, x); }
double gs__i1e(double x) { return scaled_bessel_i(1, x); }
/* Unscaled: the scaled value times exp(|x|), which overflows to inf past |x| = 709.78 (a
 * little before I0 itself does), as torch's Cephes kernels do. */
double gs__i0(double x) { return gs__i0e(x) * exp(fabs(x)); }
double gs__i1(double x) { return gs__i1e(x) * exp(fabs(x)); }

/* erfcx(x) = exp(x^2) erfc(x), the scaled complementary error function. Above x = 26, where
 * erfc underflows, its asymptotic series 1 / (x sqrt pi) (1 - 1/(2x^2) + 3/(2x^2)^2 - ...);
 * below, exp(x^2) with x^2 split exactly (x = hi + lo, hi of 24 bits, so hi^2 is exact and
 * the exponent loses no digits to the rounding of x^2) times erfc. Overflows to inf below
 * about -26.6, as torch's. */
double gs__erfcx(double x) {
  if (isnan(x))
    return x;
  if (x > 26.0) {
    if (isinf(x))
      return 0.0;
    double z = 1.0 / (2 * x * x), term = 1.0, sum = 1.0;
    for (int k = 1; k < 12; k++) {
      term *= -(2.0 * k - 1) * z;
      sum += term;
    }
    return sum / (x * 1.77245385090551602730); /* sqrt(pi) */
  }
  if (x < -26.7)
    return INFINITY;
  double hi = (double)(float)x, lo = x - hi;
  return exp(hi * hi) * exp(lo * (2 * hi + lo)) * erfc(x);
}
