/* oracle-tour-main.c: a guided tour's program (examples/tours, its main renamed tour_main and
 * its calls wrapped by oracle-wrap.h) run under the differential oracle: every call it makes
 * is probed, and the tour must still pass its own checks. */
#include "oracle.h"

int tour_main(void);

int main(int argc, char **argv) {
  (void)argc;
  oracle *o = oracle_begin_program(argv);
  return oracle_end_program(o, tour_main());
}
