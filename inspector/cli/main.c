/* main.c: `gradscope`, the command-line side of Gradscope: record a program's event log and
 * read one back (stats, dump, DOT graph, graph image, memory timeline PNG, Chrome trace) or
 * compare two (diff). Each
 * command lives in its own file; the analysis they print lives in inspector/model/ (and the
 * drawing in inspector/graph/ and inspector/timeline/), shared with the GTK inspector. */
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "gs-config.h"

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} command;

static const command commands[] = {
    {"record", cli_record, "run a program with tracing on: record [-o FILE] -- PROGRAM ARGS..."},
    {"stats", cli_stats, "events by kind, scopes, peak memory, leaks and errors of a log"},
    {"dump", cli_dump, "one line (or with --jsonl one JSON object) per event"},
    {"export-dot", cli_export_dot, "the autograd graph at an event, as Graphviz DOT"},
    {"export-graph", cli_export_graph, "the autograd graph at an event, drawn as PNG or SVG"},
    {"export-timeline", cli_export_timeline,
     "the memory timeline as a PNG: export-timeline FILE -o timeline.png"},
    {"chrome-trace", cli_chrome_trace, "convert to Chrome trace / Perfetto JSON"},
    {"explain", cli_explain,
     "the inspector's sentence for each event (or one: --at N), in the user's language; "
     "--tour NAME: a guided tour"},
    {"state", cli_state,
     "what the inspector believes was alive after an event: state FILE [--at N] [--json]"},
    {"diff", cli_diff,
     "compare two runs: diff A B [--json] [--fail-peak-increase=SIZE] [--fail-live-increase=N]"},
};

static void usage(FILE *out) {
  fprintf(out, "Usage: gradscope COMMAND [OPTIONS] [FILE]\n\n"
               "Record and read Gradscope event logs.\n\nCommands:\n");
  for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
    fprintf(out, "  %-16s %s\n", commands[i].name, commands[i].summary);
  fprintf(out, "\nOptions:\n  --help      this text (gradscope COMMAND --help: the command's)\n"
               "  --version   the program and event log format versions\n");
}

int main(int argc, char **argv) {
  /* The user's character set, so GLib prints help and names in it (without this, "×N" in
   * --help came out as "?N"); numbers stay in the C locale, since JSON, DOT and the
   * name=value lines scripts read must not get decimal commas. */
  setlocale(LC_ALL, "");
  setlocale(LC_NUMERIC, "C");
  gs_config_init_i18n(); /* the model's sentences (explain, stats) in the user's language */
  if (argc < 2) {
    cli_error("no command given (see gradscope --help)");
    return 1;
  }
  const char *name = argv[1];
  if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(name, "--version") || !strcmp(name, "-V")) {
    printf("gradscope %s (event log format %d.%d)\n", GRADSCOPE_VERSION, GS_TRACE_VERSION_MAJOR,
           GS_TRACE_VERSION_MINOR);
    return 0;
  }
  for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
    if (!strcmp(name, commands[i].name)) {
      /* The command sees itself as argv[0], so its --help reads "gradscope stats ...". */
      g_autofree char *prgname = g_strdup_printf("gradscope %s", name);
      g_set_prgname(prgname);
      return commands[i].run(argc - 1, argv + 1);
    }
  cli_error("unknown command '%s' (see gradscope --help)", name);
  return 1;
}
