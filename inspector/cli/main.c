/* main.c: `gradscope`, the command-line side of Gradscope: record a program's event log and
 * read one back (stats, dump, DOT graph, graph image, memory timeline PNG, Chrome trace) or
 * compare two (diff). Each
 * command lives in its own file; the analysis they print lives in inspector/model/ (and the
 * drawing in inspector/graph/ and inspector/timeline/), shared with the GTK inspector. */
#include <glib/gi18n.h>
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

/* TRANSLATORS: `gradscope --help`: what each command does. Command names, options and the
 * words in capitals (FILE, PROGRAM, SIZE...) stay as they are: they are typed as shown. */
static const command commands[] = {
    {"record", cli_record, N_("run a program with tracing on: record [-o FILE] -- PROGRAM ARGS...")},
    {"stats", cli_stats,
     N_("events by kind, scopes, peak memory, leaks and errors of a log; of several ranks' "
        "logs (stats A B ...): each rank's figures and the slowest rank")},
    {"dump", cli_dump, N_("one line (or with --jsonl one JSON object) per event")},
    {"export-dot", cli_export_dot, N_("the autograd graph at an event, as Graphviz DOT")},
    {"export-graph", cli_export_graph, N_("the autograd graph at an event, drawn as PNG or SVG")},
    {"export-timeline", cli_export_timeline,
     N_("the memory timeline as a PNG: export-timeline FILE -o timeline.png")},
    {"chrome-trace", cli_chrome_trace, N_("convert to Chrome trace / Perfetto JSON")},
    {"explain", cli_explain,
     N_("the inspector's sentence for each event (or one: --at N), in the user's language; "
        "several ranks' logs: each line with its rank (or one: --rank R); --tour NAME: a "
        "guided tour")},
    {"state", cli_state,
     N_("what the inspector believes was alive after an event: state FILE [--at N] [--json]")},
    {"diff", cli_diff,
     N_("compare two runs: diff A B [--json] [--fail-peak-increase=SIZE] "
        "[--fail-live-increase=N]; two distributed runs' logs (A-0 A-1 B-0 B-1): rank by "
        "rank")},
};

/* In the user's language, as `explain` is: the names and options stay as typed. */
static void usage(FILE *out) {
  fprintf(out, "%s\n\n%s\n\n%s\n", _("Usage: gradscope COMMAND [OPTIONS] [FILE]"),
          _("Record and read Gradscope event logs."), _("Commands:"));
  for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
    fprintf(out, "  %-16s %s\n", commands[i].name, _(commands[i].summary));
  fprintf(out, "\n%s\n  --help      %s\n  --version   %s\n", _("Options:"),
          _("this text (gradscope COMMAND --help: the command's)"),
          _("the program and event log format versions"));
}

int main(int argc, char **argv) {
  /* The user's character set, so GLib prints help and names in it (without this, "×N" in
   * --help came out as "?N"); numbers stay in the C locale, since JSON, DOT and the
   * name=value lines scripts read must not get decimal commas. */
  /* A locale the system lacks (LANG=zh_CN.UTF-8 where only C.UTF-8 is generated, as in
   * many containers) leaves the C locale, where gettext ignores LANGUAGE and GLib prints
   * ASCII: C.UTF-8 instead keeps UTF-8 and lets LANGUAGE=zh_CN choose the messages. */
  if (!setlocale(LC_ALL, ""))
    setlocale(LC_ALL, "C.UTF-8");
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
