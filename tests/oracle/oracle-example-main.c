/* oracle-example-main.c: an example program (examples/, its main renamed example_main and its
 * calls wrapped by oracle-wrap.h) run unchanged under the differential oracle, with its
 * default arguments: it must still succeed, and the engine and the model must agree after
 * each of its calls (the first GS_ORACLE_MAX_PROBES of them). */
#include "oracle.h"

int example_main(int argc, char **argv);

int main(int argc, char **argv) {
  (void)argc;
  oracle *o = oracle_begin_program(argv);
  char *args[] = {argv[0], NULL};
  return oracle_end_program(o, example_main(1, args));
}
