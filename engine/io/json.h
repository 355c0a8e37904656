/* json.h: the strict JSON reader behind safetensors headers, and the string writer for them.
 *
 * The reader is a cursor with one function per piece (a character, a string, an integer, an
 * array of integers), not a tree: each format walks its own header with the pieces it expects
 * and refuses the rest, which is what keeps it strict. npy.c walks the Python dict literal of
 * a .npy header with the same cursor. Every failure is reported as "header JSON at byte N:
 * expected X, found Y", N counted from the start of the file.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io-impl.h"

typedef struct gs__json {
  const char *s;
  size_t len, pos;
  size_t base;    /* file offset of s[0], for messages */
  const char *fn; /* the public call errors are reported as */
} gs__json;

/* Reports "expected <expected>, found <the byte at pos>"; always false, so that a caller can
 * return it. */
bool gs__json_fail(const gs__json *p, const char *expected);
/* Skips spaces, tabs and line ends. */
void gs__json_skip_space(gs__json *p);
/* Skips space, then consumes c; false after reporting expected. */
bool gs__json_char(gs__json *p, char c, const char *expected);
/* Consumes open (after space) and, when the object or array is empty, its close: *more says
 * whether members follow, as gs__json_next does after each one. false after reporting
 * expected. */
bool gs__json_open(gs__json *p, char open, char close, bool *more, const char *expected);
/* After a member of an object or array: true and *more for ',', true and !*more for close. */
bool gs__json_next(gs__json *p, char close, bool *more, const char *expected);
/* A string into a malloc'd, NUL-terminated UTF-8 buffer (*out), escapes decoded; \u0000 is
 * refused, because names and values are C strings. */
bool gs__json_string(gs__json *p, char **out, const char *expected);
/* A non-negative integer without leading zeros, below 2^63. */
bool gs__json_uint(gs__json *p, int64_t *out);
/* [int, ...] with at most max elements, their count in *n; what names the array. */
bool gs__json_uint_array(gs__json *p, int64_t *out, int max, int *n, const char *what);

/* Appends s as a JSON string literal: quotes, backslashes and control characters escaped;
 * other bytes (UTF-8) as they are. */
void gs__json_put_string(gs__sbuf *b, const char *s);
